package llm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/citations"
	"github.com/researchd/researchd/engine/enginetest"
	"github.com/researchd/researchd/engine/llm"
	"github.com/researchd/researchd/engine/nlp"
)

// handbook is a long input file (about 40 KB, ten thousand tokens): more than a 4k window holds,
// with one fact in its middle.
func handbook() []byte {
	var b strings.Builder
	b.WriteString("# Heat pump handbook\n\n")
	for i := 1; i <= 300; i++ {
		if i == 150 {
			b.WriteString(costQuote + "\n")
			continue
		}
		fmt.Fprintf(&b, "Paragraph %d describes refrigerant circuits, defrost cycles, indoor units and the maintenance schedule of the outdoor fan in general terms.\n", i)
	}
	return []byte(b.String())
}

// outputSchema is the json_schema of the structured-output jobs.
var outputSchema = map[string]any{
	"type": "object", "required": []any{"install_cost_eur"},
	"properties": map[string]any{
		"install_cost_eur": map[string]any{"type": "number"},
		"max_grant_eur":    map[string]any{"type": []any{"number", "null"}},
		"lifetime_years":   map[string]any{"type": []any{"number", "null"}},
	},
}

// job is one research job as the runner runs it: the engine's run, then citation verification.
type job struct {
	err    error
	report string
	out    map[string]any
	v      citations.Verification
	sink   *enginetest.Sink
	took   time.Duration
}

func runJob(t *testing.T, e engine.Engine, schema map[string]any, limit time.Duration) job {
	t.Helper()
	inputs := enginetest.Inputs(t)
	inputs["handbook.md"] = handbook()
	repo := enginetest.Workspace(t, inputs)
	sink := &enginetest.Sink{Repo: repo}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	start := time.Now()
	_, err := e.Run(ctx, engine.Input{Question: enginetest.Question, Effort: engine.EffortMedium, Workspace: repo, JSONSchema: schema, Now: enginetest.Clock}, sink)
	j := job{err: err, sink: sink, took: time.Since(start)}
	requireNoSecret(t, sink)
	if err != nil {
		return j
	}
	v, err := citations.VerifyWorkspace(repo, schema)
	require.NoError(t, err)
	j.v, j.report, j.out = v, v.Report, v.StructuredOutput
	return j
}

var reCitedLine = regexp.MustCompile(`\[\d+\]`)

