package extractive

import (
	"fmt"
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

// A day and month without a year take the year of the document's own date; a full date keeps
// its own; ranges are marked start and end.
func TestDateMentions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		text, year string
		want       []string
	}{
		{"Firmware 2.1.6, released on 9 October, raises the timer.", "2026", []string{"2026-10-09/0"}},
		{"Ask for a payment plan by October 31.", "2026", []string{"2026-10-31/0"}},
		{"It opened on 20 June 1887.", "2026", []string{"1887-06-20/0"}},
		{"Released on 9 October.", "", nil},
		{"Released in October.", "2026", nil},
		{"Friday 11 – Sunday 13 September 2026, then 1 October.", "2025", []string{"2026-09-11/-1", "2026-09-13/1", "2025-10-01/0"}},
		{"September 11–13, 2026", "", []string{"2026-09-11/-1", "2026-09-13/1"}},
		{"Open from 2 March 2026 to 30 April 2026.", "", []string{"2026-03-02/-1", "2026-04-30/1"}},
	} {
		var got []string
		for _, m := range dateMentions(tc.text, func() string { return tc.year }) {
			got = append(got, fmt.Sprintf("%s/%d", m.iso, m.inRange))
		}
		require.Equal(t, tc.want, got, tc.text)
	}
}
