package main

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extractive"
)

// TestFitLogistic recovers the weights of data drawn from a known logistic model.
func TestFitLogistic(t *testing.T) {
	t.Parallel()
	var rows [][]float64
	var y []float64
	for i := 0; i < 4000; i++ {
		x := float64(i%200)/50 - 2 // -2 .. 2
		p := 1 / (1 + math.Exp(-(2*x - 0.5)))
		rows = append(rows, []float64{x})
		// Deterministic labels with the model's frequency: the i-th of each 20 points is positive
		// when i/20 < p.
		if float64((i/200)%20)/20 < p {
			y = append(y, 1)
		} else {
			y = append(y, 0)
		}
	}
	w, b := fitLogistic(rows, y, []float64{0}, []float64{1}, 1e-6, 50)
	require.InDelta(t, 2.0, w[0], 0.3)
	require.InDelta(t, -0.5, b, 0.3)
}

// TestFitRankerPutsTheAnswerFirst: the conditional logit learns which feature marks the answer.
func TestFitRankerPutsTheAnswerFirst(t *testing.T) {
	t.Parallel()
	var set trainingSet
	for q := 0; q < 50; q++ {
		qu := question{answerable: true, kind: "squad"}
		for c := 0; c < 5; c++ {
			label := 0.0
			if c == q%5 {
				label = 1
			}
			// Feature 0 marks the answer (noisily); feature 1 is noise.
			qu.rows = append(qu.rows, len(set.rows))
			set.rows = append(set.rows, []float64{label + 0.3*float64((q+c)%3), float64((q * c) % 4)})
			set.labels = append(set.labels, label)
		}
		set.questions = append(set.questions, qu)
	}
	mean, scale := standardize(set.rows)
	w := fitRanker(set, mean, scale, 1, 300)
	require.Greater(t, w[0], 0.0)
	require.Equal(t, 1.0, topRight(set, func(x []float64) float64 { return score(w, mean, scale, x) }))
}

// TestChooseThreshold picks the threshold that separates answerable from unanswerable questions.
func TestChooseThreshold(t *testing.T) {
	t.Parallel()
	var os []outcome
	for i := 0; i < 10; i++ {
		os = append(os, outcome{best: 0.8 + float64(i)/100, right: true, q: question{answerable: true, kind: "squad"}})
		os = append(os, outcome{best: 0.2 + float64(i)/100, q: question{kind: "squad_unanswerable"}})
	}
	th, fit := chooseThreshold(os, trainingSet{})
	require.Greater(t, th, 0.29)
	require.LessOrEqual(t, th, 0.8)
	require.Equal(t, 1.0, fit["weighted_accuracy_oof"])
}

// TestDecidedByConfidence: a question whose best candidate names something no source mentions is
// refused by rule, so the confidence model is not fitted on it.
func TestDecidedByConfidence(t *testing.T) {
	t.Parallel()
	names := extractive.FeatureNames()
	row := func(feature string) []float64 {
		x := make([]float64, len(names))
		if i := slices.Index(names, feature); i >= 0 {
			x[i] = 1
		}
		return x
	}
	set := trainingSet{rows: [][]float64{row(""), row("name_absent"), row("unsupported"), row("number_absent")}}
	require.Equal(t, []int{0, 2}, decidedByConfidence(set, []int{0, 1, 2, 3}))
	require.Equal(t, []int{1}, decidedByConfidence(set, []int{3, 2}))
}