// TestLocalModels runs a research job and a structured-output job against a scripted server for
// each behaviour local model servers show. Each job completes with verified citations and valid
// structured output (a stalled model: ends timed out at the limit); invented quotes are never
// shown as verified; a context-length refusal loses no research. The second job of a row runs on
// what the first one taught the engine.
func TestLocalModels(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		q    quirks
		// retrieve: the service reads (retrieve-then-read); else the model reads with its tools.
		retrieve bool
		limit    time.Duration
		check    func(t *testing.T, m *localModel, plain, structured job)
	}{
		{name: "no tools (Ollama's refusal)", q: quirks{noTools: "registry.ollama.ai/library/llama3.2:3b does not support tools"}, retrieve: true,
			check: func(t *testing.T, m *localModel, plain, structured job) {
				reqs, refused := m.seen()
				require.Equal(t, 1, refused["tools"], "refused once, then remembered")
				for _, r := range reqs[1:] {
					require.Nil(t, r["tools"])
				}
			}},
		{name: "tool calls written as text", q: quirks{textCalls: true},
			check: func(t *testing.T, m *localModel, plain, structured job) {
				require.NotEmpty(t, eventsTitled(plain.sink, "Tool calls read from text"))
				reqs, _ := m.seen()
				last := reqs[len(reqs)-1]
				require.Nil(t, last["tools"], "the second job uses the text format from the start")
			}},
		{name: "4k context, not reported", q: quirks{context: 4096},
			check: func(t *testing.T, m *localModel, plain, _ job) {
				_, refused := m.seen()
				require.Equal(t, 1, refused["context"], "refused once, then the window is known")
				require.NotEmpty(t, eventsTitled(plain.sink, "Context window exceeded"))
			}},
		{name: "4k context, reported by vLLM", q: quirks{context: 4096, reportModels: true},
			check: func(t *testing.T, m *localModel, plain, _ job) {
				_, refused := m.seen()
				require.Zero(t, refused["context"])
				require.Equal(t, 4096, capabilitiesOf(t, plain.sink)["context_tokens"])
			}},
		{name: "Ollama without tool support", q: quirks{ollama: true, noTools: "registry.ollama.ai/library/gemma2:2b does not support tools"}, retrieve: true,
			check: func(t *testing.T, m *localModel, plain, _ job) {
				reqs, refused := m.seen()
				require.Zero(t, refused["tools"], "retrieve-then-read from the start: no request offers tools")
				for _, r := range reqs {
					require.Nil(t, r["tools"])
				}
				c := capabilitiesOf(t, plain.sink)
				require.Equal(t, "retrieve", c["tool_mode"])
				require.Equal(t, 8192, c["context_tokens"])
			}},
		{name: "llama.cpp without --jinja, 4k window", q: quirks{props: 4096, context: 4096, noTools: "tools param requires --jinja flag"}, retrieve: true,
			check: func(t *testing.T, m *localModel, plain, _ job) {
				_, refused := m.seen()
				require.Equal(t, 1, refused["tools"])
				require.Zero(t, refused["context"])
				require.Equal(t, "llama.cpp", capabilitiesOf(t, plain.sink)["server"])
			}},
		{name: "<think> and JSON wrapped in prose", q: quirks{think: true}},
		{name: "no json_schema", q: quirks{noJSONSchema: true},
			check: func(t *testing.T, m *localModel, _, _ job) {
				reqs, refused := m.seen()
				require.Equal(t, 1, refused["json_schema"], "refused once, then json_object")
				rf := reqs[len(reqs)-1]["response_format"].(map[string]any)
				require.Equal(t, "json_object", rf["type"])
			}},
		{name: "streams without being asked", q: quirks{stream: true}},
		{name: "429 with Retry-After", q: quirks{busy429: 2},
			check: func(t *testing.T, m *localModel, plain, _ job) {
				_, refused := m.seen()
				require.Equal(t, 2, refused["429"])
				require.GreaterOrEqual(t, plain.took, 2*time.Second, "Retry-After: 1 is waited out")
				require.Len(t, eventsTitled(plain.sink, "Model server busy"), 2)
			}},
		{name: "503 burst", q: quirks{burst503: 6},
			check: func(t *testing.T, m *localModel, _, _ job) {
				_, refused := m.seen()
				require.Equal(t, 6, refused["503"], "more than the SDK's three tries")
			}},
		{name: "slow", q: quirks{slow: 150 * time.Millisecond}},
		{name: "stalled", q: quirks{stall: true}, limit: 1500 * time.Millisecond},
		{name: "invented quotes", q: quirks{invent: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, srv := newLocalModel(t, tt.q)
			e, err := llm.New(llm.Options{BaseURL: srv.URL + "/v1", APIKey: apiKey, Model: "small-model", RetryBase: 10 * time.Millisecond, Logger: quietLog()})
			require.NoError(t, err)
			limit := tt.limit
			if limit == 0 {
				limit = 60 * time.Second
			}
			plain := runJob(t, e, nil, limit)
			structured := runJob(t, e, outputSchema, limit)
			for _, j := range []job{plain, structured} {
				if tt.q.stall {
					var ee *engine.Error
					require.ErrorAs(t, j.err, &ee)
					require.Equal(t, engine.CodeTimeout, ee.Code, "the runner records it as timed_out")
					require.Less(t, j.took, limit+time.Second, "ends at the limit")
					continue
				}
				require.NoError(t, j.err)
				requireHonestReport(t, j, tt.q.invent)
				if tt.retrieve {
					require.NotEmpty(t, eventsTitled(j.sink, "Retrieve-then-read"))
				} else {
					require.Empty(t, eventsTitled(j.sink, "Retrieve-then-read"), "the model read with its tools")
					require.Equal(t, []string{"read_file", "search_files", "write_report"}, toolCallTitles(j.sink)[:3])
				}
			}
			if !tt.q.stall {
				requireStructured(t, structured, tt.q.invent)
			}
			if tt.check != nil {
				tt.check(t, m, plain, structured)
			}
		})
	}
}

// requireHonestReport: both facts are in the report with verified quotes (none of the research was
// lost), and an invented quote is removed, its claim left without a citation and marked.
func requireHonestReport(t *testing.T, j job, invented bool) {
	t.Helper()
	require.Contains(t, j.report, "> "+nlp.EscapeMarkdown(grantQuote)+"\n", j.report)
	require.Contains(t, j.report, "> "+nlp.EscapeMarkdown(costQuote)+"\n", j.report)
	require.GreaterOrEqual(t, j.v.Verified, 2)
	if !invented {
		require.Equal(t, j.v.Total, j.v.Verified, "%+v", j.v.Failed)
		return
	}
	require.Greater(t, j.v.Total, j.v.Verified)
	require.NotContains(t, j.report, inventedText)
	require.Contains(t, j.report, "⚠ Unverified quote removed")
	for _, line := range strings.Split(j.report, "\n") {
		if strings.HasPrefix(line, "Heat pumps last 50 years.") {
			require.NotRegexp(t, reCitedLine, line, "the claim keeps no citation")
			require.Contains(t, line, "unverified")
		}
	}
}

