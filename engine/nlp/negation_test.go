package nlp

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStatesAll(t *testing.T) {
	value := []string{Stem("rtk"), Stem("satellite"), Stem("navigation")}
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"The K2 finds its position with satellite navigation corrected by a reference station (RTK).", true},
		{"It uses satellite navigation.", false},                               // RTK missing
		{"It does not use RTK satellite navigation; it uses a camera.", false}, // denied
		{"RTK needs a clear sky. Satellite navigation works anywhere.", false}, // not in one clause
		{"It relies on navigation by satellite with RTK corrections.", true},
	} {
		require.Equal(t, tc.want, StatesAll(tc.text, value), tc.text)
	}
}
