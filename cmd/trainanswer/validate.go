package main

import (
	"log/slog"
	"math"
)

// validate estimates how the ranking generalises: questions are divided into two folds by
// document set (a whole article, or a whole HotpotQA record, is on one side), each fold's model is
// fitted on the other, and the share of answerable questions whose best candidate holds the answer
// is measured on the fold it did not see.
// fold is one side of the documents: its questions as a training set, and each of its rows'
// index in the whole set.
type fold struct {
	set  trainingSet
	rows []int
}

// splitFolds divides questions into two folds by document set: a whole article, or a whole
// HotpotQA record, is on one side, alternately in order of first appearance.
func splitFolds(set trainingSet) [2]fold {
	var folds [2]fold
	order := map[string]int{}
	for _, q := range set.questions {
		if _, ok := order[q.docs]; !ok {
			order[q.docs] = len(order)
		}
		f := &folds[order[q.docs]%2]
		nq := question{answerable: q.answerable, kind: q.kind, docs: q.docs}
		for _, r := range q.rows {
			nq.rows = append(nq.rows, len(f.set.rows))
			f.set.rows = append(f.set.rows, set.rows[r])
			f.set.labels = append(f.set.labels, set.labels[r])
			f.rows = append(f.rows, r)
		}
		f.set.questions = append(f.set.questions, nq)
	}
	return folds
}

// validate estimates how the ranking generalises: each fold's rankers are fitted on the other and
// measured by the share of answerable questions whose best candidate holds the answer. It compares
// the linear ranker with boosted trees and with context coverage alone.
func validate(set trainingSet, p boostParams, l2 float64) {
	folds := splitFolds(set)
	var lin, boost, cov [2]float64
	for f := 0; f < 2; f++ {
		train, test := folds[1-f].set, folds[f].set
		mean, scale := standardize(train.rows)
		w := fitRanker(train, mean, scale, l2, 300)
		lin[f] = topRight(test, func(x []float64) float64 { return score(w, mean, scale, x) })
		cov[f] = topRight(test, func(x []float64) float64 { return x[1] })
		trees := fitBoosted(train, p)
		boost[f] = topRight(test, func(x []float64) float64 { return sumTrees(trees, x) })
	}
	slog.Info("validation (two folds by document)", "linear_ranker", round((lin[0]+lin[1])/2), "boosted", round((boost[0]+boost[1])/2),
		"coverage_alone", round((cov[0]+cov[1])/2), "questions", [2]int{len(folds[0].set.questions), len(folds[1].set.questions)})
}

func sumTrees(trees []tree, x []float64) float64 {
	v := 0.0
	for _, t := range trees {
		v += t.eval(x)
	}
	return v
}

// topRight is the share of answerable questions whose best-scored candidate holds the answer.
func topRight(set trainingSet, score func([]float64) float64) float64 {
	top, n := 0, 0
	for _, q := range set.questions {
		if !q.answerable {
			continue
		}
		n++
		best, right := math.Inf(-1), false
		for _, r := range q.rows {
			if v := score(set.rows[r]); v > best {
				best, right = v, set.labels[r] == 1
			}
		}
		if right {
			top++
		}
	}
	return float64(top) / float64(max(n, 1))
}
