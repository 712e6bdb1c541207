package campaign

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/schema"
)

// Fanouts of an agent stage.
const (
	FanoutPerEntity = "per_entity"
	FanoutAggregate = "aggregate"
	FanoutRoot      = "root"
)

// Deliverable formats.
const (
	FormatCSV      = "csv"
	FormatJSON     = "json"
	FormatMarkdown = "markdown"
)

// Concurrency bounds of a stage (the limits in openapi/v2.json): values outside are clamped, never refused.
const (
	DefaultConcurrency = 5
	MaxConcurrency     = 20
)

// Plan is a campaign's stages and deliverables, as the API document describes them. Normalize
// fills the defaults; the normalized plan is what is stored, returned and digested.
type Plan struct {
	Stages       []Stage       `json:"stages"`
	Deliverables []Deliverable `json:"deliverables"`
}

// Stage is an agent stage (op "agent"). Optional fields are nil when unset, so the normalized JSON
// omits them.
type Stage struct {
	Key              string         `json:"key"`
	Title            string         `json:"title"`
	Op               string         `json:"op"`
	Fanout           string         `json:"fanout"`
	DependsOn        []string       `json:"depends_on"`
	Instruction      *string        `json:"instruction,omitempty"`
	QuestionField    *string        `json:"question_field,omitempty"`
	EntityKeyField   *string        `json:"entity_key_field,omitempty"`
	RecordsField     *string        `json:"records_field,omitempty"`
	OutputSchema     map[string]any `json:"output_schema,omitempty"`
	Approach         *string        `json:"approach,omitempty"`
	Effort           *string        `json:"effort,omitempty"`
	Concurrency      int            `json:"concurrency"`
	MaxCredits       *int64         `json:"max_credits,omitempty"`
	Agent            *Agent         `json:"agent,omitempty"`
	ResponseLanguage *string        `json:"response_language,omitempty"`
}

// Agent is the expert a stage's workers run as, and its input-form submission.
type Agent struct {
	ID     string         `json:"id"`
	Inputs map[string]any `json:"inputs,omitempty"`
}

// Deliverable is a file built from one stage's records.
type Deliverable struct {
	Key      string `json:"key"`
	Title    string `json:"title"`
	StageKey string `json:"stage_key"`
	Format   string `json:"format"`
	Filename string `json:"filename"`
}

// ParsePlan decodes a stored or received plan.
func ParsePlan(b []byte) (Plan, error) {
	var p Plan
	if err := json.Unmarshal(b, &p); err != nil {
		return Plan{}, fmt.Errorf("decode plan: %w", err)
	}
	return p, nil
}

// JSON encodes the plan (Go sorts map keys, so equal plans encode equally).
func (p Plan) JSON() string {
	b, err := json.Marshal(p)
	if err != nil {
		panic(fmt.Sprintf("campaign: encode plan: %v", err)) // only JSON values are ever stored in it
	}
	return string(b)
}

// Stage returns the stage with key, or false.
func (p Plan) Stage(key string) (Stage, bool) {
	for _, s := range p.Stages {
		if s.Key == key {
			return s, true
		}
	}
	return Stage{}, false
}

// Deliverable returns the deliverable with key, or false.
func (p Plan) Deliverable(key string) (Deliverable, bool) {
	for _, d := range p.Deliverables {
		if d.Key == key {
			return d, true
		}
	}
	return Deliverable{}, false
}

// Starting reports whether a stage reads no other stage.
func (s Stage) Starting() bool { return len(s.DependsOn) == 0 }

// Single reports whether the stage has one worker (root, aggregate) rather than one per record.
func (s Stage) Single() bool { return s.Fanout != FanoutPerEntity }

// Normalize fills the defaults the document promises (fanout, depends_on, concurrency clamped to
// 1-20, deliverable file names, one CSV deliverable per final stage when none are given) and drops
// empty optional values. It is idempotent: a normalized plan sent back normalizes to itself.
func (p Plan) Normalize() Plan {
	out := Plan{Stages: make([]Stage, len(p.Stages))}
	for i, s := range p.Stages {
		if s.Fanout == "" {
			s.Fanout = FanoutRoot
		}
		if s.DependsOn == nil {
			s.DependsOn = []string{}
		}
		s.Concurrency = ClampConcurrency(s.Concurrency)
		if s.Agent != nil && len(s.Agent.Inputs) == 0 {
			s.Agent = &Agent{ID: s.Agent.ID}
		}
		if len(s.OutputSchema) == 0 {
			s.OutputSchema = nil
		}
		out.Stages[i] = s
	}
	for _, d := range p.Deliverables {
		if d.Filename == "" {
			d.Filename = d.Key + "." + extension(d.Format)
		}
		out.Deliverables = append(out.Deliverables, d)
	}
	if len(out.Deliverables) == 0 {
		out.Deliverables = defaultDeliverables(out.Stages)
	}
	return out
}

// ClampConcurrency applies the default (0 = unset) and the 1-20 clamp.
func ClampConcurrency(n int) int {
	if n == 0 {
		return DefaultConcurrency
	}
	return min(max(n, 1), MaxConcurrency)
}

func extension(format string) string {
	switch format {
	case FormatJSON:
		return "json"
	case FormatMarkdown:
		return "md"
	}
	return "csv"
}

