package main

import (
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/qadata"
)

// question is one training question: its candidates' rows and its kind.
type question struct {
	rows       []int // indexes into trainingSet.rows
	answerable bool
	kind       string
	docs       string // the document set's key
}

type trainingSet struct {
	rows      [][]float64
	labels    []float64
	questions []question
}

// collect reads every question's candidates; documents are indexed once per distinct set.
func collect(items []qadata.Item, k int) trainingSet {
	var set trainingSet
	indexes := map[string]*extractive.CandidateIndex{}
	for _, it := range items {
		key := ""
		for _, d := range it.Docs {
			key += d.Name + "\x00"
		}
		ix, ok := indexes[key]
		if !ok {
			files := make([]engine.SourceFile, len(it.Docs))
			for i, d := range it.Docs {
				files[i] = engine.SourceFile{Name: d.Name, Data: []byte(d.Text)}
			}
			ix = extractive.NewCandidateIndex(files)
			if len(files) == 1 { // only single articles recur; a record's or a pool's set does not
				indexes[key] = ix
			}
		}
		q := question{answerable: it.Answerable(), kind: it.Kind, docs: key}
		if it.Kind == qadata.KindSQuAD && !it.Answerable() {
			q.kind = "squad_unanswerable"
		}
		for _, c := range ix.Candidates(it.Question, k) {
			label := 0.0
			if it.Answerable() && qadata.ContainsAnswer(c.Text, it.Answers) && (it.Kind != qadata.KindPooled || c.Doc == it.Docs[0].Name) {
				label = 1
			}
			q.rows = append(q.rows, len(set.rows))
			set.rows = append(set.rows, c.Features)
			set.labels = append(set.labels, label)
		}
		set.questions = append(set.questions, q)
	}
	return set
}

