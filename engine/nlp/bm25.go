package nlp

import "math"

// BM25 (Robertson/Spärck Jones) weighs terms for both engines' retrieval: the extractive engine's
// document and paragraph relevance, and the passage index behind the openai engine's search_files.
const bm25K1, bm25B = 1.2, 0.75

// BM25 is one term's BM25 weight (k1=1.2, b=0.75) in a text of length terms, where the texts
// average avgLen terms.
func BM25(idf, tf, length, avgLen float64) float64 {
	norm := 1 - bm25B + bm25B*length/avgLen
	return idf * tf * (bm25K1 + 1) / (tf + bm25K1*norm)
}

// BM25IDF is BM25's inverse document frequency (the +1 form, never negative) of a term in df of n texts.
func BM25IDF(n, df float64) float64 { return math.Log(1 + (n-df+0.5)/(df+0.5)) }
