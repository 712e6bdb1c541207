package main

import (
	"math"
	"slices"
)

// Gradient-boosted regression trees on a listwise objective: for each question, the probability
// that candidate i answers is softmax(F(x_i)) over its candidates, and the log-likelihood of the
// candidates holding the answer is maximised. Each round fits one tree to the loss's gradient and
// curvature (Newton boosting, as XGBoost does), with split points taken from feature quantiles.

// node is one node of a tree: a split (Feature, Threshold, Left, Right) or a leaf (Leaf=true, Value).
type node struct {
	Feature   int     `json:"f,omitempty"`
	Threshold float64 `json:"t,omitempty"`
	Left      int     `json:"l,omitempty"`
	Right     int     `json:"r,omitempty"`
	Leaf      bool    `json:"leaf,omitempty"`
	Value     float64 `json:"v,omitempty"`
}

type tree []node

func (t tree) eval(x []float64) float64 {
	i := 0
	for !t[i].Leaf {
		if x[t[i].Feature] < t[i].Threshold {
			i = t[i].Left
		} else {
			i = t[i].Right
		}
	}
	return t[i].Value
}

type boostParams struct {
	rounds, depth, bins  int
	eta, lambda, minHess float64
}

// fitBoosted returns the trees. Only answerable questions with both kinds of candidate teach the
// ranking.
func fitBoosted(set trainingSet, p boostParams) []tree {
	qs := rankingQuestions(set)
	nf := len(set.rows[0])
	cuts := quantileCuts(set.rows, nf, p.bins)
	binned := make([][]uint8, len(set.rows))
	for r, x := range set.rows {
		binned[r] = make([]uint8, nf)
		for j, v := range x {
			binned[r][j] = uint8(binOf(cuts[j], v))
		}
	}
	var rows []int
	for _, q := range qs {
		rows = append(rows, q.rows...)
	}
	F := make([]float64, len(set.rows))
	g := make([]float64, len(set.rows))
	h := make([]float64, len(set.rows))
	var trees []tree
	for round := 0; round < p.rounds; round++ {
		for _, q := range qs {
			maxF := math.Inf(-1)
			for _, r := range q.rows {
				maxF = math.Max(maxF, F[r])
			}
			total, pos := 0.0, 0.0
			for _, r := range q.rows {
				e := math.Exp(F[r] - maxF)
				total += e
				pos += set.labels[r]
			}
			for _, r := range q.rows {
				pr := math.Exp(F[r]-maxF) / total
				g[r] = pr - set.labels[r]/pos
				h[r] = math.Max(pr*(1-pr), 1e-6)
			}
		}
		t := growTree(rows, binned, cuts, g, h, p)
		for _, r := range rows {
			F[r] += t.eval(set.rows[r])
		}
		trees = append(trees, t)
	}
	return trees
}

// quantileCuts are up to bins-1 distinct split values per feature.
func quantileCuts(rows [][]float64, nf, bins int) [][]float64 {
	cuts := make([][]float64, nf)
	vals := make([]float64, len(rows))
	for j := 0; j < nf; j++ {
		for r, x := range rows {
			vals[r] = x[j]
		}
		slices.Sort(vals)
		var c []float64
		for b := 1; b < bins; b++ {
			v := vals[len(vals)*b/bins]
			if (len(c) == 0 || v > c[len(c)-1]) && v > vals[0] {
				c = append(c, v)
			}
		}
		cuts[j] = c
	}
	return cuts
}

// binOf is the number of cuts at or below v: rows in bin b have cuts[b-1] <= v < cuts[b].
func binOf(cuts []float64, v float64) int {
	b, _ := slices.BinarySearch(cuts, v)
	if b < len(cuts) && cuts[b] == v {
		b++
	}
	return b
}

type split struct {
	gain      float64
	feature   int
	bin       int // rows with bin < this go left
	threshold float64
}

func growTree(rows []int, binned [][]uint8, cuts [][]float64, g, h []float64, p boostParams) tree {
	t := tree{{}}
	var grow func(at int, rows []int, depth int)
	grow = func(at int, rows []int, depth int) {
		G, H := 0.0, 0.0
		for _, r := range rows {
			G += g[r]
			H += h[r]
		}
		leaf := node{Leaf: true, Value: -p.eta * G / (H + p.lambda)}
		if depth == p.depth || H < 2*p.minHess {
			t[at] = leaf
			return
		}
		best := bestSplit(rows, binned, cuts, g, h, G, H, p)
		if best.gain <= 0 {
			t[at] = leaf
			return
		}
		var left, right []int
		for _, r := range rows {
			if int(binned[r][best.feature]) < best.bin {
				left = append(left, r)
			} else {
				right = append(right, r)
			}
		}
		l, r := len(t), len(t)+1
		t = append(t, node{}, node{})
		t[at] = node{Feature: best.feature, Threshold: best.threshold, Left: l, Right: r}
		grow(l, left, depth+1)
		grow(r, right, depth+1)
	}
	grow(0, rows, 0)
	return t
}

func bestSplit(rows []int, binned [][]uint8, cuts [][]float64, g, h []float64, G, H float64, p boostParams) split {
	best := split{}
	parent := G * G / (H + p.lambda)
	for j := range cuts {
		nb := len(cuts[j]) + 1
		if nb < 2 {
			continue
		}
		gs, hs := make([]float64, nb), make([]float64, nb)
		for _, r := range rows {
			b := binned[r][j]
			gs[b] += g[r]
			hs[b] += h[r]
		}
		gl, hl := 0.0, 0.0
		for b := 1; b < nb; b++ {
			gl += gs[b-1]
			hl += hs[b-1]
			gr, hr := G-gl, H-hl
			if hl < p.minHess || hr < p.minHess {
				continue
			}
			if gain := gl*gl/(hl+p.lambda) + gr*gr/(hr+p.lambda) - parent; gain > best.gain {
				best = split{gain: gain, feature: j, bin: b, threshold: cuts[j][b-1]}
			}
		}
	}
	return best
}