// defaultDeliverables is one CSV per stage that no other stage depends on.
func defaultDeliverables(stages []Stage) []Deliverable {
	read := map[string]bool{}
	for _, s := range stages {
		for _, d := range s.DependsOn {
			read[d] = true
		}
	}
	out := []Deliverable{}
	for _, s := range stages {
		if !read[s.Key] {
			out = append(out, Deliverable{Key: s.Key, Title: s.Title, StageKey: s.Key, Format: FormatCSV, Filename: s.Key + ".csv"})
		}
	}
	return out
}

// Check validates a normalized plan's graph and fields beyond what the document's schema already
// enforced (patterns, lengths, enums, unknown fields). Agents are checked by the service.
func (p Plan) Check(prefix string) []fault.Field {
	var probs []fault.Field
	add := func(field, format string, args ...any) {
		probs = append(probs, fault.Field{Field: prefix + field, Message: fmt.Sprintf(format, args...)})
	}
	pos := map[string]int{}
	for i, s := range p.Stages {
		f := fmt.Sprintf("stages/%d/", i)
		if _, dup := pos[s.Key]; dup {
			add(f+"key", "duplicate stage key %q", s.Key)
		} else {
			pos[s.Key] = i
		}
		for j, d := range s.DependsOn {
			at, known := pos[d]
			switch {
			case d == s.Key:
				add(fmt.Sprintf("%sdepends_on/%d", f, j), "a stage cannot depend on itself")
			case !known && slices.ContainsFunc(p.Stages[i+1:], func(o Stage) bool { return o.Key == d }):
				add(fmt.Sprintf("%sdepends_on/%d", f, j), "stage %q comes later in the plan: a stage may only depend on earlier stages (no cycles)", d)
			case !known:
				add(fmt.Sprintf("%sdepends_on/%d", f, j), "unknown stage %q", d)
			case at >= i:
				add(fmt.Sprintf("%sdepends_on/%d", f, j), "stage %q must come earlier in the plan", d)
			}
		}
		probs = append(probs, checkStage(prefix+f, s)...)
	}
	keys := map[string]bool{}
	for i, d := range p.Deliverables {
		f := fmt.Sprintf("deliverables/%d/", i)
		if keys[d.Key] {
			add(f+"key", "duplicate deliverable key %q", d.Key)
		}
		keys[d.Key] = true
		if _, ok := pos[d.StageKey]; !ok {
			add(f+"stage_key", "unknown stage %q", d.StageKey)
		}
	}
	return probs
}

// checkStage validates one stage's own fields.
func checkStage(f string, s Stage) []fault.Field {
	var probs []fault.Field
	add := func(field, msg string) { probs = append(probs, fault.Field{Field: f + field, Message: msg}) }
	if s.Fanout == FanoutRoot && len(s.DependsOn) > 0 {
		add("depends_on", "a root (discovery) stage starts from nothing and cannot depend on other stages")
	}
	if s.QuestionField != nil && s.Fanout != FanoutPerEntity {
		add("question_field", "question_field is only for per_entity stages")
	}
	if s.RecordsField != nil && s.Fanout != FanoutRoot {
		add("records_field", "records_field is only for root (discovery) stages")
	}
	hasInputs := s.Agent != nil && len(s.Agent.Inputs) > 0
	if s.Instruction == nil && s.QuestionField == nil && !hasInputs {
		add("instruction", "an instruction is required unless question_field or agent.inputs supplies the assignment")
	}
	if s.OutputSchema != nil {
		if _, err := schema.CompileObject(s.OutputSchema); err != nil {
			add("output_schema", err.Error())
		}
	}
	if s.RecordsField != nil {
		if msg := recordsFieldProblem(s.OutputSchema, *s.RecordsField); msg != "" {
			add("records_field", msg)
		}
	}
	return probs
}

// recordsFieldProblem says why a discovery stage's output schema cannot hold its records.
func recordsFieldProblem(out map[string]any, field string) string {
	if out == nil {
		return "a records_field needs an output_schema whose property " + field + " is the array of records found"
	}
	props, _ := out["properties"].(map[string]any)
	p, _ := props[field].(map[string]any)
	if p == nil || schema.Type(p) != "array" {
		return "output_schema must have an array property " + field + " holding the records found"
	}
	return ""
}

// ChangedStages compares an edited plan with the current one: the same stage keys in the same
// order are required; it returns the positions of the stages that differ.
func ChangedStages(cur, next Plan) ([]int, error) {
	if len(cur.Stages) != len(next.Stages) {
		return nil, fmt.Errorf("the plan has %d stages; an edit keeps the stages and changes at most one", len(cur.Stages))
	}
	var changed []int
	for i := range cur.Stages {
		if cur.Stages[i].Key != next.Stages[i].Key {
			return nil, fmt.Errorf("stage %d is %q; an edit keeps the stage keys in their order", i, cur.Stages[i].Key)
		}
		if !reflect.DeepEqual(asJSON(cur.Stages[i]), asJSON(next.Stages[i])) {
			changed = append(changed, i)
		}
	}
	return changed, nil
}

// asJSON is v as decoded JSON, so comparisons ignore Go-only differences (nil vs empty, int widths).
func asJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// SchemaFields are the top-level property names of an output schema, sorted (each becomes a
// column).
func SchemaFields(out map[string]any) []string {
	props, _ := out["properties"].(map[string]any)
	return slices.Sorted(maps.Keys(props))
}

// firstLine shortens text to n characters on a word boundary, for default names and titles.
func firstLine(text string, n int) string {
	t := strings.Join(strings.Fields(text), " ")
	r := []rune(t)
	if len(r) <= n {
		return t
	}
	cut := string(r[:n])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,.;:") + "…"
}
