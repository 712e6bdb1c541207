package extractive

import "github.com/researchd/researchd/engine/sources"

// storeRead stores the documents a run read closely (each once): first those of the cited
// passages, in citation order, then the others the findings read. Every citation then points to a
// stored copy (context and corpus files live outside the workspace), and sources/ lists what the
// run read.
func storeRead(srcs *sources.Store, c *corpus, quotes []quoteRef, found []finding) error {
	done := map[int]bool{}
	save := func(d int) error {
		if done[d] {
			return nil
		}
		done[d] = true
		_, err := srcs.Save(sources.FromDocument(c.docs[d]))
		return err
	}
	for _, q := range quotes {
		var d int
		if q.Unit >= 0 {
			d = c.units[q.Unit].Doc
		} else {
			d = c.tables[q.Table].Doc
		}
		if err := save(d); err != nil {
			return err
		}
	}
	for _, f := range found {
		for _, d := range f.Read {
			if err := save(d); err != nil {
				return err
			}
		}
	}
	return nil
}