// requireStructured: the structured output is valid, its supported fields have verified
// citations, and a field only an invented quote supported is null.
func requireStructured(t *testing.T, j job, invented bool) {
	t.Helper()
	sch, err := engine.CompileSchema(outputSchema)
	require.NoError(t, err)
	require.NoError(t, engine.ValidateOutput(sch, j.out))
	require.Equal(t, map[string]any{"install_cost_eur": 9000.0, "max_grant_eur": 7500.0, "lifetime_years": nil}, j.out)
	require.Len(t, j.v.Basis["install_cost_eur"].Citations, 1)
	require.Equal(t, "input_files/handbook.md", j.v.Basis["install_cost_eur"].Citations[0].Source)
	require.Empty(t, j.v.Basis["lifetime_years"].Citations)
	if invented {
		require.Contains(t, j.v.Unsupported, "lifetime_years")
	}
}

func eventsTitled(sink *enginetest.Sink, title string) []engine.Event {
	var out []engine.Event
	for _, e := range sink.OfKind(engine.KindStatus) {
		if e.Title == title {
			out = append(out, e)
		}
	}
	return out
}

func toolCallTitles(sink *enginetest.Sink) []string {
	var out []string
	for _, e := range sink.OfKind(engine.KindToolCall) {
		out = append(out, e.Title)
	}
	return out
}

// capabilitiesOf is the data of the run's "Model capabilities" event.
func capabilitiesOf(t *testing.T, sink *enginetest.Sink) map[string]any {
	t.Helper()
	evs := eventsTitled(sink, "Model capabilities")
	require.Len(t, evs, 1)
	return evs[0].Data
}

// A run that read nothing because the model could not call tools never completes as "the sources
// do not answer": in auto mode the service reads for it; with tool calls forced it fails, saying why.
func TestModelThatCallsNoTool(t *testing.T) {
	t.Parallel()
	prose := answer("Heat pumps are efficient and grants exist.")
	refuse := httpError(400, "registry.ollama.ai/library/phi3:mini does not support tools")
	tests := []struct {
		name, mode string
		script     []step
		err        string
	}{
		{name: "forced native, the model answers in prose", mode: llm.ToolsNative, script: []step{prose}, err: "the model called no tool, so the run read nothing (RESEARCH_MODEL_TOOLS=native)"},
		{name: "forced text, the model answers in prose", mode: llm.ToolsText, script: []step{prose}, err: "the model called no tool"},
		{name: "forced native, tools refused", mode: llm.ToolsNative, script: []step{refuse}, err: "the model server refused tools (HTTP 400: registry.ollama.ai/library/phi3:mini does not support tools)"},
		{name: "auto, the model answers in prose", mode: llm.ToolsAuto, script: []step{prose, reportCiting(grantQuote)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cs := newChatServer(t, tt.script...)
			e, err := llm.New(llm.Options{BaseURL: cs.srv.URL + "/v1", APIKey: apiKey, Model: "m", ToolMode: tt.mode, Logger: quietLog()})
			require.NoError(t, err)
			res, sink, err := runAgent(t, e, engine.Input{})
			if tt.err != "" {
				var ee *engine.Error
				require.ErrorAs(t, err, &ee)
				require.Equal(t, engine.CodeProviderError, ee.Code)
				require.Contains(t, ee.Message, tt.err)
				require.Contains(t, ee.Message, "set RESEARCH_MODEL_TOOLS=auto or retrieve")
				return
			}
			require.NoError(t, err)
			ev := eventsTitled(sink, "Retrieve-then-read")
			require.Len(t, ev, 1)
			require.Contains(t, ev[0].Content, "The model answered without calling a tool")
			require.NotContains(t, res.Report, "do not answer")
			require.Contains(t, res.Report, "> "+grantQuote+"\n")
		})
	}
}

// reportCiting answers the report request citing notes.md (by the id its evidence header gives)
// with quote.
func reportCiting(quote string) step {
	return func(w http.ResponseWriter, r *http.Request, body map[string]any) {
		var prompt string
		for _, m := range body["messages"].([]any) {
			c, _ := m.(map[string]any)["content"].(string)
			prompt += c + "\n"
		}
		doc := map[string]any{"title": "Heat pumps", "sections": []any{}, "open_questions": []any{},
			"summary": []any{map[string]any{"text": "Grants help.", "citations": cite(prompt, "input_files/notes.md", quote)}}}
		out, _ := json.Marshal(doc)
		answer(string(out))(w, r, body)
	}
}
