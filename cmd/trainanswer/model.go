package main

import (
	"slices"

	"github.com/researchd/researchd/engine/extractive"
)

// score is the ranker's score of features x under weights w (an engine.AnswerModel's Score, for
// the rankers fitted on folds).
func score(w, mean, scale, x []float64) float64 {
	m := extractive.AnswerModel{Mean: mean, Scale: scale, Ranker: w}
	return m.Score(x)
}

// fit fits the three parts of the model. The calibration and the confidence model are fitted on
// out-of-fold ranker scores (each question scored by a ranker that did not see its documents), so
// they learn how the ranker does on documents it has not seen, not how it does on its own data.
func fit(set trainingSet, l2 float64) extractive.AnswerModel {
	mean, scale := standardize(set.rows)
	m := extractive.AnswerModel{Features: extractive.FeatureNames(), Mean: mean, Scale: scale}
	m.Ranker = fitRanker(set, mean, scale, l2, 300)
	oof := outOfFoldScores(set, l2)

	// Calibration: one-input logistic regression of the label on the score.
	one := make([][]float64, len(oof))
	for i, s := range oof {
		one[i] = []float64{s}
	}
	w, b := fitLogistic(one, set.labels, []float64{0}, []float64{1}, 1e-3, 25)
	m.Calibration = [2]float64{w[0], b}

	// Confidence: per question, from its best candidate by out-of-fold score.
	var rows [][]float64
	var labels []float64
	var qs []question
	var tops []int
	for _, q := range set.questions {
		if len(q.rows) == 0 {
			continue
		}
		order := slices.Clone(q.rows)
		slices.SortStableFunc(order, func(a, b int) int { return cmpFloat(oof[b], oof[a]) })
		rows = append(rows, extractive.ConfidenceInputs(set.rows[order[0]]))
		labels = append(labels, set.labels[order[0]])
		tops = append(tops, order[0])
		qs = append(qs, q)
	}
	// The confidence model learns whether the sources answer at all (its label is the question's
	// answerability, each kind of question weighted as in the accuracy the threshold maximises);
	// whether the best candidate is right is what the threshold then trades against.
	answerable, weight := make([]float64, len(qs)), make([]float64, len(qs))
	count := map[string]float64{}
	for _, q := range qs {
		count[q.kind]++
	}
	for i, q := range qs {
		if q.answerable {
			answerable[i] = 1
		}
		weight[i] = kindWeight[q.kind] / count[q.kind] * float64(len(qs))
	}
	decided := decidedByConfidence(set, tops)
	drows := pick(rows, decided)
	cm, cs := standardize(drows)
	cw, cb := fitSigned(drows, pick(answerable, decided), pick(weight, decided), cm, cs, l2, confidenceDirection)
	m.Confidence = extractive.LinearModel{Inputs: confidenceNames(), Mean: cm, Scale: cs, Weights: cw, Bias: cb}

	conf := make([]outcome, len(qs))
	for i, q := range qs {
		conf[i] = outcome{best: m.Confidence.Prob(rows[i]), right: labels[i] == 1, q: q}
		if extractive.FocusAbsent(set.rows[tops[i]]) {
			conf[i].best = -1 // never answered, whatever the threshold
		}
	}
	m.Threshold, m.Fit = chooseThreshold(conf, set)
	m.Support = chooseSupport(set, oof, m.Calibration)
	return m
}

// decidedByConfidence are the questions (by index into tops, their best candidates) that the
// confidence model decides, the ones it is fitted on: a question naming something no source
// mentions is refused whatever its confidence (extractive.FocusAbsent), and would only teach the
// model that rule again, at the expense of what it has to tell apart.
func decidedByConfidence(set trainingSet, tops []int) []int {
	var out []int
	for i, top := range tops {
		if !extractive.FocusAbsent(set.rows[top]) {
			out = append(out, i)
		}
	}
	return out
}

// pick is the elements of xs at indexes idx, in that order.
func pick[T any](xs []T, idx []int) []T {
	out := make([]T, len(idx))
	for j, i := range idx {
		out[j] = xs[i]
	}
	return out
}

// confidenceNames are the confidence model's inputs, as the engine names them.
func confidenceNames() []string {
	return extractive.ConfidenceInputNames()
}

// outOfFoldScores scores every candidate with a ranker fitted on the other fold of documents.
func outOfFoldScores(set trainingSet, l2 float64) []float64 {
	folds := splitFolds(set)
	out := make([]float64, len(set.rows))
	for f := 0; f < 2; f++ {
		train := folds[1-f]
		mean, scale := standardize(train.set.rows)
		w := fitRanker(train.set, mean, scale, l2, 300)
		for i, r := range folds[f].rows {
			out[r] = score(w, mean, scale, folds[f].set.rows[i])
		}
	}
	return out
}

// confidenceDirection are the known directions of the confidence inputs: a better match never
// makes an answer less likely, a missing name or number never more.
var confidenceDirection = map[string]float64{
	"context_coverage": 1, "terms_share": 1, "type_hit": 1, "attribute": 1,
	"name_absent": -1, "number_absent": -1, "names_missing_unit": -1, "names_unbridged": -1, "numbers_missing": -1,
	"opposite": -1, "copy_value_gap": -1, "weak_match": -1, "type_missing": -1, "negation_question": -1, "negation_unit": -1, "unsupported": -1,
	"attribute_unnamed": -1, "substitute": -1,
}

// fitSigned fits a weighted logistic regression whose weights keep their known directions: an
// input whose weight comes out the other way is left out (its weight fixed at 0) and the rest
// refitted, until every weight agrees.
func fitSigned(rows [][]float64, y, weight, mean, scale []float64, l2 float64, direction map[string]float64) ([]float64, float64) {
	names := extractive.ConfidenceInputNames()
	off := make([]bool, len(names))
	for {
		masked := make([][]float64, len(rows))
		for i, r := range rows {
			masked[i] = slices.Clone(r)
			for j := range r {
				if off[j] {
					masked[i][j] = mean[j] // standardised to 0: no effect, and its weight stays 0
				}
			}
		}
		w, b := fitWeightedLogistic(masked, y, weight, mean, scale, l2, 25)
		changed := false
		for j, name := range names {
			if !off[j] && direction[name]*w[j] < 0 {
				off[j], changed = true, true
			}
		}
		if !changed {
			for j := range w {
				if off[j] {
					w[j] = 0
				}
			}
			return w, b
		}
	}
}
