package llm_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/llm"
)

// systemMessage is the content of the system message of a recorded request.
func systemMessage(t *testing.T, body map[string]any) string {
	t.Helper()
	msgs, _ := body["messages"].([]any)
	require.NotEmpty(t, msgs)
	first, _ := msgs[0].(map[string]any)
	require.Equal(t, "system", first["role"])
	s, _ := first["content"].(string)
	return s
}

func toolNames(body map[string]any) []string {
	var out []string
	tools, _ := body["tools"].([]any)
	for _, x := range tools {
		fn, _ := x.(map[string]any)["function"].(map[string]any)
		name, _ := fn["name"].(string)
		out = append(out, name)
	}
	return out
}

func TestOpenAIRunsAsExpert(t *testing.T) {
	t.Parallel()
	reg, granted := mcpRegistry(t)
	cs := newChatServer(t, toolCalls("", call{"sec__echo", `{"text":"hi"}`}), answer(finalReport))
	v := 3
	res, sink, err := runAgent(t, newOpenAI(t, cs, nil), engine.Input{
		Expert:       &engine.ExpertInfo{ID: "5d9c2f8e-0a1b-4c3d-9e8f-7a6b5c4d3e2f", Name: "Fjord Analyst", Version: &v},
		SystemPrompt: "You are FJORD-ANALYST-7. Always quote ferry counts.",
		Skills:       []engine.Skill{{Name: "fact-checking", Content: "---\nname: fact-checking\n---\nCHECK-EVERY-NUMBER twice."}},
		Tools:        granted[:1], ToolCaller: reg, RequiredTools: []string{"sec.echo"},
	})
	require.NoError(t, err)
	reqs := cs.recorded()
	require.Len(t, reqs, 3) // the tool call, the notes, the report
	sys := systemMessage(t, reqs[0].Body)
	require.Contains(t, sys, "Fjord Analyst")
	require.Contains(t, sys, "You are FJORD-ANALYST-7. Always quote ferry counts.")
	require.Contains(t, sys, "=== Skill: fact-checking ===")
	require.Contains(t, sys, "CHECK-EVERY-NUMBER twice.")
	require.Less(t, strings.Index(sys, "FJORD-ANALYST-7"), strings.Index(sys, "careful research agent"), "the expert's prompt comes first")
	require.Contains(t, toolNames(reqs[0].Body), "sec__echo")
	require.Equal(t, []string{"sec.echo"}, res.RequiredTools.Succeeded)

	var expertEv *engine.Event
	for _, ev := range sink.OfKind(engine.KindStatus) {
		if ev.Title == "Expert" {
			expertEv = &ev
		}
	}
	require.NotNil(t, expertEv)
	require.Equal(t, 3, expertEv.Data["expert_version"])
	require.Equal(t, []string{"fact-checking"}, expertEv.Data["skills"])
	require.Equal(t, []string{"sec.echo"}, expertEv.Data["tools"])
}

func TestOpenAISpendCeiling(t *testing.T) {
	t.Parallel()
	limit := 0.5
	for _, tc := range []struct {
		name     string
		prices   *llm.TokenPrices
		steps    int // scripted research steps (tool calls, then notes)
		requests int
		title    string
	}{
		// Each scripted call uses 100 prompt + 20 completion tokens: 0.6 USD at these prices.
		// enforced: the first call passes the ceiling, so the report is written next, without tools.
		{"enforced", &llm.TokenPrices{InputPerMTok: 5000, OutputPerMTok: 5000}, 2, 2, "Research budget spent"},
		{"no prices", nil, 3, 4, "Spend ceiling not enforced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			search := toolCalls("", call{"search_files", `{"query":"heat pump"}`})
			script := append(slices.Repeat([]step{search}, tc.steps-1), answer(finalReport))
			cs := newChatServer(t, script...)
			e, err := llm.New(llm.Options{BaseURL: cs.srv.URL + "/v1", APIKey: apiKey, Model: "test-model", Prices: tc.prices})
			require.NoError(t, err)
			res, sink, err := runAgent(t, e, engine.Input{MaxCostUSD: &limit})
			require.NoError(t, err)
			require.NotEmpty(t, res.Report)
			reqs := cs.recorded()
			require.Len(t, reqs, tc.requests)
			if tc.prices != nil {
				// After the first call the agent must write its report, without tools.
				require.Nil(t, reqs[1].Body["tools"])
				require.NotNil(t, reqs[1].Body["response_format"])
				for _, ev := range sink.OfKind(engine.KindStatus) {
					if ev.Title == "Research budget spent" {
						require.Contains(t, ev.Content, "spend ceiling reached")
					}
				}
			}
			var titles []string
			for _, ev := range sink.OfKind(engine.KindStatus) {
				titles = append(titles, ev.Title)
			}
			require.Contains(t, titles, tc.title)
		})
	}
}

func TestParseTokenPrices(t *testing.T) {
	t.Parallel()
	p, err := llm.ParseTokenPrices(" input=0.15, output=0.6 ")
	require.NoError(t, err)
	require.Equal(t, &llm.TokenPrices{InputPerMTok: 0.15, OutputPerMTok: 0.6}, p)
	p, err = llm.ParseTokenPrices("")
	require.NoError(t, err)
	require.Nil(t, p)
	for _, bad := range []string{"input=1", "input=x,output=1", "input=-1,output=1", "in=1,output=1", "input=1;output=2"} {
		_, err := llm.ParseTokenPrices(bad)
		require.Error(t, err, bad)
	}
}
