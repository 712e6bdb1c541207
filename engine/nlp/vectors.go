package nlp

import (
	_ "embed"
	"encoding/binary"
	"math"
	"sync"
)

// vectorsBin holds GloVe word vectors of the commonest English words, written by cmd/wordvectors
// (licence: third_party/wordvectors/LICENSE).
//
//go:embed vectors.bin
var vectorsBin []byte

// vectorTable maps a stem to the unit-length vector of its commonest word.
type vectorTable struct {
	dims int
	vec  map[string][]float32
}

var loadVectors = sync.OnceValue(func() vectorTable {
	b := vectorsBin
	t := vectorTable{vec: map[string][]float32{}}
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
	}
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