func standardize(rows [][]float64) (mean, scale []float64) {
	n := 0
	if len(rows) > 0 {
		n = len(rows[0])
	}
	mean, scale = make([]float64, n), make([]float64, n)
	for _, r := range rows {
		for j, v := range r {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(max(len(rows), 1))
	}
	for _, r := range rows {
		for j, v := range r {
			scale[j] += (v - mean[j]) * (v - mean[j])
		}
	}
	for j := range scale {
		scale[j] = math.Sqrt(scale[j] / float64(max(len(rows), 1)))
		if scale[j] < 1e-9 {
			scale[j] = 1 // a constant feature: its weight stays 0 under the penalty
		}
	}
	return mean, scale
}

// fitLogistic maximises the L2-penalised log-likelihood by Newton's method on standardised
// features (the bias is not penalised).
func fitLogistic(rows [][]float64, y, mean, scale []float64, l2 float64, iters int) ([]float64, float64) {
	return fitWeightedLogistic(rows, y, nil, mean, scale, l2, iters)
}

// fitWeightedLogistic is fitLogistic with a weight per row (nil: all 1).
func fitWeightedLogistic(rows [][]float64, y, weight, mean, scale []float64, l2 float64, iters int) ([]float64, float64) {
	n := len(mean) + 1
	beta := make([]float64, n) // beta[n-1] is the bias
	z := make([]float64, n)
	for it := 0; it < iters; it++ {
		grad := make([]float64, n)
		hess := make([][]float64, n)
		for i := range hess {
			hess[i] = make([]float64, n)
		}
		for i, r := range rows {
			for j, v := range r {
				z[j] = (v - mean[j]) / scale[j]
			}
			z[n-1] = 1
			eta := 0.0
			for j := range z {
				eta += beta[j] * z[j]
			}
			p := 1 / (1 + math.Exp(-eta))
			rw := 1.0
			if weight != nil {
				rw = weight[i]
			}
			wgt := rw * p * (1 - p)
			for a := range z {
				grad[a] += rw * (y[i] - p) * z[a]
				for b := a; b < n; b++ {
					hess[a][b] += wgt * z[a] * z[b]
				}
			}
		}
		for a := 0; a < n; a++ {
			for b := 0; b < a; b++ {
				hess[a][b] = hess[b][a]
			}
			if a < n-1 {
				grad[a] -= l2 * beta[a]
				hess[a][a] += l2
			}
		}
		step := solve(hess, grad)
		change := 0.0
		for j := range beta {
			beta[j] += step[j]
			change = math.Max(change, math.Abs(step[j]))
		}
		if change < 1e-6 {
			break
		}
	}
	return beta[:n-1], beta[n-1]
}

// solve solves a x = b by Gaussian elimination with partial pivoting (a is small and positive
// definite).
func solve(a [][]float64, b []float64) []float64 {
	n := len(b)
	m := make([][]float64, n)
	for i := range a {
		m[i] = append(slices.Clone(a[i]), b[i])
	}
	for col := 0; col < n; col++ {
		piv := col
		for r := col + 1; r < n; r++ {
			if math.Abs(m[r][col]) > math.Abs(m[piv][col]) {
				piv = r
			}
		}
		m[col], m[piv] = m[piv], m[col]
		if math.Abs(m[col][col]) < 1e-12 {
			continue
		}
		for r := col + 1; r < n; r++ {
			f := m[r][col] / m[col][col]
			for c := col; c <= n; c++ {
				m[r][c] -= f * m[col][c]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		if math.Abs(m[r][r]) < 1e-12 {
			continue
		}
		v := m[r][n]
		for c := r + 1; c < n; c++ {
			v -= m[r][c] * x[c]
		}
		x[r] = v / m[r][r]
	}
	return x
}

// kindWeight weighs each kind of question in the accuracy the threshold maximises: answerable and
// unanswerable questions count about equally; of the unanswerable ones, questions that look
// answerable (SQuAD's own and altered ones) count four times as much as those asked of an
// unrelated article; multi-document questions count less, as they are few.
var kindWeight = map[string]float64{"squad": 0.4, "pooled": 0.1, "hotpot": 0.15, "squad_unanswerable": 0.25, "altered": 0.15, "swapped": 0.1}

// outcome is one question's confidence and whether its best candidate holds the answer.
type outcome struct {
	best  float64
	right bool
	q     question
}

// chooseThreshold picks the abstention threshold that maximises weighted overall accuracy (the
// lowest among those that do as well within the estimate's standard error).
func chooseThreshold(os []outcome, set trainingSet) (float64, map[string]any) {
	totals := map[string]float64{}
	for _, o := range os {
		totals[o.q.kind]++
	}
	acc := func(t float64) (float64, map[string]float64) {
		right := map[string]float64{}
		for _, o := range os {
			answered := o.best >= t
			if (o.q.answerable && answered && o.right) || (!o.q.answerable && !answered) {
				right[o.q.kind]++
			}
		}
		score, wsum := 0.0, 0.0
		for kind, n := range totals {
			score += kindWeight[kind] * right[kind] / n
			wsum += kindWeight[kind]
		}
		return score / wsum, right
	}
	var cands []float64
	for _, o := range os {
		cands = append(cands, o.best)
	}
	sort.Float64s(cands)
	var ts, accs []float64
	bestA := -1.0
	for i := 0; i < len(cands); i += max(1, len(cands)/2000) {
		a, _ := acc(cands[i])
		ts, accs = append(ts, cands[i]), append(accs, a)
		bestA = max(bestA, a)
	}
	// The lowest threshold within one standard error of the best: a higher one that scores no
	// better than that is noise in the estimate, and would refuse answers for nothing.
	se := math.Sqrt(bestA * (1 - bestA) / float64(len(os)))
	bestT := 0.5
	if i := slices.IndexFunc(accs, func(a float64) bool { return a >= bestA-se }); i >= 0 {
		bestT = ts[i]
	}
	a, right := acc(bestT)
	fit := map[string]any{"weighted_accuracy_oof": round(a), "weighted_accuracy_oof_max": round(bestA)}
	for kind, n := range totals {
		fit["right_oof_"+kind] = round(right[kind] / n)
	}
	// The ranking alone: how often the best candidate of an answerable question holds the answer.
	top, ans := 0, 0
	for _, o := range os {
		if o.q.answerable {
			ans++
			if o.right {
				top++
			}
		}
	}
	fit["best_candidate_right_oof"] = round(float64(top) / float64(max(ans, 1)))
	return round(bestT), fit
}

// chooseSupport picks the probability a further (not the best) candidate needs to be quoted as
// support: the lowest at which, among answerable questions' other candidates, those quoted are more
// often than not sentences that state the answer.
func chooseSupport(set trainingSet, scores []float64, calibration [2]float64) float64 {
	prob := func(r int) float64 { return 1 / (1 + math.Exp(-(calibration[0]*scores[r] + calibration[1]))) }
	type pl struct{ p, y float64 }
	var xs []pl
	pos := 0.0
	for _, q := range set.questions {
		if !q.answerable || len(q.rows) < 2 {
			continue
		}
		ps := make([]pl, 0, len(q.rows))
		for _, r := range q.rows {
			ps = append(ps, pl{prob(r), set.labels[r]})
		}
		slices.SortFunc(ps, func(a, b pl) int { return cmpFloat(b.p, a.p) })
		for _, x := range ps[1:] {
			xs = append(xs, x)
			pos += x.y
		}
	}
	slices.SortFunc(xs, func(a, b pl) int { return cmpFloat(b.p, a.p) })
	// The lowest probability at which the further candidates quoted are more often than not
	// sentences that state the answer.
	bestT, tp := 1.0, 0.0
	for i, x := range xs {
		tp += x.y
		if tp/float64(i+1) >= 0.5 {
			bestT = x.p
		}
	}
	return round(bestT)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func round(v float64) float64 { return math.Round(v*1e4) / 1e4 }

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// recall is the share of answerable questions with some candidate holding the answer, and the
// share whose candidate best by feature f alone holds it (how much each feature ranks by itself).
func recall(set trainingSet) (float64, map[string]float64) {
	names := extractive.FeatureNames()
	any, n := 0, 0
	byFeature := map[string]float64{}
	for _, q := range set.questions {
		if !q.answerable {
			continue
		}
		n++
		for _, r := range q.rows {
			if set.labels[r] == 1 {
				any++
				break
			}
		}
		for j, name := range names {
			best, right := math.Inf(-1), false
			for _, r := range q.rows {
				if v := set.rows[r][j]; v > best {
					best, right = v, set.labels[r] == 1
				}
			}
			if right {
				byFeature[name]++
			}
		}
	}
	for k := range byFeature {
		byFeature[k] = round(byFeature[k] / float64(max(n, 1)))
	}
	return round(float64(any) / float64(max(n, 1))), byFeature
}
