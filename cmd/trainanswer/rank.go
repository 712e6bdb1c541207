package main

import (
	"math"

	"github.com/researchd/researchd/engine/extractive"
)

// fitRanker fits a conditional logit over each answerable question's candidates: the probability
// that candidate i is the one that answers is softmax(w·z_i) among the question's candidates, and
// the likelihood of the candidates that hold the answer is maximised (Adam, L2). This optimises
// what the answer finder does with the scores: put an answering sentence first.
func fitRanker(set trainingSet, mean, scale []float64, l2 float64, epochs int) []float64 {
	n := len(mean)
	sign := signs()
	w := make([]float64, n)
	m1, m2 := make([]float64, n), make([]float64, n)
	const lr, b1, b2, eps = 0.05, 0.9, 0.999, 1e-8
	z := func(r int) []float64 {
		out := make([]float64, n)
		for j, v := range set.rows[r] {
			out[j] = (v - mean[j]) / scale[j]
		}
		return out
	}
	std := make([][]float64, len(set.rows))
	for r := range set.rows {
		std[r] = z(r)
	}
	qs := rankingQuestions(set)
	for ep := 1; ep <= epochs; ep++ {
		grad := make([]float64, n)
		for _, q := range qs {
			maxS := math.Inf(-1)
			s := make([]float64, len(q.rows))
			for i, r := range q.rows {
				for j := range w {
					s[i] += w[j] * std[r][j]
				}
				maxS = math.Max(maxS, s[i])
			}
			total, posTotal := 0.0, 0.0
			for i, r := range q.rows {
				s[i] = math.Exp(s[i] - maxS)
				total += s[i]
				if set.labels[r] == 1 {
					posTotal += s[i]
				}
			}
			for i, r := range q.rows {
				coef := -s[i] / total
				if set.labels[r] == 1 {
					coef += s[i] / posTotal
				}
				for j := range grad {
					grad[j] += coef * std[r][j]
				}
			}
		}
		for j := range w {
			g := grad[j]/float64(len(qs)) - l2*w[j]/float64(len(qs))
			m1[j] = b1*m1[j] + (1-b1)*g
			m2[j] = b2*m2[j] + (1-b2)*g*g
			mh := m1[j] / (1 - math.Pow(b1, float64(ep)))
			vh := m2[j] / (1 - math.Pow(b2, float64(ep)))
			w[j] += lr * mh / (math.Sqrt(vh) + eps)
			if sign[j]*w[j] < 0 {
				w[j] = 0 // projected onto the direction the feature is known to point
			}
		}
	}
	return w
}

// knownDirection are features whose effect on "this sentence answers" is known before any data:
// stating more of the question never hurts, lacking its names or numbers never helps. The ranker's
// weights are kept to these signs, so that a feature that barely varies in the training data
// (whether the document names the question's subject, in one-article questions) cannot take a
// weight of the wrong sign by chance and then decide questions asked of many documents.
var knownDirection = map[string]float64{
	"coverage": 1, "context_coverage": 1, "coverage_vs_best": 1, "coverage_rank": 1, "terms_share": 1,
	"bigrams": 1, "doc_relevance": 1, "passage": 1, "passage_top": 1, "type_hit": 1, "type_near": 1, "attribute": 1,
	"names_missing_doc": -1, "names_missing_unit": -1, "names_unbridged": -1, "numbers_missing": -1, "opposite": -1,
	"attribute_unnamed": -1, "focus_coverage": 1,
}

func signs() []float64 {
	names := extractive.FeatureNames()
	out := make([]float64, len(names))
	for i, n := range names {
		out[i] = knownDirection[n]
	}
	return out
}

// rankingQuestions are the questions that teach a ranking: answerable, with candidates that hold
// the answer and candidates that do not.
func rankingQuestions(set trainingSet) []question {
	var qs []question
	for _, q := range set.questions {
		pos := 0
		for _, r := range q.rows {
			pos += int(set.labels[r])
		}
		if q.answerable && pos > 0 && pos < len(q.rows) {
			qs = append(qs, q)
		}
	}
	return qs
}
