package campaign

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNormalizeIsIdempotent(t *testing.T) {
	t.Parallel()
	p := Plan{Stages: []Stage{
		{Key: "find", Title: "Find", Op: "agent", Instruction: ptr("List them"), Concurrency: 50},
		{Key: "check", Title: "Check", Op: "agent", Fanout: FanoutPerEntity, DependsOn: []string{"find"}, Instruction: ptr("Check"), Concurrency: -3},
	}}
	n := p.Normalize()
	require.Equal(t, FanoutRoot, n.Stages[0].Fanout)
	require.Equal(t, []string{}, n.Stages[0].DependsOn)
	require.Equal(t, 20, n.Stages[0].Concurrency)
	require.Equal(t, 1, n.Stages[1].Concurrency)
	require.Equal(t, []Deliverable{{Key: "check", Title: "Check", StageKey: "check", Format: FormatCSV, Filename: "check.csv"}}, n.Deliverables)
	again, err := ParsePlan([]byte(n.JSON()))
	require.NoError(t, err)
	require.Equal(t, n.JSON(), again.Normalize().JSON())
}

func TestChangedStages(t *testing.T) {
	t.Parallel()
	base := Plan{Stages: []Stage{{Key: "a", Title: "A", Instruction: ptr("x")}, {Key: "b", Title: "B", Instruction: ptr("y")}}}.Normalize()
	for _, tc := range []struct {
		name    string
		edit    func(p *Plan)
		changed []int
		err     bool
	}{
		{"unchanged", func(*Plan) {}, nil, false},
		{"one stage", func(p *Plan) { p.Stages[1].Title = "Bee" }, []int{1}, false},
		{"two stages", func(p *Plan) { p.Stages[0].Title, p.Stages[1].Title = "1", "2" }, []int{0, 1}, false},
		{"renamed", func(p *Plan) { p.Stages[0].Key = "z" }, nil, true},
		{"removed", func(p *Plan) { p.Stages = p.Stages[:1] }, nil, true},
	} {
		next, err := ParsePlan([]byte(base.JSON()))
		require.NoError(t, err)
		tc.edit(&next)
		got, err := ChangedStages(base, next.Normalize())
		require.Equal(t, tc.err, err != nil, tc.name)
		require.Equal(t, tc.changed, got, tc.name)
	}
}

func TestCheckGraph(t *testing.T) {
	t.Parallel()
	st := func(key, fanout string, deps ...string) Stage {
		return Stage{Key: key, Title: key, Op: "agent", Fanout: fanout, DependsOn: deps, Instruction: ptr("do")}
	}
	for _, tc := range []struct {
		name   string
		stages []Stage
		field  string
	}{
		{"fine", []Stage{st("a", FanoutRoot), st("b", FanoutPerEntity, "a"), st("c", FanoutAggregate, "a", "b")}, ""},
		{"self", []Stage{st("a", FanoutAggregate, "a")}, "stages/0/depends_on/0"},
		{"later", []Stage{st("a", FanoutAggregate, "b"), st("b", FanoutRoot)}, "stages/0/depends_on/0"},
		{"unknown", []Stage{st("a", FanoutAggregate, "zz")}, "stages/0/depends_on/0"},
		{"root reads", []Stage{st("a", FanoutRoot), st("b", FanoutRoot, "a")}, "stages/1/depends_on"},
		{"duplicate", []Stage{st("a", FanoutRoot), st("a", FanoutRoot)}, "stages/1/key"},
	} {
		probs := Plan{Stages: tc.stages}.Normalize().Check("")
		if tc.field == "" {
			require.Empty(t, probs, tc.name)
			continue
		}
		require.NotEmpty(t, probs, tc.name)
		require.Equal(t, tc.field, probs[0].Field, tc.name)
	}
}

func TestMaxConcurrency(t *testing.T) {
	t.Parallel()
	st := func(key string, c int, deps ...string) Stage {
		return Stage{Key: key, Concurrency: c, DependsOn: deps}
	}
	for _, tc := range []struct {
		name   string
		stages []Stage
		want   int
	}{
		{"one", []Stage{st("a", 5)}, 5},
		{"chain", []Stage{st("a", 5), st("b", 7, "a"), st("c", 3, "b")}, 7},
		{"parallel", []Stage{st("a", 5), st("b", 7), st("c", 3, "a", "b")}, 12},
		{"transitive", []Stage{st("a", 10), st("b", 2, "a"), st("c", 2, "b"), st("d", 4)}, 14},
		{"diamond", []Stage{st("a", 1), st("b", 6, "a"), st("c", 6, "a"), st("d", 20, "b", "c")}, 20},
	} {
		require.Equal(t, tc.want, maxConcurrency(Plan{Stages: tc.stages}), tc.name)
	}
}

func TestAssignment(t *testing.T) {
	t.Parallel()
	rec := map[string]any{"question": "Does Acme publish SOC 2?", "company": "Acme", "employees": 120.0}
	for _, tc := range []struct {
		name  string
		stage Stage
		rec   map[string]any
		want  string
	}{
		{"question follows the instruction", Stage{Instruction: ptr("Answer from the trust center."), QuestionField: ptr("question")}, rec,
			"Answer from the trust center.\n\nDoes Acme publish SOC 2?"},
		{"question alone", Stage{QuestionField: ptr("question")}, rec, "Does Acme publish SOC 2?"},
		{"record appended", Stage{Instruction: ptr("Check the company.")}, map[string]any{"company": "Acme", "employees": 120.0},
			"Check the company.\n\nRecord:\ncompany: Acme\nemployees: 120"},
		{"agent inputs", Stage{Agent: &Agent{ID: "x", Inputs: map[string]any{"market": "EU"}}}, nil, "Inputs:\nmarket: EU"},
	} {
		require.Equal(t, tc.want, Assignment(tc.stage, tc.rec), tc.name)
	}
}

// TestDigest pins the digest rule: SHA-256 of the RFC 8785 form of {budget, plan, revision}.
func TestDigest(t *testing.T) {
	t.Parallel()
	p := Plan{Stages: []Stage{{Key: "a", Title: "A", Op: "agent", Instruction: ptr("x"),
		OutputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "number", "maximum": 1e21}}}}}}.Normalize()
	d1, err := Digest(p, 1, nil)
	require.NoError(t, err)
	require.Regexp(t, `^[0-9a-f]{64}$`, d1)
	d2, err := Digest(p, 2, nil)
	require.NoError(t, err)
	d3, err := Digest(p, 1, ptr(int64(5)))
	require.NoError(t, err)
	require.NotEqual(t, d1, d2)
	require.NotEqual(t, d1, d3)
	// The same plan decoded from JSON with other key order and spacing digests the same.
	var again Plan
	require.NoError(t, json.Unmarshal([]byte(` {"deliverables":[{"filename":"a.csv","format":"csv","key":"a","stage_key":"a","title":"A"}],
		"stages":[{"title":"A","op":"agent","key":"a","fanout":"root","depends_on":[],"instruction":"x","concurrency":5,
		"output_schema":{"properties":{"n":{"maximum":1000000000000000000000,"type":"number"}},"type":"object"}}]}`), &again))
	d4, err := Digest(again, 1, nil)
	require.NoError(t, err)
	require.Equal(t, d1, d4)
}
