package campaign

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRecordAssignment(t *testing.T) {
	instr, key, qf := "How many people does the company employ?", "domain", "question"
	tests := []struct {
		name      string
		st        Stage
		rec       map[string]any
		ask, subj string
	}{
		{"key field", Stage{Instruction: &instr, EntityKeyField: &key}, map[string]any{"domain": "acme.example", "name": "Acme"}, instr, "acme.example"},
		{"name field", Stage{Instruction: &instr}, map[string]any{"name": "Acme Corp", "country": "US"}, instr, "Acme Corp"},
		{"only text field", Stage{Instruction: &instr}, map[string]any{"firm": "Globex", "size": 3.0}, instr, "Globex"},
		{"nothing names it", Stage{Instruction: &instr}, map[string]any{"a": "x", "b": "y"}, instr, ""},
		{"question field", Stage{QuestionField: &qf}, map[string]any{"question": "How many people does Acme employ?"}, "How many people does Acme employ?", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := recordAssignment(tc.st, tc.rec)
			require.Equal(t, Assignment(tc.st, tc.rec), a.Question)
			require.Equal(t, tc.ask, a.Ask)
			require.Equal(t, tc.subj, a.Subject)
		})
	}
}
