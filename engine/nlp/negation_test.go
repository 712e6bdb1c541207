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

// What a passage names only as replaced ("instead of", "rather than") it does not state.
func TestStatesPhraseNotWhatIsReplaced(t *testing.T) {
	read, snap := []string{Stem("read"), Stem("committed")}, []string{Stem("snapshot"), Stem("isolation")}
	text := "New transactions now run under snapshot isolation instead of read committed."
	require.True(t, StatesPhrase(text, snap))
	require.False(t, StatesPhrase(text, read))
	require.False(t, StatesPhrase("It stores data in Postgres rather than read committed tables.", read))
}
