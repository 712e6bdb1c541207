package extractive

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sync"
)

// AnswerModel is the answer finder's scoring model, fitted from public question-answering
// training data by cmd/trainanswer, which writes answer_model.json. It has three parts:
//   - a ranker: a linear score over a candidate's standardised features (features.go), fitted as a
//     conditional logit so that the candidate holding the answer comes first;
//   - a calibration of that score into the probability that the candidate holds the answer (Platt
//     scaling), which decides which further sentences are worth quoting (Support);
//   - a confidence model: a logistic regression over the best candidate's features and how far it
//     stands above the others, giving the probability that the question is answered right.
//
// Threshold is the calibrated abstention point on that probability: below it, the report says the
// sources do not answer. It was chosen on the training data to maximise overall accuracy
// (answerable questions answered right plus unanswerable ones admitted).
type AnswerModel struct {
	Features    []string    `json:"features"`
	Mean        []float64   `json:"mean"`
	Scale       []float64   `json:"scale"`
	Ranker      []float64   `json:"ranker"`
	Calibration [2]float64  `json:"calibration"` // p = sigmoid(a*score + b)
	Confidence  LinearModel `json:"confidence"`
	Threshold   float64     `json:"threshold"`
	Support     float64     `json:"support"`
	// Data and Fit say what the model was fitted on and how well it did there (for the record).
	Data map[string]any `json:"data,omitempty"`
	Fit  map[string]any `json:"fit,omitempty"`
}

// LinearModel is a logistic regression over standardised inputs.
type LinearModel struct {
	Inputs  []string  `json:"inputs"`
	Mean    []float64 `json:"mean"`
	Scale   []float64 `json:"scale"`
	Weights []float64 `json:"weights"`
	Bias    float64   `json:"bias"`
}

// Prob is the model's probability for inputs x.
func (m LinearModel) Prob(x []float64) float64 {
	z := m.Bias
	for i, v := range x {
		z += m.Weights[i] * (v - m.Mean[i]) / m.Scale[i]
	}
	return sigmoid(z)
}

func sigmoid(z float64) float64 { return 1 / (1 + math.Exp(-z)) }

//go:embed answer_model.json
var answerModelJSON []byte

// loadModel reads a model and checks that it matches this build's features.
func loadModel(b []byte) (*AnswerModel, error) {
	var m AnswerModel
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("engine: answer model: %w", err)
	}
	n := len(featureNames)
	c := m.Confidence
	if !slices.Equal(m.Features, featureNames) || len(m.Mean) != n || len(m.Scale) != n || len(m.Ranker) != n ||
		!slices.Equal(c.Inputs, confidenceInputs) || len(c.Mean) != len(c.Inputs) || len(c.Scale) != len(c.Inputs) || len(c.Weights) != len(c.Inputs) {
		return nil, fmt.Errorf("engine: answer model was fitted on other features: run go run ./cmd/trainanswer")
	}
	return &m, nil
}

// defaultModel is the committed model, read once per process (read-only afterwards). A build whose
// features and weights disagree must not answer anything: it panics on first use, which the
// engine's tests catch.
var defaultModel = sync.OnceValue(func() *AnswerModel {
	m, err := loadModel(answerModelJSON)
	if err != nil {
		panic(err)
	}
	return m
})

// Score is the ranker's score of a candidate with features x (0 without a model).
func (m *AnswerModel) Score(x []float64) float64 {
	if m == nil {
		return 0
	}
	z := 0.0
	for i, v := range x {
		z += m.Ranker[i] * (v - m.Mean[i]) / m.Scale[i]
	}
	return z
}

// prob is the calibrated probability that a candidate with ranker score s holds the answer.
func (m *AnswerModel) prob(s float64) float64 {
	return sigmoid(m.Calibration[0]*s + m.Calibration[1])
}

// confidenceInputs name what the confidence model reads of the best candidate. They are chosen to
// say whether the sources answer at all, in ways that hold across documents: the best candidate
// lacks a name or number of the question, states the opposite of one of its words or a word of
// the same kind in its place ("rain" for "snow": substitute), copies the question except for a
// detail, or hardly matches it. A denial on one side only is two inputs:
// a question that denies what the sentence does not (SQuAD 2.0 writes unanswerable questions so)
// is one thing, a sentence that denies in answer to a plain question ("Apple has not released an
// SDK") quite another; as one input, the first taught the model to refuse the second. An ordinary word of the question that no
// source uses is not an input: questions are worded unlike their sources ("brief me", "take"). How well the best candidate matches the
// question is not an input: on SQuAD, questions written to be unanswerable match their article
// better than real ones in some articles and worse in others, so a fitted weight on it does not
// carry over to documents it was not fitted on.
var confidenceInputs = []string{"name_absent", "number_absent", "names_unbridged", "numbers_missing",
	"opposite", "negation_question", "negation_unit", "unsupported", "attribute_unnamed", "substitute", "copy_value_gap", "weak_match", "type_missing"}

// computedInputs are the confidence inputs that are not candidate features: copy_value_gap is the
// best candidate's coverage when it lacks a name or number of the question (a question copied from a
// sentence with that detail changed reads like that), weak_match how far its context coverage falls
// short of a third, type_missing whether the question asks for a kind of value (a year, a person, a
// figure) that the best candidate does not hold.
const computedInputs = 3

// ConfidenceInputNames are the names of ConfidenceInputs' values, in order.
func ConfidenceInputNames() []string { return slices.Clone(confidenceInputs) }

// ConfidenceInputs computes the confidence model's inputs from the best candidate's features.
// Exported for cmd/trainanswer.
func ConfidenceInputs(best []float64) []float64 {
	feature := func(name string) float64 { return best[slices.Index(featureNames, name)] }
	x := make([]float64, 0, len(confidenceInputs))
	for _, name := range confidenceInputs[:len(confidenceInputs)-computedInputs] {
		x = append(x, feature(name))
	}
	valueGap := 0.0
	if feature("names_unbridged") > 0 || feature("numbers_missing") > 0 {
		valueGap = feature("coverage")
	}
	typeMissing := 0.0
	if feature("typed") > 0 && feature("type_hit") == 0 {
		typeMissing = 1
	}
	return append(x, valueGap, max(0, 1.0/3-feature("context_coverage")), typeMissing)
}

// confidence is the probability that the best of ranked candidates answers the question.
func (m *AnswerModel) confidence(ranked []scored) float64 {
	if len(ranked) == 0 {
		return 0
	}
	return m.Confidence.Prob(ConfidenceInputs(ranked[0].X))
}
