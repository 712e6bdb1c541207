package extractive

import (
	"strings"

	"github.com/researchd/researchd/engine/output"
)

// siteInput lists the sources the run read closely with the quotes the report cites from them,
// and the numeric tables of those sources.
func (r *extractiveRun) siteInput(found []finding) output.Site {
	if !r.depth.Site {
		return output.Site{}
	}
	var in output.Site
	byDoc := map[int]int{}
	addDoc := func(d int) int {
		if i, ok := byDoc[d]; ok {
			return i
		}
		byDoc[d] = len(in.Sources)
		kind := r.c.docs[d].Kind
		if kind != "text" {
			kind = strings.ToUpper(kind)
		}
		in.Sources = append(in.Sources, output.SiteSource{Path: r.c.docs[d].Path, Kind: kind})
		return byDoc[d]
	}
	for _, ref := range r.cites.order {
		i := addDoc(r.refDoc(ref))
		text := ""
		if ref.Unit >= 0 {
			text = r.c.units[ref.Unit].Text
		} else {
			text = strings.Join(r.tableQuoteLines(ref), "\n")
		}
		where := strings.TrimPrefix(r.citeOf(ref), "`"+r.c.docs[r.refDoc(ref)].Path+"`, ")
		in.Sources[i].Quotes = append(in.Sources[i].Quotes, output.SiteQuote{N: r.cites.num[ref.key()], Where: where, Text: text})
	}
	read := map[int]bool{}
	for _, f := range found {
		for _, d := range f.Read {
			addDoc(d)
			read[d] = true
		}
	}
	for _, t := range r.c.tables {
		if read[t.Doc] {
			in.Tables = append(in.Tables, output.SiteTable{Title: t.Title, Source: r.c.docs[t.Doc].Path, Header: t.Header, Rows: t.Rows})
		}
	}
	return in
}
