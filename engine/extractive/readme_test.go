package extractive

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEEffortsTable: the extractive engine's efforts table in the README is the depths table.
func TestREADMEEffortsTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	readme := string(b)
	i := strings.Index(readme, "\n### The extractive engine\n")
	require.GreaterOrEqual(t, i, 0, "the README has an extractive engine section")
	section := readme[i:]
	j := strings.Index(section, "\n| effort | sub-questions researched |")
	require.GreaterOrEqual(t, j, 0, "the section has the efforts table")
	rows := map[string][]string{}
	for _, line := range strings.Split(section[j+1:], "\n")[2:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows[cells[0]] = cells[1:]
	}
	require.Len(t, rows, len(depths))
	for effort, d := range depths {
		budget := fmt.Sprintf("%d min", int(d.Budget.Minutes()))
		if d.Site {
			budget += ", then the static site"
		}
		want := []string{fmt.Sprint(d.SubQuestions), fmt.Sprint(d.Sources), fmt.Sprintf("%d + %d", d.Answers, d.Support),
			fmt.Sprint(d.Queries), fmt.Sprint(d.Pages), budget}
		require.Equal(t, want, rows[effort], effort)
	}
}
