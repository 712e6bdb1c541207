package nlp

import (
	_ "embed"
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"sync"
)

// vectorsBin holds GloVe word vectors of the commonest English words, written by cmd/wordvectors
// (licence: third_party/wordvectors/LICENSE).
//
//go:embed vectors.bin
var vectorsBin []byte

// vectorTable maps a stem to the unit-length vector of its commonest word.
type vectorTable struct {
	dims  int
	vec   map[string][]float32
	word  map[string]string // stem → its commonest word
	stems []string          // in frequency order
	// kth is, per stem, the cosine of its Neighbours-th nearest stem (neighbours.bin): a stem whose
	// cosine with it is at least that is one of its neighbours.
	kth map[string]float32
}

var loadVectors = sync.OnceValue(func() vectorTable {
	b := vectorsBin
	t := vectorTable{vec: map[string][]float32{}, word: map[string]string{}}
	if len(b) < 13 || string(b[:5]) != "RDWV1" {
		return t // an empty table: every similarity is unknown
	}
	n := int(binary.LittleEndian.Uint32(b[5:]))
	t.dims = int(binary.LittleEndian.Uint32(b[9:]))
	at := 13
	words := make([]string, n)
	for i := range words {
		l := int(b[at])
		words[i] = string(b[at+1 : at+1+l])
		at += 1 + l
	}
	for i, w := range words {
		s := Stem(w)
		if _, ok := t.vec[s]; ok {
			continue // the commonest word of a stem stands for it
		}
		v := make([]float32, t.dims)
		for d := range v {
			v[d] = float32(int8(b[at+i*t.dims+d])) / 127
		}
		t.vec[s] = v
		t.word[s] = w
		t.stems = append(t.stems, s)
	}
	t.kth = readKth(neighboursBin, t.stems)
	return t
})

// Similarity is the cosine of the vectors of two stems, and whether both have one.
func Similarity(a, b string) (float64, bool) {
	t := loadVectors()
	va, vb := t.vec[a], t.vec[b]
	if va == nil || vb == nil {
		return 0, false
	}
	return float64(dot(va, vb)), true
}

// Vector is the unit-length vector of a stem, nil for a word outside the table.
func Vector(s string) []float32 { return loadVectors().vec[s] }

func dot(a, b []float32) float32 {
	var z float32
	for i := range a {
		z += a[i] * b[i]
	}
	return z
}

// Cosine is the cosine of two vectors of the same length (0 when either is zero).
func Cosine(a, b []float32) float64 {
	na, nb := dot(a, a), dot(b, b)
	if na == 0 || nb == 0 {
		return 0
	}
	return float64(dot(a, b)) / math.Sqrt(float64(na)*float64(nb))
}

// neighboursBin holds, for each stem of vectorsBin in order, the cosine of its Neighbours-th
// nearest stem, written by cmd/wordvectors --neighbours from vectorsBin (so that finding whether
// two words are neighbours costs one cosine, not a scan of the table):
//
//	"RDNB1" count:uint32, then count float32
//
//go:embed neighbours.bin
var neighboursBin []byte

// readKth reads neighbours.bin for stems; a file written for another table gives none.
func readKth(b []byte, stems []string) map[string]float32 {
	if len(b) < 9 || string(b[:5]) != "RDNB1" || int(binary.LittleEndian.Uint32(b[5:])) != len(stems) || len(b) != 9+4*len(stems) {
		return nil
	}
	m := make(map[string]float32, len(stems))
	for i, s := range stems {
		m[s] = math.Float32frombits(binary.LittleEndian.Uint32(b[9+4*i:]))
	}
	return m
}

// Neighbouring: b is one of a's Neighbours nearest stems by word vectors (false when either has no
// vector).
func Neighbouring(a, b string) bool {
	t := loadVectors()
	k, ok := t.kth[a]
	va, vb := t.vec[a], t.vec[b]
	return ok && vb != nil && a != b && dot(va, vb) >= k
}

// KthCosines is, for every stem of the table in order, the cosine of its n-th nearest stem: the
// content of neighbours.bin (cmd/wordvectors --neighbours). It compares every pair of stems.
func KthCosines(n int) []float32 {
	t := loadVectors()
	out := make([]float32, len(t.stems))
	for i, s := range t.stems {
		near := Nearest(s, n)
		if len(near) == n {
			out[i] = dot(t.vec[s], t.vec[near[n-1]])
		}
	}
	return out
}

// Nearest are the n stems whose vectors are closest to stem's (itself left out), closest first; nil
// for a stem outside the table. It scans the whole table (about a millisecond).
func Nearest(stem string, n int) []string {
	t := loadVectors()
	v := t.vec[stem]
	if v == nil {
		return nil
	}
	type near struct {
		stem string
		cos  float32
	}
	var best []near
	for _, s := range t.stems {
		if s == stem {
			continue
		}
		c := dot(v, t.vec[s])
		if len(best) == n && c <= best[n-1].cos {
			continue
		}
		i := sort.Search(len(best), func(i int) bool { return best[i].cos < c })
		best = slices.Insert(best, i, near{s, c})
		if len(best) > n {
			best = best[:n]
		}
	}
	out := make([]string, len(best))
	for i, b := range best {
		out[i] = b.stem
	}
	return out
}

// Word is the commonest word of a stem in the vector table ("" outside it).
func Word(stem string) string { return loadVectors().word[stem] }

// Neighbours is how many nearest stems count as a word's neighbours: words of the same kind as it
// ("rain" of "snow", "ninth" of "eighth"), more often than words that say the same.
const Neighbours = 10
