package extractive

import (
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// Sections: a document's headings say what the text under them is about. A question that asks for
// several things (causes, effects, risks, a comparison, a briefing) is best answered from the
// section whose heading names what it asks: "What causes the heat island" holds the causes, one
// paragraph each, even when an introduction mentions "the causes" in the question's own words.

// section is the run of units under one heading of a document (not its title), or under a run-in
// heading ("Error E21." opening a paragraph) within one.
type section struct {
	Doc   int
	Head  map[string]bool // the heading's terms
	Units []int
	RunIn string // the run-in heading ("" for a section under a heading)
}

// sectionsOf groups the units of the corpus by heading. Units under the document's title only
// (its introduction) are no section: the title is what the whole document is about.
func sectionsOf(c *corpus) []section {
	var out []section
	for u, un := range c.units {
		if un.Heading == "" || un.Heading == c.titles[un.Doc] {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Doc == un.Doc && c.units[out[n-1].Units[0]].Heading == un.Heading {
			out[n-1].Units = append(out[n-1].Units, u)
			continue
		}
		head := map[string]bool{}
		for _, t := range nlp.Terms(un.Heading + " " + c.parentOf(u)) {
			head[t] = true // "Why are we changing?" is about the lunch ordering system its page section names
		}
		out = append(out, section{Doc: un.Doc, Head: head, Units: []int{u}})
	}
	return append(c.withSubsections(out), runInSections(c)...)
}

// parentOf is the heading unit u's section is part of, when it is not the document's title.
func (c *corpus) parentOf(u int) string {
	if p := c.units[u].Parent; p != c.headings[c.units[u].Doc] {
		return p
	}
	return ""
}

// withSubsections makes a section hold the sections under its heading too ("Staff changes" over
// "Saying goodbye" and "Welcoming"): its own units, then theirs. A heading with no units of its
// own before its first subsection is a section of theirs alone.
func (c *corpus) withSubsections(secs []section) []section {
	at := map[[2]string]int{} // (document, heading) → index in secs
	for i, sec := range secs {
		key := [2]string{c.docs[sec.Doc].Path, c.units[sec.Units[0]].Heading}
		if _, ok := at[key]; !ok {
			at[key] = i
		}
	}
	for u, un := range c.units {
		p := c.parentOf(u)
		if p == "" {
			continue
		}
		key := [2]string{c.docs[un.Doc].Path, p}
		i, ok := at[key]
		if !ok {
			head := map[string]bool{}
			for _, t := range nlp.Terms(p) {
				head[t] = true
			}
			i, at[key] = len(secs), len(secs)
			secs = append(secs, section{Doc: un.Doc, Head: head})
		}
		secs[i].Units = append(secs[i].Units, u)
	}
	return secs
}

// runInSections are the paragraphs under run-in headings ("Results." opening a paragraph, or a
// bold lead-in: "**Error E21.** Water has collected …"), one section each.
func runInSections(c *corpus) []section {
	var out []section
	for u, un := range c.units {
		label := ""
		switch {
		case un.Section != "" && un.Section != un.Heading && un.Section != c.titles[un.Doc]:
			label = un.Section
		case u == 0 || c.units[u-1].Para != un.Para || c.units[u-1].Doc != un.Doc:
			if m := reBoldLead.FindStringSubmatch(un.Text); m != nil {
				label = m[1]
			}
		default:
			if n := len(out); n > 0 && out[n-1].Doc == un.Doc && c.units[out[n-1].Units[0]].Para == un.Para {
				out[n-1].Units = append(out[n-1].Units, u) // the rest of a bold-led paragraph
			}
			continue
		}
		if label == "" {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Doc == un.Doc && out[n-1].RunIn == label {
			out[n-1].Units = append(out[n-1].Units, u)
			continue
		}
		head := map[string]bool{}
		for _, t := range nlp.Terms(label) {
			head[t] = true
		}
		out = append(out, section{Doc: un.Doc, Head: head, Units: []int{u}, RunIn: label})
	}
	return out
}

// reBoldLead is a paragraph's bold lead-in of a few words ("**Error E21.** …").
var reBoldLead = regexp.MustCompile(`^\*\*([^*]{1,60}?)[.:]?\*\*`)

// runInList: a list asked of paragraphs under run-in headings ("Error E21.", "Error E34.") takes
// the first sentence of each whose heading states the focus as well as the best one does, labelled
// with its heading.
func (s *scorer) runInList(best section, focus []string, allowed func(u int) bool, n int) (answer []int, parts []string) {
	w := s.headMatch(best, focus)
	for _, sec := range s.c.sections {
		if sec.RunIn == "" || sec.Doc != best.Doc || s.c.units[sec.Units[0]].Heading != s.c.units[best.Units[0]].Heading ||
			s.headMatch(sec, focus) < w || len(answer) >= n {
			continue
		}
		if i := slices.IndexFunc(sec.Units, allowed); i >= 0 {
			label := strings.TrimRight(sec.RunIn, ".:")
			if reBoldLead.MatchString(s.c.units[sec.Units[i]].Text) {
				label = "" // the quote opens with it
			}
			answer, parts = append(answer, sec.Units[i]), append(parts, label)
		}
	}
	return answer, parts
}

// headMatch is the weight of focus terms a section's heading states (itself or by a synonym) that
// the document's title does not: what the heading adds to what the whole document is about.
func (s *scorer) headMatch(sec section, focus []string) float64 {
	title := s.c.titleTerms[sec.Doc]
	heading := ""
	if len(sec.Units) > 0 {
		heading = strings.TrimSpace(s.c.units[sec.Units[0]].Heading)
	}
	ownTerms := nlp.Terms(heading)
	own := section{Head: setOf(ownTerms)}
	got, gotOwn, matched := 0.0, 0.0, 0
	for _, t := range focus {
		if title[t] || !s.headStates(sec, t) {
			continue
		}
		if s.headStates(own, t) {
			gotOwn += s.w[t]
			matched++
		} else {
			got += s.w[t] // stated by the heading the section is part of
		}
	}
	// A heading that asks a question of its own names what it asks about in passing: "Can I have
	// it at the same time as my flu jab?" is not about what to bring to the jab, "What to bring" is.
	if n := len(own.Head); n > 0 && strings.HasSuffix(heading, "?") {
		gotOwn *= 0.5 + 0.5*min(1, float64(matched)/float64(n))
	}
	return got + gotOwn
}

// setOf is a set of terms.
func setOf(terms []string) map[string]bool {
	m := make(map[string]bool, len(terms))
	for _, t := range terms {
		m[t] = true
	}
	return m
}

// headStates: the section's heading states term t, a synonym, a unit or a derived form of it ("How
// to complain" for "complaint").
func (s *scorer) headStates(sec section, t string) bool {
	inHead := func(a string) bool { return sec.Head[a] }
	return sec.Head[t] || slices.ContainsFunc(s.q.Syn[t], inHead) || slices.ContainsFunc(s.q.Units[t], inHead) ||
		slices.ContainsFunc(derived(t), inHead)
}

// headNames: the section's heading states the last of terms, the head of a phrase such as
// "mowing time" ("How large a lawn can it mow?" is not about mowing time), unless the document's
// title already does.
func (s *scorer) headNames(sec section, terms []string) bool {
	if len(terms) < 2 {
		return true
	}
	t := terms[len(terms)-1]
	return s.headStates(sec, t) || s.c.titleTerms[sec.Doc][t]
}

// bestSection is the section whose heading best states the focus terms, in a document that
// mentions every name of the question; allowed filters units (a section needs one allowed unit).
// A heading's match counts in proportion to its document's relevance to the whole question: "how
// swifts raise their young" is answered by "Raising a family" in the article on swifts, not by a
// dryer manual's "typical times" that shares one word's synonym.
// minSectionRelevance is the least relevance to the whole question, against the most relevant
// document's, of a document whose heading answers: a course page's "Start date" does not say why an
// outage started when the postmortem is there.
const minSectionRelevance = 0.5

func (s *scorer) bestSection(focus []string, allowed func(u int) bool) (section, bool) {
	var best section
	bestW := 0.0
	rel := s.docRelevance()
	for _, sec := range s.c.sections {
		if !s.namesIn(sec.Doc) || (allowed != nil && !slices.ContainsFunc(sec.Units, allowed)) || rel[sec.Doc] < minSectionRelevance {
			continue
		}
		if sec.RunIn != "" && s.q.Shape != shapeList {
			continue // a run-in paragraph is one item of a list, not the answer to a reason or a briefing
		}
		w := s.headMatch(sec, focus) * rel[sec.Doc]
		if w > 0 && s.q.Shape == shapeList && len(s.q.Attribute) > 0 && !kindWords[s.q.Attribute[len(s.q.Attribute)-1]] &&
			s.headStates(sec, s.q.Attribute[len(s.q.Attribute)-1]) {
			w *= 2 // "what savings …": the heading naming the things asked for holds them ("Proposed savings")
		}
		if w > 0 && s.headAsksAlike(sec) {
			w *= 1.05 // "How to take Almeron", not "Before you take Almeron", for "how to take it"
		}
		if w > bestW {
			best, bestW = sec, w
		}
	}
	return best, bestW > 0
}

// kindWords name a kind of the thing asked for ("what types of membership"), not the thing.
var kindWords = map[string]bool{nlp.Stem("type"): true, nlp.Stem("kind"): true, nlp.Stem("sort"): true,
	nlp.Stem("form"): true, nlp.Stem("category"): true, nlp.Stem("variety"): true, nlp.Stem("way"): true}

// shortLead is the most words a paragraph's first sentence has when it only announces its point
// ("Heat harms health."): the sentence after it, which gives the evidence, joins it.
const shortLead = 6

// sectionPoints are the section's points, in order, at most n: with points, a section of several
// paragraphs or list items makes one point of each (its first sentence, and the next when the first
// only announces it); otherwise, or for a section of one paragraph, its sentences the model finds
// likeliest.
func (c *corpus) sectionPoints(sec section, ranked []scored, n int, points bool, skip func(u int) bool) []int {
	var units []int
	paras := map[int]bool{}
	for _, u := range sec.Units {
		if c.units[u].Kind != extract.UnitRow && (skip == nil || !skip(u)) {
			units = append(units, u)
			paras[c.units[u].Para] = true
		}
	}
	if len(units) == 0 && points {
		// A section that is a table ("Action items"): its rows are its points.
		for _, u := range sec.Units {
			if c.units[u].Kind == extract.UnitRow && (skip == nil || !skip(u)) && len(units) < n {
				units = append(units, u)
			}
		}
		return units
	}
	if !points {
		// A reason is stated in a sentence or two; one that only announces it ("Two causes stand
		// out.") brings the sentence after it, and so does the likeliest, which often restates what
		// is asked ("It is a poor choice for older houses.") before saying why.
		var out []int
		likely := c.byLikelihood(units, ranked)
		for k, u := range likely[:min(n, 2, len(likely))] {
			out = append(out, u)
			if i := slices.Index(units, u); (k == 0 || len(nlp.Words(c.units[u].Text)) <= shortLead) && i+1 < len(units) &&
				c.units[units[i+1]].Para == c.units[u].Para && !slices.Contains(out, units[i+1]) {
				out = append(out, units[i+1])
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	if len(paras) < 2 {
		// A list in one paragraph states a point a sentence: all of them, up to n.
		return units[:min(n, len(units))]
	}
	if first := units[0]; len(units) > 1 && c.units[units[1]].Para != c.units[first].Para {
		// A first paragraph of one sentence introduces the points ("The heat island has several
		// causes, which reinforce each other."): it is kept but not counted as one.
		n++
	}
	var out []int
	taken := 0
	for i, u := range units {
		if taken >= n {
			break
		}
		if i > 0 && c.units[units[i-1]].Para == c.units[u].Para {
			continue
		}
		out = append(out, u)
		taken++
		if next := i + 1; len(nlp.Words(c.units[u].Text)) <= shortLead && next < len(units) && c.units[units[next]].Para == c.units[u].Para {
			out = append(out, units[next])
		}
	}
	return out
}

// likeliest are the k of units the model ranks highest, in document order (units not among the
// ranked candidates come last, in order).
func (c *corpus) likeliest(units []int, ranked []scored, k int) []int {
	order := c.byLikelihood(units, ranked)
	order = order[:min(k, len(order))]
	slices.Sort(order)
	return order
}

// comparing takes k of an aspect's section's units: first those that give a figure for an item
// compared, named or dated ("LoRaWAN meters delivered 99.1 per cent …", "in 2021 … 900 bikes"),
// each item first, then the likeliest; a section's opening sentence often only introduces the
// aspect ("Coverage decided most of the pilot.").
func (c *corpus) comparing(s *scorer, units []int, ranked []scored, k int) []int {
	order := c.byLikelihood(units, ranked)
	// valued: the unit names or dates an item compared and gives a figure the question lacks;
	// measured once per unit (the sort below asks many times).
	valued := map[int]bool{}
	for _, u := range order {
		nums := numbersIn(c.units[u].Text)
		item := slices.ContainsFunc(s.q.Names, func(n string) bool { return c.ownSet[u][n] }) ||
			slices.ContainsFunc(s.q.Numbers, func(n string) bool { return nums[n] }) // "at its launch in 2021"
		valued[u] = item && slices.ContainsFunc(slices.Collect(maps.Keys(nums)), func(n string) bool { return !slices.Contains(s.q.Numbers, n) })
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch va, vb := valued[a], valued[b]; {
		case va && !vb:
			return -1
		case vb && !va:
			return 1
		}
		return 0
	})
	// Each item compared gets its figure (up to two items' sentences, even past k): "NB-IoT …
	// 40 per cent" does not stand for "A LoRaWAN meter … 16 to 18 years". Then the likeliest, up
	// to k.
	var out []int
	named := map[string]bool{}
	for _, u := range order {
		if len(out) < max(k, 2) && valued[u] && slices.ContainsFunc(s.q.Names, func(n string) bool { return c.ownSet[u][n] && !named[n] }) {
			out = append(out, u)
			for _, n := range s.q.Names {
				named[n] = named[n] || c.ownSet[u][n]
			}
		}
	}
	for _, u := range order {
		if len(out) < k && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}

// byLikelihood orders units by the model's ranking, likeliest first (units it did not rank last,
// in their order).
func (c *corpus) byLikelihood(units []int, ranked []scored) []int {
	rank := map[int]int{}
	for i, r := range ranked {
		rank[r.U] = i
	}
	order := slices.Clone(units)
	slices.SortStableFunc(order, func(a, b int) int {
		ra, oka := rank[a]
		rb, okb := rank[b]
		switch {
		case oka && okb:
			return ra - rb
		case oka:
			return -1
		case okb:
			return 1
		}
		return 0
	})
	return order
}

// reAspects finds what a comparison is made on: "compare A and B on cost, range and safety",
// "... in terms of X and Y".
var (
	reAspects   = regexp.MustCompile(`(?i)\b(?:on|in terms of|regarding|with respect to|with regard to|by)\s+((?:[\p{L}\p{N}-]+\s*(?:,|\band\b|\bor\b)?\s*)+)\W*$`)
	reAspectSep = regexp.MustCompile(`\s*(?:,|\band\b|\bor\b)\s*`)
)

// aspects are the parts a comparison asks about, in the question's words ("coverage", "battery
// life", "cost"); none unless there are at least two.
func aspects(q string) []string {
	m := reAspects.FindStringSubmatch(strings.TrimSpace(q))
	if m == nil {
		return nil
	}
	var out []string
	for _, p := range reAspectSep.Split(m[1], -1) {
		if p = strings.TrimSpace(p); p != "" && len(nlp.Terms(p)) > 0 {
			out = append(out, p)
		}
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// countWord: t is a number in words: "the three e-bikes" counts what is asked about, it does not
// name a heading ("Three things."). Figures may ("Upgrading from 3.x").
func countWord(t string) bool { return reNumberWord.MatchString(t) }

// sectionAnswer answers a list, reason, comparison or briefing from the sections whose headings
// name what it asks: a comparison made on named aspects takes each aspect's section (or, without
// one, the likeliest candidate stating the aspect), labelled with the aspect; other questions take
// the points of the one section that names their focus.
func (c *corpus) sectionAnswer(s *scorer, ranked []scored, o findOptions) (answer []int, parts []string, ok bool) {
	allowed := func(u int) bool { return o.Skip == nil || !o.Skip(u) }
	if as := aspects(s.q.Text); s.q.Shape == shapeCompare && len(as) > 0 {
		per := max(1, o.Items/len(as))
		for _, a := range as {
			fresh := func(u int) bool { return allowed(u) && !slices.Contains(answer, u) }
			var got []int
			if sec, ok := s.bestSection(nlp.Terms(a), fresh); ok && s.headNames(sec, nlp.Terms(a)) {
				got = c.comparing(s, slices.DeleteFunc(slices.Clone(sec.Units), func(u int) bool { return !fresh(u) }), ranked, per)
			} else if u, ok := c.stating(s, ranked, nlp.Terms(a), answer); ok {
				got = []int{u}
			}
			for _, u := range got {
				if !slices.Contains(answer, u) {
					answer, parts = append(answer, u), append(parts, a)
				}
			}
		}
		return answer, parts, len(answer) > 0
	}
	if s.q.Shape == shapeBrief || s.q.Shape == shapeList {
		if answer, parts, ok := c.briefByParts(s, ranked, o, allowed); ok {
			return answer, parts, true
		}
	}
	var focus []string
	for _, t := range s.q.Terms {
		if !slices.Contains(s.q.Names, t) && !slices.Contains(s.q.carried, t) && !countWord(t) {
			focus = append(focus, t)
		}
	}
	sec, found := s.echoedSection(allowed)
	if !found {
		sec, found = s.bestSection(focus, allowed)
		found = found && (s.q.Shape != shapeCompare || holdsLikely(sec, ranked))
	}
	if s.q.Shape == shapeBrief && !s.q.part && len(ranked) > 0 && (!found || c.opens(sec)) && s.wholeDocument(c.units[ranked[0].U].Doc, focus) {
		// "Sum up the Castlegate Bridge story": no heading but the first names what it asks, and
		// the document's title and opening do; the document, summarised.
		answer = c.summary(c.units[ranked[0].U].Doc, o.Items, allowed, true)
		return answer, nil, len(answer) > 0
	}
	if !found && s.q.part {
		return nil, nil, false // a part of a briefing asks one thing: no summary of the whole
	}
	if !found && s.q.Shape == shapeBrief && len(ranked) > 0 {
		// "Brief me on X" names only what a document is about: its key points are a summary of it.
		answer = c.summary(c.units[ranked[0].U].Doc, o.Items, allowed, false)
		return answer, nil, len(answer) > 0
	}
	if !found {
		return nil, nil, false
	}
	sec.Units = c.expandPointers(sec.Units)
	// A list or briefing takes a point from each paragraph, as do "the main causes"; a reason is
	// stated in a sentence or two. A list the section gives is answered whole (up to listPoints) at
	// every effort: cutting the fifth of five causes is the defect lists are answered from sections
	// to avoid; effort decides how widely sources are read, not how much of a found list is kept.
	n := o.Items
	if s.q.Shape == shapeList || (s.q.Plural && s.q.Shape != shapeBrief) {
		n = max(n, listPoints)
	}
	if sec.RunIn != "" && (s.q.Shape == shapeList || s.q.Plural) {
		if answer, parts = s.runInList(sec, focus, allowed, n); len(answer) > 1 {
			return answer, parts, true
		}
	}
	answer = c.sectionPoints(sec, ranked, n, s.q.Shape != shapeReason || s.q.Plural, o.Skip)
	if s.q.Shape == shapeBrief && len(answer) < n {
		// A briefing on a section of few paragraphs has room left after each paragraph's lead: the
		// section's likeliest other sentences fill it (its facts are often mid-paragraph), in order.
		rest := slices.DeleteFunc(slices.Clone(sec.Units), func(u int) bool {
			return slices.Contains(answer, u) || c.units[u].Kind == extract.UnitRow || !allowed(u) || c.repeats(u, answer)
		})
		answer = append(answer, c.likeliest(rest, ranked, n-len(answer))...)
		slices.Sort(answer)
	}
	return answer, nil, len(answer) > 0
}

// holdsLikely: a section whose heading names the question's words holds one of the answer model's
// likely candidates (itemShare of the best one's probability). A comparison needs it: "New
// timetable: Monday to Friday" names the weekday frequency asked about, but the sentence that
// compares it is elsewhere. (Lists, reasons and briefings do not: their sections' points each
// score low.)
func holdsLikely(sec section, ranked []scored) bool {
	if len(ranked) == 0 {
		return true
	}
	return slices.ContainsFunc(ranked, func(r scored) bool {
		return r.Score >= itemShare*ranked[0].Score && slices.Contains(sec.Units, r.U)
	})
}

// briefByParts answers a briefing on things joined by "and" ("Glenrock's outlook and main risks",
// "Marta Kellerhals's life and career") from a section for each, when each has a section of its
// own whose heading names it: points from each, labelled with it.
func (c *corpus) briefByParts(s *scorer, ranked []scored, o findOptions, allowed func(int) bool) (answer []int, parts []string, ok bool) {
	heads := coordinated(s.q.Text)
	if len(heads) < 2 {
		return nil, nil, false
	}
	var secs []section
	for _, h := range heads {
		sec, found := s.bestSection(nlp.Terms(h), allowed)
		if !found || slices.ContainsFunc(secs, func(x section) bool { return slices.Equal(x.Units, sec.Units) }) {
			return nil, nil, false
		}
		secs = append(secs, sec)
	}
	per := max(1, o.Items/len(secs))
	for i, sec := range secs {
		for _, u := range c.sectionPoints(sec, ranked, per, true, o.Skip) {
			if !slices.Contains(answer, u) {
				answer, parts = append(answer, u), append(parts, heads[i])
			}
		}
	}
	return answer, parts, len(answer) > 0
}

// reCoordinated is a question ending in things joined by "and" (or commas and "and"): the words
// before the last "and" and the phrase after it.
var reCoordinated = regexp.MustCompile(`(?i)((?:[\p{L}\p{N}'’-]+,\s+)*[\p{L}\p{N}'’-]+)\s+and\s+((?:[\p{L}\p{N}'’-]+\s+){0,2}[\p{L}\p{N}'’-]+)(?:\W*$|\s+(?:of|for|in|on|at|with)\s)`)

// coordinated are the heads of the things a question ending "A, B and C" joins: the word before
// each comma or "and", and the last word.
func coordinated(q string) []string {
	m := reCoordinated.FindStringSubmatch(strings.TrimSpace(q))
	if m == nil {
		return nil
	}
	var heads []string
	for _, p := range strings.Split(m[1], ",") {
		if f := strings.Fields(p); len(f) > 0 {
			heads = append(heads, f[len(f)-1])
		}
	}
	f := strings.Fields(m[2])
	heads = append(heads, f[len(f)-1])
	return slices.DeleteFunc(heads, func(h string) bool { return len(nlp.Terms(h)) == 0 })
}

// listPoints is how many points of a list section an answer keeps at most.
const listPoints = 8

// stating is the likeliest ranked candidate that states one of ts and is not taken.
func (c *corpus) stating(s *scorer, ranked []scored, ts []string, taken []int) (int, bool) {
	for _, r := range ranked {
		if !slices.Contains(taken, r.U) && slices.ContainsFunc(ts, func(t string) bool { return s.states(r.U, t) }) {
			return r.U, true
		}
	}
	return 0, false
}

// polarAnswer reads the answer of a section whose heading is a yes/no question: its first unit
// opens with "Yes" or "No". first is that unit.
func (c *corpus) polarAnswer(u int) (yes bool, first int, ok bool) {
	un := c.units[u]
	h := strings.TrimSpace(un.Heading)
	if !strings.HasSuffix(h, "?") || !asksYesNo(h) {
		return false, 0, false
	}
	first = u
	for first > 0 && c.units[first-1].Doc == un.Doc && c.units[first-1].Heading == un.Heading {
		first--
	}
	switch w := nlp.Words(c.units[first].Text); {
	case len(w) > 0 && w[0] == "yes":
		return true, first, true
	case len(w) > 0 && w[0] == "no":
		return false, first, true
	}
	return false, 0, false
}

// sectionVerdict is the opening unit of best's section when the question asks yes or no, the
// section's heading asks it too (it states all of the question's terms but one), and the section
// opens with its answer.
func (c *corpus) sectionVerdict(q query, best int) (int, bool) {
	if !asksYesNo(q.Text) || len(q.Terms) == 0 {
		return 0, false
	}
	heading := map[string]bool{}
	for _, t := range wordStems(c.units[best].Heading) {
		heading[t] = true
	}
	missing := 0
	for _, t := range q.Terms {
		if !heading[t] {
			missing++
		}
	}
	if missing > 1 || missing == len(q.Terms) {
		return 0, false
	}
	_, first, ok := c.polarAnswer(best)
	return first, ok
}

// asksYesNo: the question opens with an auxiliary or a copula ("Does the K2 need …", "Is it …").
func asksYesNo(question string) bool {
	ws := nlp.Words(question)
	return len(ws) > 0 && opensYesNo(ws[0])
}

// opensYesNo: w, an auxiliary or a copula, opens a yes/no question ("Does …", "Is …").
func opensYesNo(w string) bool { return auxiliaries[w] || copulas[w] }

// copulas open yes/no questions as auxiliaries do ("Is the K2 waterproof?").
var copulas = map[string]bool{"is": true, "are": true, "was": true, "were": true}
