// Command trainanswer fits the extractive engine's answer model from public question-answering
// training data and writes engine/extractive/answer_model.json.
//
// Every question of the training split (qadata: SQuAD 2.0 train articles, their unanswerable
// questions, questions paired with an article that does not hold their answer, and HotpotQA train
// records) is run through the engine's own retrieval; each candidate sentence it reads is labelled
// by whether it contains a gold answer. A logistic regression (Newton's method, L2) is fitted on the
// candidates' features. The abstention threshold is then chosen on the same questions to maximise
// overall accuracy: an answerable question is right when its best candidate clears the threshold
// and contains the answer, an unanswerable one when nothing clears it.
//
//	go run ./cmd/trainanswer --data ../shared/data
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/researchd/researchd/qadata"
)

var (
	flagRounds  = flag.Int("rounds", 200, "boosting rounds")
	flagDepth   = flag.Int("depth", 4, "tree depth")
	flagMinHess = flag.Float64("min-hess", 1, "least curvature (about: candidates) in a leaf")
)

func main() {
	data := flag.String("data", "../shared/data", "folder with squad2-train-sample.json and hotpot-train-sample.json")
	out := flag.String("out", "engine/extractive/answer_model.json", "model file to write")
	k := flag.Int("k", 40, "candidates read per question")
	l2 := flag.Float64("l2", 1.0, "L2 penalty")
	validateOnly := flag.Bool("validate", false, "measure the ranking on held-back folds of the training split instead of writing a model")
	flag.Parse()
	if err := run(*data, *out, *k, *l2, *validateOnly); err != nil {
		slog.Error("trainanswer", "err", err)
		os.Exit(1)
	}
}

func run(data, out string, k int, l2 float64, validateOnly bool) error {
	items, err := load(data)
	if err != nil {
		return err
	}
	set := collect(items, k)
	rec, byFeature := recall(set)
	slog.Info("candidates", "questions", len(set.questions), "rows", len(set.rows), "recall", rec)
	slog.Debug("ranking by one feature alone", "best_candidate_right", byFeature)
	if validateOnly {
		validate(set, boostParams{rounds: *flagRounds, depth: *flagDepth, bins: 32, eta: 0.1, lambda: 1, minHess: *flagMinHess}, l2)
		return nil
	}
	m := fit(set, l2)
	m.Data = describe(items, k, l2)
	enc, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode model: %w", err)
	}
	if err := os.WriteFile(out, append(enc, '\n'), 0o644); err != nil {
		return fmt.Errorf("write model: %w", err)
	}
	fmt.Printf("wrote %s: threshold %.4f, support %.4f\n", out, m.Threshold, m.Support)
	for _, key := range sortedKeys(m.Fit) {
		fmt.Printf("  %-36s %v\n", key, m.Fit[key])
	}
	return nil
}

// swapShare is how many swapped-article questions are added per answerable SQuAD question.
const swapShare = 0.3

// poolShare is the share of SQuAD questions also asked against their article among three others.
const poolShare = 0.15

// alterShare is the share of answerable SQuAD questions altered into unanswerable ones.
const alterShare = 0.3

func load(data string) ([]qadata.Item, error) {
	squad, err := qadata.SQuAD(filepath.Join(data, "squad2-train-sample.json"), qadata.Train, swapShare, 2026)
	if err != nil {
		return nil, err
	}
	hotpot, err := qadata.Hotpot(filepath.Join(data, "hotpot-train-sample.json"), qadata.Train)
	if err != nil {
		return nil, err
	}
	var out []qadata.Item
	out = append(out, squad...)
	out = append(out, qadata.Alter(squad, alterShare, 2026)...)
	out = append(out, qadata.Pool(squad, poolShare, 3, 2026)...)
	for _, it := range hotpot {
		// A yes/no answer is in no sentence: such questions cannot label candidates.
		if a := qadata.Normalize(it.Answers[0]); a != "yes" && a != "no" {
			out = append(out, it)
		}
	}
	return out, nil
}

func describe(items []qadata.Item, k int, l2 float64) map[string]any {
	kinds := map[string]int{}
	for _, it := range items {
		key := it.Kind
		if it.Kind == qadata.KindSQuAD && !it.Answerable() {
			key = "squad_unanswerable"
		}
		kinds[key]++
	}
	return map[string]any{
		"source":     "SQuAD 2.0 and HotpotQA train samples (shared/data), qadata train split",
		"questions":  kinds,
		"candidates": k,
		"l2":         l2,
		"command":    "go run ./cmd/trainanswer --data ../shared/data",
	}
}
