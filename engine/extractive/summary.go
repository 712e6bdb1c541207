package extractive

import (
	"cmp"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// Summaries: "sum up the story", "the gist of the festival", "a quick rundown of the vacancy" ask
// for what a whole document says. A document states its key points first: a news story's lead, a
// press release's headline and first paragraph, a job advert's terms, an encyclopedia article's
// opening paragraph. The summary starts there (the lead-N of news summarisation) and goes on with
// the sentences closest to the document's centroid.

// summary is an extractive summary of document d in at most n sentences, in document order: the
// sentences closest to the document's centroid (its terms weighted by frequency and idf), skipping
// near repeats of those already taken (centroid summarisation). With lead, its introduction comes
// first, its first point leading (the units before its first section heading; asides, table rows
// and the lines that say who and when left out; a line pointing to another part, "Accepted
// solution: see post #7", stands for that part).
func (c *corpus) summary(d, n int, allowed func(u int) bool, lead bool) []int {
	score, units := c.centroidScores(d, allowed)
	var out []int
	take := func(u int) {
		if len(out) < n && !slices.Contains(out, u) && !c.repeats(u, out) {
			out = append(out, u)
		}
	}
	if lead {
		// The introduction's first point leads; its other points follow by their centroid order
		// (a report's introduction ends with its overall finding, after the background).
		var intro []int
		scored := func(u int) bool { _, ok := score[u]; return ok } // allowed, and no table row
		for _, u := range c.introduction(d) {
			if target, ok := c.pointsTo(u); ok {
				// The part pointed to is read in centroid order: a post opens with a greeting. Its
				// units are the corpus's section, shared: filtered into a slice of their own.
				var part []int
				for _, v := range target {
					if scored(v) {
						part = append(part, v)
					}
				}
				intro = append(intro, byScore(part, score)...)
			} else if scored(u) && c.point(u) {
				intro = append(intro, u)
			}
		}
		if len(intro) > 0 {
			take(intro[0])
		}
		for _, u := range byScore(intro, score) {
			take(u)
		}
	}
	for _, u := range byScore(units, score) {
		take(u)
	}
	slices.Sort(out)
	return out
}

// point: unit u of an introduction states one of its document's points: it is no aside, has
// minLeadWords words or more, does not describe the document itself ("Summary for non-specialists
// of the final report …", "This guide takes you through …") and is no line of a header saying who
// was there, who wrote to whom or when ("Present: …", "From: …", "Date: …").
func (c *corpus) point(u int) bool {
	text := c.units[u].Text
	if aside(text) || len(nlp.Words(text)) < minLeadWords || reAboutItself.MatchString(text) {
		return false
	}
	return c.units[u].Kind != extract.UnitField || !(reMessageHeader.MatchString(text) || reRecordHeader.MatchString(text))
}

// reAboutItself is a sentence about the document it opens: "Summary for non-specialists of …",
// "This page answers the questions staff ask most often".
var reAboutItself = regexp.MustCompile(`(?i)^(?:(?:a|an|the)\s+)?(?:(?:short|brief)\s+)?(?:summary|overview|digest|abstract)\s+(?:for|of)\b|` +
	`^(?:this|these)\s+(?:\w+\s+)?(?:report|page|pages|guide|document|article|leaflet|memo|paper|study|briefing|note|notes|factsheet|summary|evaluation|review|brief|faq|post|thread)\b`)

// reRecordHeader is a field line of a record's header: who was there, when, its reference.
var reRecordHeader = regexp.MustCompile(`(?i)^\W*(?:present|apologies|absent|attendees|in attendance|officers|date|dated|ref|reference|prepared (?:by|for)|author|minutes)\W*:`)

// minLeadWords is the fewest words an introduction's unit has to be a point of its summary ("We're
// back!" is none).
const minLeadWords = 4

// centroidScores scores document d's units (those allowed, table rows and a byline restating its
// title aside) by their terms' weight in the document's centroid, over the square root of their
// length.
func (c *corpus) centroidScores(d int, allowed func(u int) bool) (map[int]float64, []int) {
	centroid := map[string]float64{}
	var units []int
	for u, un := range c.units {
		if un.Doc != d || un.Kind == extract.UnitRow || c.bylines[u] && c.restatesTitle(u) || c.openingFields[u] || !allowed(u) {
			// The field lines a document opens with ("**Document number:** CHEM-SOP-042") say what
			// and whose it is, not what it says.
			continue
		}
		units = append(units, u)
		for _, t := range c.seqs[u] {
			centroid[t] += c.idf(t)
		}
	}
	score := make(map[int]float64, len(units))
	for _, u := range units {
		sum := 0.0
		for _, t := range c.own[u] {
			sum += centroid[t]
		}
		score[u] = sum / math.Sqrt(float64(len(c.own[u])+1))
	}
	return score, units
}

// restatesTitle: unit u states every term of its document's title ("Programme 2026 | Kellbridge
// Riverside Arts Festival", a page's title under its heading "Kellbridge Riverside Arts Festival
// 2026"): it says what the document is, not what it says.
func (c *corpus) restatesTitle(u int) bool {
	title := nlp.Terms(c.titles[c.units[u].Doc])
	return len(title) > 0 && !slices.ContainsFunc(title, func(t string) bool { return !c.ownSet[u][t] })
}

// byScore is units ordered by score, highest first (a new slice).
func byScore(units []int, score map[int]float64) []int {
	order := slices.Clone(units)
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(score[b], score[a]) })
	return order
}

