package campaign

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
)

// questionField is the record field questions are kept under (a question becomes {"question": q}).
const questionField = "question"

// intake is the stage whose key field identifies the supplied records: the first starting stage
// that reads them (per_entity or aggregate); nil when the plan has none.
func intake(p Plan) *Stage {
	for i, s := range p.Stages {
		if s.Starting() && s.Fanout != FanoutRoot {
			return &p.Stages[i]
		}
	}
	return nil
}

// supplied is the outcome of reading the records of a create.
type supplied struct {
	rows                     []store.CampaignRecord
	count, blank, duplicates int
}

// readSupplied turns questions or records into input rows: blanks left out and counted, each
// record numbered from 1, keyed by the intake stage's key field (duplicates marked and counted)
// and checked against the assignment limit. field names the request field ("questions",
// "records").
func readSupplied(field string, records []map[string]any, blanks int, st *Stage, lim Limits, campaignID string, now time.Time) (supplied, []fault.Field) {
	out := supplied{count: len(records) + blanks, blank: blanks}
	var probs []fault.Field
	seen := map[string]bool{}
	out.rows = make([]store.CampaignRecord, 0, len(records))
	for i, rec := range records {
		if len(rec) == 0 {
			out.blank++
			continue
		}
		seq := len(out.rows) + 1
		key, dup, msg := entityKey(st, rec, seq, seen)
		if msg != "" {
			probs = append(probs, fault.Field{Field: fmt.Sprintf("%s/%d", field, i), Message: msg})
			continue
		}
		if dup {
			out.duplicates++
		}
		if st != nil {
			if n := utf8.RuneCountInString(Assignment(*st, rec)); n > lim.MaxAssignmentChars {
				probs = append(probs, fault.Field{Field: fmt.Sprintf("%s/%d", field, i),
					Message: fmt.Sprintf("the assignment for this record is %d characters; the limit is %d (max_assignment_chars)", n, lim.MaxAssignmentChars)})
				continue
			}
		}
		b, err := json.Marshal(rec)
		if err != nil {
			probs = append(probs, fault.Field{Field: fmt.Sprintf("%s/%d", field, i), Message: "not a JSON object"})
			continue
		}
		out.rows = append(out.rows, store.CampaignRecord{CampaignID: campaignID, StageKey: store.InputStage, Seq: seq,
			EntityKey: key, Status: RecordPending, Given: string(b), Duplicate: dup, UpdatedAt: now})
		if len(probs) > 20 {
			break // enough to show what is wrong
		}
	}
	return out, probs
}

// entityKey is a record's identity under a stage: its key field's value, else its position;
// dup when the value repeated an earlier record's.
func entityKey(st *Stage, rec map[string]any, seq int, seen map[string]bool) (key string, dup bool, problem string) {
	if st == nil || st.EntityKeyField == nil {
		return strconv.Itoa(seq), false, ""
	}
	f := *st.EntityKeyField
	key, ok := scalar(rec[f])
	if !ok || strings.TrimSpace(key) == "" {
		return "", false, fmt.Sprintf("the record has no value for the key field %q (entity_key_field of stage %s)", f, st.Key)
	}
	if seen[key] {
		return key, true, ""
	}
	seen[key] = true
	return key, false, ""
}

// scalar renders a string, number or boolean as text.
func scalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case json.Number:
		return x.String(), true
	case int:
		return strconv.Itoa(x), true
	case int64:
		return strconv.FormatInt(x, 10), true
	}
	return "", false
}

// Assignment is what one worker of a stage receives for a record (docs/architecture.md: Campaigns): the instruction,
// then the agent's inputs, then the record's question (question_field, used as written) or, when
// the stage has none, the record itself. A root stage has no record.
func Assignment(st Stage, rec map[string]any) string {
	var parts []string
	if st.Instruction != nil {
		parts = append(parts, *st.Instruction)
	}
	if st.Agent != nil && len(st.Agent.Inputs) > 0 {
		parts = append(parts, "Inputs:\n"+renderFields(st.Agent.Inputs))
	}
	switch {
	case st.QuestionField != nil:
		if q, ok := scalar(rec[*st.QuestionField]); ok {
			parts = append(parts, q)
		}
	case rec != nil:
		parts = append(parts, "Record:\n"+renderFields(rec))
	}
	return strings.Join(parts, "\n\n")
}

// recordAssignment is a per-entity worker's assignment: the instruction with the record for engines that read it,
// and for an engine that plans a search from words, what to ask and which record it is about (so
// that every record is not answered from the passage that best fits the instruction alone).
func recordAssignment(st Stage, rec map[string]any) engine.Assignment {
	a := engine.Assignment{Question: Assignment(st, rec)}
	if st.QuestionField != nil {
		a.Ask, _ = scalar(rec[*st.QuestionField]) // the record's own question names its subject
		return a
	}
	if st.Instruction != nil {
		a.Ask = *st.Instruction
	}
	a.Subject = recordSubject(st, rec)
	return a
}

// subjectFields are field names that usually hold a record's name.
var subjectFields = []string{"name", "title", "company", "organization", "organisation", "entity", "vendor", "product"}

// recordSubject is the value that names a record: its key field's, else a name-like field's, else
// its only text field's; "" when nothing names it.
func recordSubject(st Stage, rec map[string]any) string {
	if st.EntityKeyField != nil {
		if v, ok := scalar(rec[*st.EntityKeyField]); ok {
			return v
		}
	}
	for _, f := range subjectFields {
		if v, ok := rec[f].(string); ok && strings.TrimSpace(v) != "" {
			return v
		}
	}
	var only string
	for _, v := range rec {
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			if only != "" {
				return ""
			}
			only = s
		}
	}
	return only
}

// renderFields writes a record as "name: value" lines in name order (objects and arrays as JSON).
func renderFields(rec map[string]any) string {
	var b strings.Builder
	for _, k := range sortedKeys(rec) {
		v, ok := scalar(rec[k])
		if !ok {
			j, _ := json.Marshal(rec[k])
			v = string(j)
		}
		b.WriteString(k + ": " + v + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// questionRecords turns questions into records ({"question": q}, trimmed); blanks are counted and
// left out.
func questionRecords(qs []string) (recs []map[string]any, blanks int) {
	recs = make([]map[string]any, 0, len(qs))
	for _, q := range qs {
		q = strings.TrimSpace(q)
		if q == "" {
			blanks++
			continue
		}
		recs = append(recs, map[string]any{questionField: q})
	}
	return recs, blanks
}

// rekey recomputes the entity keys and duplicate marks of supplied rows under a stage's key field
// (an edit changed it); problems name rows without a key value.
func rekey(rows []store.CampaignRecord, st *Stage) (dups int, probs []fault.Field) {
	seen := map[string]bool{}
	for i := range rows {
		var rec map[string]any
		if err := json.Unmarshal([]byte(rows[i].Given), &rec); err != nil {
			probs = append(probs, fault.Field{Field: "records", Message: fmt.Sprintf("record %d is not JSON", rows[i].Seq)})
			continue
		}
		key, dup, msg := entityKey(st, rec, rows[i].Seq, seen)
		if msg != "" {
			probs = append(probs, fault.Field{Field: "plan", Message: fmt.Sprintf("supplied record %d: %s", rows[i].Seq, msg)})
			if len(probs) > 20 {
				break
			}
			continue
		}
		rows[i].EntityKey, rows[i].Duplicate = key, dup
		if dup {
			dups++
		}
	}
	return dups, probs
}
