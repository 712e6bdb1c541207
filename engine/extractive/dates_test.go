package extractive

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFindDate(t *testing.T) {
	for _, tc := range []struct {
		text, want string
		ok         bool
	}{
		{"Its collapse in a storm on 28 December 1879 remains famous.", "1879-12-28", true},
		{"The bridge opened on June 1, 1878, after six years.", "1878-06-01", true},
		{"Signed on the 3rd of Sept. 2021 in Oslo.", "2021-09-03", true},
		{"Released 2024-02-29 and patched on 1 March 2024.", "2024-02-29", true}, // the first date
		{"It opened in June 1878.", "", false},                                   // no day: no date
		{"On 31 June 2020 nothing happened.", "", false},                         // not a day of June
		{"May 2024 was warm.", "", false},
	} {
		got, ok := findDate(tc.text)
		require.Equal(t, tc.ok, ok, tc.text)
		require.Equal(t, tc.want, got, tc.text)
	}
}

func TestYearsIn(t *testing.T) {
	require.Equal(t, []string{"2024", "2025"}, yearsIn("EBIT margin for 2024 (the K2024 model) and the outlook for 2025, 42 units"))
	require.Empty(t, yearsIn("Revenue of 6,820 million"))
}