// introduction is document d's units before its first section heading, in order: those under its
// title, or its first heading.
func (c *corpus) introduction(d int) []int {
	first := slices.IndexFunc(c.units, func(un extract.Unit) bool { return un.Doc == d })
	if first < 0 {
		return nil
	}
	var out []int
	for u := first; u < len(c.units) && c.units[u].Doc == d && c.units[u].Heading == c.units[first].Heading; u++ {
		out = append(out, u)
	}
	return out
}

// aside: text is set apart in italics as a whole ("*This article is about the engineer.", a
// caption, a dateline): a note about the document, not one of its points.
func aside(text string) bool {
	t := strings.TrimSpace(text)
	return (strings.HasPrefix(t, "*") && !strings.HasPrefix(t, "**")) || (strings.HasPrefix(t, "_") && !strings.HasPrefix(t, "__"))
}

// rePointer is a line that sends the reader to a numbered post of a thread: "Accepted solution:
// see post #7 by Mod_Priya", "answered in reply #3".
var rePointer = regexp.MustCompile(`(?i)\b(?:see|in|at)\s+(?:post|reply|comment|answer|message)\s*(?:#|no\.?\s*|number\s+)(\d{1,4})\b`)

// rePostHeading reads the number of a post from its heading: "#7  Mod_Priya …", "Post #7", "Reply 7".
var rePostHeading = regexp.MustCompile(`(?i)^\W*(?:(?:post|reply|comment|message)\s*#?\s*|#)(\d{1,4})\b`)

// pointsTo is the section of u's document that u points to ("see post #7"): its units.
func (c *corpus) pointsTo(u int) ([]int, bool) {
	m := rePointer.FindStringSubmatch(c.units[u].Text)
	if m == nil {
		return nil, false
	}
	want, _ := strconv.Atoi(m[1])
	for _, sec := range c.sections {
		if sec.Doc != c.units[u].Doc || sec.RunIn != "" {
			continue
		}
		h := rePostHeading.FindStringSubmatch(c.units[sec.Units[0]].Heading)
		if n, err := strconv.Atoi(at(h, 1)); err == nil && n == want {
			return sec.Units, true
		}
	}
	return nil, false
}

// opens: the section is the first of its document (a thread's title over its first lines).
func (c *corpus) opens(sec section) bool {
	u := sec.Units[0]
	return u == 0 || c.units[u-1].Doc != sec.Doc
}

// pointedLead: the best candidate points to another part of its document ("see post #7"); i is
// the index in ranked of the likeliest candidate in that part.
func (c *corpus) pointedLead(ranked []scored) (i int, ok bool) {
	if len(ranked) == 0 {
		return 0, false
	}
	target, ok := c.pointsTo(ranked[0].U)
	if !ok {
		return 0, false
	}
	i = slices.IndexFunc(ranked, func(r scored) bool { return slices.Contains(target, r.U) })
	return i, i > 0
}

// expandPointers is units with each that points to another part of its document replaced by that
// part's units: a thread's heading over "Accepted solution: see post #7" holds post #7.
func (c *corpus) expandPointers(units []int) []int {
	var out []int
	for _, u := range units {
		if target, ok := c.pointsTo(u); ok {
			out = append(out, target...)
		} else {
			out = append(out, u)
		}
	}
	return out
}

// at is m[i], or "" when m is too short.
func at(m []string, i int) string {
	if i < len(m) {
		return m[i]
	}
	return ""
}

// briefingWords ask for a briefing or name the kind of document asked about ("sum up the story",
// "a quick rundown of the vacancy", "the forum thread", "the gist of what happened"): they say how
// to answer, not what about.
var briefingWords = stemSet("brief", "briefing", "overview", "summary", "summarise", "summarize", "gist", "outline", "rundown",
	"sum", "up", "quick", "short", "story", "article", "announcement", "thread", "forum", "post", "page", "report",
	"document", "vacancy", "advert", "advertisement", "release", "news", "piece", "leaflet", "notice", "happened")

// stemSet is the set of words' stems.
func stemSet(words ...string) map[string]bool {
	out := map[string]bool{}
	for _, w := range words {
		out[nlp.Stem(w)] = true
	}
	return out
}

// wholeDocument: a briefing's focus (its terms other than the subject's names) asks for nothing
// document d's title, first heading and opening do not already state (in the question's word, a
// synonym or a relative: "closure" by "close"), once the words that ask for a briefing are left out: it asks what the whole document
// says.
func (s *scorer) wholeDocument(d int, focus []string) bool {
	c := s.c
	opening := maps.Clone(c.titleTerms[d])
	intro := c.introduction(d)
	if len(intro) > 0 {
		for _, t := range nlp.Terms(c.units[intro[0]].Heading) {
			opening[t] = true // the first heading: a title, or what a thread is about
		}
	}
	for _, u := range intro[:min(3, len(intro))] {
		maps.Copy(opening, c.words[u])
	}
	for _, t := range focus {
		if !briefingWords[t] && !opening[t] && !slices.ContainsFunc(slices.Concat(s.q.Syn[t], nlp.Related(t)), func(a string) bool { return opening[a] }) {
			return false
		}
	}
	return true
}
