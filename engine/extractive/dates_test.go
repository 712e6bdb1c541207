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

// A day and month without a year take the year of the document's own date.
func TestFindDayMonth(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ text, year, want string }{
		{"Firmware 2.1.6, released on 9 October, raises the timer.", "2026", "2026-10-09"},
		{"Ask for a payment plan by October 31.", "2026", "2026-10-31"},
		{"It opened on 20 June 1887.", "2026", ""}, // a full date is findDate's
		{"Released on 9 October.", "", ""},
		{"Released in October.", "2026", ""},
	} {
		got, ok := findDayMonth(tc.text, func() string { return tc.year })
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("findDayMonth(%q, %q) = %q, %v; want %q", tc.text, tc.year, got, ok, tc.want)
		}
	}
}
