package extractive

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"sync"

	"github.com/researchd/researchd/engine/extract"
)

// corpusCache keeps the indexes of the last few source sets an engine read. Jobs that search the
// same folders (RESEARCH_CORPUS_DIR, an expert's context files) read the same documents, and
// indexing them (splitting, stemming, counting) costs most of such a run's CPU. An index is only
// read once built, except its idf cache, which each run gets fresh (corpus.forRun).
type corpusCache struct {
	mu      sync.Mutex
	entries []cachedCorpus // most recently used first
}

type cachedCorpus struct {
	key [sha256.Size]byte
	c   *corpus
}

// corpusCacheSize bounds the indexes kept (each is about the size of its documents' text, a few
// times over).
const corpusCacheSize = 4

// corpus returns the index of docs, built or kept.
func (cc *corpusCache) corpus(docs []extract.Document) *corpus {
	if cc == nil {
		return newCorpus(docs)
	}
	key := docsKey(docs)
	cc.mu.Lock()
	for i, e := range cc.entries {
		if e.key == key {
			copy(cc.entries[1:i+1], cc.entries[:i])
			cc.entries[0] = e
			cc.mu.Unlock()
			return e.c.forRun()
		}
	}
	cc.mu.Unlock()
	c := newCorpus(docs)
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.entries = append([]cachedCorpus{{key, c}}, cc.entries...)
	if len(cc.entries) > corpusCacheSize {
		cc.entries = cc.entries[:corpusCacheSize]
	}
	return c.forRun()
}

// forRun is a shallow copy with its own idf cache: the only part of an index a run writes.
func (c *corpus) forRun() *corpus {
	cp := *c
	cp.idfCache = map[string]float64{}
	return &cp
}

// docsKey identifies a source set by everything its index is built from.
func docsKey(docs []extract.Document) [sha256.Size]byte {
	h := sha256.New()
	for _, d := range docs {
		field(h, d.Path)
		field(h, d.Kind)
		field(h, d.Title)
		field(h, d.Retrieved.UTC().Format("2006-01-02T15:04:05.999999999"))
		if d.Web {
			field(h, "web")
		}
		_ = binary.Write(h, binary.LittleEndian, uint64(len(d.Lines)))
		for _, l := range d.Lines {
			field(h, l)
		}
	}
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// field writes s length-prefixed, so that no two different sequences hash alike.
func field(h hash.Hash, s string) {
	_ = binary.Write(h, binary.LittleEndian, uint64(len(s)))
	_, _ = h.Write([]byte(s))
}
