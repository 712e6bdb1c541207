package extractive

import "testing"

func TestNumberFitPrefersTheFieldsUnit(t *testing.T) {
	t.Parallel()
	text := "Solar panel efficiency in 2024 reached 24 percent for commercial modules at $0.31 per watt."
	pick := func(name string) string {
		best, bestScore := "", -1e9
		for _, loc := range reNumber.FindAllStringIndex(text, -1) {
			lit := text[loc[0]:loc[1]]
			if s := numberFit(name, text, loc[0], loc[1], lit); s > bestScore {
				best, bestScore = lit, s
			}
		}
		return best
	}
	for _, tc := range []struct{ field, want string }{
		{"efficiency_percent", "24"},
		{"price_usd", "0.31"},
		{"year", "2024"},
	} {
		if got := pick(tc.field); got != tc.want {
			t.Errorf("%s: picked %s, want %s", tc.field, got, tc.want)
		}
	}
}
