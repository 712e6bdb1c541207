package citations_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/citations"
	"github.com/researchd/researchd/engine/enginetest"
	"github.com/researchd/researchd/engine/sources"
)

const wrapped = `Heat pumps cost between 9,000 and 14,000 euros
to install in a typical detached house, accord-
ing to the 2024 survey. Running costs fell by 12%
after the tariff change.
1.2 A Flex membership costs 46 euros.`

func TestQuoteInText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		quote string
		want  bool
	}{
		{"verbatim one line", "Heat pumps cost between 9,000 and 14,000 euros", true},
		{"across a line wrap", "14,000 euros to install in a typical detached house", true},
		{"re-wrapped and extra whitespace", "Heat   pumps cost\n\tbetween 9,000\r\nand 14,000 euros", true},
		{"hyphenated wrap joined", "according to the 2024 survey", true},
		{"hyphenated wrap as in the source", "accord- ing to the 2024 survey", true},
		{"case and punctuation", "heat pumps cost between 9,000 and 14,000 euros to install", true},
		{"typographic quotes and escapes", "“Running costs fell by 12\\%”", true},
		{"an escaped clause number", "1\\.2 A Flex membership costs 46 euros.", true}, // as EscapeMarkdown writes it
		{"another clause number", "1.3 A Flex membership costs 46 euros.", false},
		{"ellipsis joins pieces in order", "Heat pumps cost … according to the 2024 survey", true},
		{"three dots", "Heat pumps cost... fell by 12%", true},
		{"pieces out of order", "fell by 12% … Heat pumps cost", false},
		{"number differs", "Running costs fell by 15%", false},
		{"thousands separator differs", "between 9000 and 14,000 euros", false},
		{"year differs", "according to the 2023 survey", false},
		{"word changed", "Heat pumps cost between 9,000 and 14,000 dollars", false},
		{"invented", "Heat pumps pay for themselves in three years", false},
		{"empty", " … ", false},
		{"partial word is not a word", "eat pumps cost", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, citations.QuoteInText(tt.quote, wrapped))
		})
	}
}

// A workspace with one stored web source and one input file, and a report quoting both.
func TestVerifyWorkspaceReport(t *testing.T) {
	t.Parallel()
	repo := enginetest.Workspace(t, map[string][]byte{"notes.md": []byte("# Notes\n\nInstallers quote 9,000 euros\nfor a small house.\n")})
	srcs, err := sources.Open(repo, nil)
	require.NoError(t, err)
	_, err = srcs.Save(sources.Source{Origin: "https://example.com/survey", Kind: sources.KindWeb, Text: wrapped})
	require.NoError(t, err)
	report := strings.Join([]string{
		"# Heat pumps", "",
		"Costs range from 9,000 to 14,000 euros [1].", "",
		"> Heat pumps cost between 9,000 and 14,000 euros to install", ">", "> — [Survey](https://example.com/survey) [1]", "",
		"Running costs fell [1].", "",
		"> Running costs fell by 15% after the tariff change.", ">", "> — <https://example.com/survey> [1]", "",
		"Installers agree [2].", "",
		"> Installers quote 9,000 euros for a small house.", ">", "> — `input_files/notes.md`, lines 3–4 [2]", "",
		"> Made up evidence.", ">", "> — `corpus/elsewhere.md`, line 1 [3]", "",
		"> A plain block quote is not a citation.", "",
		"```", "> — `corpus/in-code.md`", "```", "",
	}, "\n")
	require.NoError(t, repo.WriteFile(engine.ReportPath, []byte(report)))

	v, err := citations.VerifyWorkspace(repo, nil)
	require.NoError(t, err)
	require.Equal(t, 4, v.Total)
	require.Equal(t, 2, v.Verified)
	require.Len(t, v.Failed, 2)
	require.Equal(t, "https://example.com/survey", v.Failed[0].Source)
	require.Contains(t, v.Failed[0].Reason, "numbers")
	require.Equal(t, "corpus/elsewhere.md", v.Failed[1].Source)
	require.Contains(t, v.Failed[1].Reason, "no stored copy")

	got, err := enginetest.ReadWorkingFile(repo, engine.ReportPath)
	require.NoError(t, err)
	require.Equal(t, v.Report, got)
	require.NotContains(t, got, "15%")
	require.NotContains(t, got, "Made up evidence")
	require.Contains(t, got, "> ⚠ Unverified quote removed: it could not be verified against `https://example.com/survey` (the quote's words are in the source but its numbers are not). [1]")
	require.Contains(t, got, "> Installers quote 9,000 euros for a small house.")
	require.Contains(t, got, "> A plain block quote is not a citation.")

	// Verifying again (a continuation) changes nothing and still counts the removed quotes.
	again, err := citations.VerifyWorkspace(repo, nil)
	require.NoError(t, err)
	require.Equal(t, got, again.Report)
	require.Equal(t, 4, again.Total)
	require.Equal(t, 2, again.Verified)
	require.Empty(t, again.Failed)
}

