package engine

import (
	"fmt"
	"testing"

	"github.com/researchd/researchd/qadata"
)

func TestDebugConf(t *testing.T) {
	items, _ := qadata.SQuAD("../../shared/data/squad2-train-sample.json", qadata.Dev, 0, 1)
	cs := map[string]*corpus{}
	var stats [2][4]float64
	for _, it := range items {
		d := it.Docs[0]
		if cs[d.Name] == nil {
			doc, _ := extract(d.Name, []byte(d.Text))
			cs[d.Name] = newCorpus([]document{doc})
		}
		c := cs[d.Name].forRun()
		f := c.find(plainSub(it.Question), findOptions{Candidates: 40, Items: 4, Sources: 3, Answers: 1, Support: 1})
		a := 0
		if d.Name != "Spectre_2015_film.txt" {
			continue
		}
		if it.Answerable() {
			a = 1
		}
		stats[a][0]++
		stats[a][1] += f.Best
		if !f.answered() {
			stats[a][2]++
		} else if qadata.ContainsAnswer(c.units[f.Answer[0]].Text, it.Answers) {
			stats[a][3]++
		}
	}
	for a := 0; a < 2; a++ {
		fmt.Printf("answerable=%d n=%v meanConf=%.3f abstain=%.3f right=%.3f\n", a, stats[a][0], stats[a][1]/stats[a][0], stats[a][2]/stats[a][0], stats[a][3]/stats[a][0])
	}
}
