package extractive

import (
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extract"
)

// Candidate is one unit of the sources as the answer model sees it for a question: its text, the
// document it is in, and its features. cmd/trainanswer fits the model from these.
type Candidate struct {
	Doc      string
	Text     string
	Features []float64
}

// FeatureNames are the names of Candidate.Features, in order.
func FeatureNames() []string { return append([]string(nil), featureNames...) }

// CandidateIndex is the index of a set of documents, for reading candidates of many questions.
type CandidateIndex struct{ c *corpus }

// NewCandidateIndex indexes docs as a run would (files that cannot be read are left out).
func NewCandidateIndex(docs []engine.SourceFile) *CandidateIndex {
	var ds []extract.Document
	for _, f := range docs {
		if d, reason := extract.File(f.Name, f.Data); reason == "" {
			ds = append(ds, d)
		}
	}
	return &CandidateIndex{c: newCorpus(ds)}
}

// Candidates are the k best units for question (k <= 0: all that match), in the order retrieval
// reads them, with their features.
func (ix *CandidateIndex) Candidates(question string, k int) []Candidate {
	c := ix.c.forRun()
	s := c.scorer(analyze(c.respell(question)))
	var out []Candidate
	for _, sc := range s.candidates(nil, k, nil) {
		out = append(out, Candidate{Doc: c.docs[c.units[sc.U].Doc].Path, Text: c.units[sc.U].Text, Features: sc.X})
	}
	return out
}