func TestVerifyWorkspaceBasis(t *testing.T) {
	t.Parallel()
	schema := map[string]any{
		"type": "object", "required": []any{"cost", "verdict"},
		"properties": map[string]any{
			"cost":     map[string]any{"type": "number"},
			"verdict":  map[string]any{"type": []any{"string", "null"}},
			"country":  map[string]any{"type": "string"},
			"subsidy":  map[string]any{"anyOf": []any{map[string]any{"type": "number"}, map[string]any{"type": "null"}}},
			"untested": map[string]any{"type": "string"},
		},
	}
	tests := []struct {
		name        string
		output      map[string]any
		basis       engine.Basis
		wantOutput  map[string]any
		wantConf    map[string]string
		unsupported []string
		errContains string
	}{
		{
			name:   "supported fields keep their value; unsupported are nulled or dropped",
			output: map[string]any{"cost": 9000.0, "verdict": "worth it", "country": "DE", "subsidy": 0.5},
			basis: engine.Basis{
				"cost":    {Citations: []engine.BasisCitation{{Source: "S1", Quote: "between 9,000 and 14,000 euros"}}, Confidence: "high"},
				"verdict": {Citations: []engine.BasisCitation{{Source: "S1", Quote: "they always pay off"}}, Confidence: "high"},
				"country": {Citations: []engine.BasisCitation{}, Confidence: "medium"},
				"subsidy": {Confidence: "sure"},
			},
			wantOutput:  map[string]any{"cost": 9000.0, "verdict": nil, "subsidy": nil},
			wantConf:    map[string]string{"cost": "high", "verdict": "low", "country": "low", "subsidy": "low", "untested": "low"},
			unsupported: []string{"country", "subsidy", "verdict"},
		},
		{
			name:   "a failed citation beside a verified one lowers high to medium",
			output: map[string]any{"cost": 9000.0, "verdict": nil},
			basis: engine.Basis{"cost": {Citations: []engine.BasisCitation{
				{Source: "https://example.com/survey", Quote: "Heat pumps cost between 9,000"},
				{Source: "S1", Quote: "cost 8,000"},
			}, Confidence: "high"}},
			wantOutput: map[string]any{"cost": 9000.0, "verdict": nil},
			wantConf:   map[string]string{"cost": "medium", "verdict": "low", "country": "low", "subsidy": "low", "untested": "low"},
		},
		{
			name:        "a required non-nullable field without support fails, naming it",
			output:      map[string]any{"cost": 12.0, "verdict": "x"},
			basis:       engine.Basis{"cost": {Citations: []engine.BasisCitation{{Source: "S1", Quote: "costs 12 euros"}}, Confidence: "high"}},
			errContains: `required field "cost"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			repo := enginetest.Workspace(t, nil)
			srcs, err := sources.Open(repo, nil)
			require.NoError(t, err)
			_, err = srcs.Save(sources.Source{Origin: "https://example.com/survey", Kind: sources.KindWeb, Text: wrapped})
			require.NoError(t, err)
			out, err := json.Marshal(tt.output)
			require.NoError(t, err)
			require.NoError(t, repo.WriteFile(engine.StructuredOutputPath, out))
			require.NoError(t, engine.WriteBasis(repo, tt.basis))

			v, err := citations.VerifyWorkspace(repo, schema)
			if tt.errContains != "" {
				var ee *engine.Error
				require.ErrorAs(t, err, &ee)
				require.Equal(t, engine.CodeStructuredOutputInvalid, ee.Code)
				require.Contains(t, ee.Message, tt.errContains)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.wantOutput, v.StructuredOutput)
			conf := map[string]string{}
			for f, fb := range v.Basis {
				conf[f] = fb.Confidence
				require.NotNil(t, fb.Citations, f)
			}
			require.Equal(t, tt.wantConf, conf)
			require.ElementsMatch(t, tt.unsupported, v.Unsupported)
			saved, err := enginetest.ReadWorkingFile(repo, engine.StructuredOutputPath)
			require.NoError(t, err)
			require.JSONEq(t, enginetest.MustJSON(t, tt.wantOutput), saved)
			basis, err := engine.ReadBasis(repo)
			require.NoError(t, err)
			require.Equal(t, v.Basis, basis)
		})
	}
}

func TestVerifyWorkspaceWithoutBasisLeavesOutput(t *testing.T) {
	t.Parallel()
	repo := enginetest.Workspace(t, nil)
	require.NoError(t, repo.WriteFile(engine.StructuredOutputPath, []byte(`{"cost": 1}`)))
	v, err := citations.VerifyWorkspace(repo, map[string]any{"type": "object", "required": []any{"cost"}})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"cost": 1.0}, v.StructuredOutput)
	require.Nil(t, v.Basis)
	require.Zero(t, v.Total)
}

// BenchmarkVerifyWorkspace: a report of 40 quotes (half of them invented, with changed numbers)
// over 10 stored sources of about 200 KB each.
func BenchmarkVerifyWorkspace(b *testing.B) {
	repo := enginetest.Workspace(b, nil)
	srcs, err := sources.Open(repo, nil)
	require.NoError(b, err)
	var report strings.Builder
	report.WriteString("# Bench\n\n")
	for s := range 10 {
		var text strings.Builder
		for i := range 2000 {
			fmt.Fprintf(&text, "Line %d of source %d says the measured value was %d.%d units\nin the %d survey of region %d.\n", i, s, i*7, s, 2000+i%25, i%13)
		}
		st, err := srcs.Save(sources.Source{Origin: fmt.Sprintf("https://example.com/s%d", s), Kind: sources.KindWeb, Text: text.String()})
		require.NoError(b, err)
		for q := range 4 {
			i := 500*q + 17
			fmt.Fprintf(&report, "> the measured value was %d.%d units in the %d survey\n>\n> — <%s> [%d]\n\n", i*7, s, 2000+i%25, st.Origin, s+1)
			fmt.Fprintf(&report, "> the measured value was %d.%d units in the %d survey\n>\n> — <%s> [%d]\n\n", i*7+1, s, 2000+i%25, st.Origin, s+1)
		}
	}
	for b.Loop() {
		require.NoError(b, repo.WriteFile(engine.ReportPath, []byte(report.String())))
		v, err := citations.VerifyWorkspace(repo, nil)
		require.NoError(b, err)
		require.Equal(b, 80, v.Total)
		require.Equal(b, 40, v.Verified)
	}
}
