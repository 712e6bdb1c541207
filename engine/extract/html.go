package extract

import (
	"bytes"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/researchd/researchd/engine/nlp"
)

// HTMLToText keeps the content of an HTML page as Markdown-like text: "#" headings, "- " list
// items, "| a | b |" table rows (a header separator after the first), one paragraph per line with a
// blank line after it. Page chrome is left out: scripts and styles, navigation, the page header and
// footer, sidebars, forms, cookie and newsletter boxes (by element, ARIA role, or class and id
// words), and copyright lines. When the page marks its content with <main> or a single <article>,
// only that is kept, after the page title.
func HTMLToText(data []byte) (string, error) {
	root, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		return "", err
	}
	w := &htmlWriter{}
	content := contentRoot(root)
	if title := findFirst(root, atom.Title); title != nil {
		t := nlp.Collapse(inlineText(title))
		switch {
		case t == "":
		case findFirst(content, atom.H1) == nil:
			w.block("# " + t)
		case reTitleParts.MatchString(t):
			// "MSc Coastal Engineering | Postgraduate taught | Marrowford University": the page's
			// title names its site, which the page's furniture alone may name; it follows the
			// main heading as a byline does.
			w.siteTitle = t
		}
	}
	w.walk(content, 0)
	w.flush()
	var out []string
	for _, line := range strings.Split(w.b.String(), "\n") {
		if !reCopyright.MatchString(line) {
			out = append(out, line)
		}
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n") + "\n", nil
}

var reCopyright = regexp.MustCompile(`(?i)^\s*(?:©|\(c\)|copyright\b)|all rights reserved`)

// chromeWords in a class or id mark page furniture rather than content.
var chromeWords = map[string]bool{
	"nav": true, "navbar": true, "navigation": true, "menu": true, "footer": true, "breadcrumb": true,
	"breadcrumbs": true, "sidebar": true, "cookie": true, "cookies": true, "consent": true, "banner": true,
	"newsletter": true, "subscribe": true, "subscription": true, "signup": true, "social": true, "share": true,
	"sharing": true, "related": true, "promo": true, "advert": true, "advertisement": true, "ads": true,
	"popup": true, "modal": true, "comments": true, "pagination": true, "toolbar": true, "masthead": true,
	"skip": true,
}

var chromeRoles = map[string]bool{
	"navigation": true, "banner": true, "contentinfo": true, "complementary": true, "search": true,
	"dialog": true, "alertdialog": true,
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// isChrome reports page furniture that is not content.
func isChrome(n *html.Node, inArticle bool) bool {
	if n.Type != html.ElementNode {
		return false
	}
	switch n.DataAtom {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Iframe, atom.Object,
		atom.Nav, atom.Aside, atom.Form, atom.Button, atom.Select, atom.Input, atom.Textarea, atom.Dialog, atom.Footer:
		return true
	case atom.Header:
		return !inArticle
	}
	if chromeRoles[attr(n, "role")] || attr(n, "aria-hidden") == "true" {
		return true
	}
	for _, a := range n.Attr {
		if a.Key == "hidden" {
			return true
		}
	}
	for _, tok := range strings.FieldsFunc(strings.ToLower(attr(n, "class")+" "+attr(n, "id")), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if chromeWords[tok] {
			// A class word says furniture, but what holds the page's main heading is its content:
			// <article class="job-advert"> is the advert the page is about.
			return findFirst(n, atom.H1) == nil
		}
	}
	return false
}

// contentRoot is <main>, else the page's only <article>, else <body> (or the whole document).
func contentRoot(root *html.Node) *html.Node {
	if m := findFirst(root, atom.Main); m != nil {
		return m
	}
	var arts []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Article {
			arts = append(arts, n)
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	if len(arts) == 1 {
		return arts[0]
	}
	if b := findFirst(root, atom.Body); b != nil {
		return b
	}
	return root
}

func findFirst(n *html.Node, a atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findFirst(c, a); f != nil {
			return f
		}
	}
	return nil
}

// inlineText is the visible text of a subtree, chrome left out, on one line.
func inlineText(n *html.Node) string {
	var b strings.Builder
	writeInline(&b, n, " ")
	return nlp.Collapse(b.String())
}

// sourceBreaks: a page's source lines are no lines of its text; only <br> breaks one.
var sourceBreaks = strings.NewReplacer("\r", " ", "\n", " ")

// cellText is a table cell's text, a <br> in it written as the "…" by which a quote joins text
// that does not run on in the page.
func cellText(n *html.Node) string {
	var b strings.Builder
	writeInline(&b, n, "\x00")
	var parts []string
	for _, p := range strings.Split(b.String(), "\x00") {
		if t := nlp.Collapse(p); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " … ")
}

// writeInline writes a subtree's visible text as it stands in the page: inline elements run on
// with the text around them ("<strong>Studios</strong>, which" is "Studios, which"), blocks end
// with a space, and a <br> is br.
func writeInline(b *strings.Builder, n *html.Node, br string) {
	switch {
	case n.Type == html.TextNode:
		b.WriteString(sourceBreaks.Replace(n.Data))
	case isChrome(n, true):
		return
	case n.Type == html.ElementNode && n.DataAtom == atom.Br:
		b.WriteString(br)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		writeInline(b, c, br)
	}
	if n.Type == html.ElementNode && isBlock(n.DataAtom) {
		b.WriteByte(' ')
	}
}

type htmlWriter struct {
	b         strings.Builder
	para      strings.Builder // inline text of the paragraph being written
	siteTitle string          // the page's title, written after its main heading
}

// reTitleParts is a page title of parts: "Page | Section | Site".
var reTitleParts = regexp.MustCompile(` [|·•] `)

// flush writes the paragraph being written as one block, a line per <br>-separated line: a
// quote never runs across a line break the page shows ("International applicants: 30 June
// 2026<br>Home applicants: …" is two lines).
func (w *htmlWriter) flush() {
	var lines []string
	for _, l := range strings.Split(w.para.String(), "\n") {
		if t := nlp.Collapse(l); t != "" {
			lines = append(lines, t)
		}
	}
	if len(lines) > 0 {
		w.block(strings.Join(lines, "\n"))
	}
	w.para.Reset()
}

// block writes one block followed by a blank line.
func (w *htmlWriter) block(s string) {
	w.b.WriteString(s)
	w.b.WriteString("\n\n")
}

func (w *htmlWriter) walk(n *html.Node, depth int) {
	inArticle := depth > 0
	switch n.Type {
	case html.TextNode:
		w.para.WriteString(sourceBreaks.Replace(n.Data))
		return
	case html.ElementNode:
	default:
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			w.walk(c, depth)
		}
		return
	}
	if isChrome(n, inArticle) {
		return
	}
	if n.DataAtom == atom.Article {
		depth++
	}
	switch {
	case isHeading(n.DataAtom):
		w.flush()
		if t := inlineText(n); t != "" {
			w.block(strings.Repeat("#", int(n.Data[1]-'0')) + " " + t)
		}
		if n.DataAtom == atom.H1 && w.siteTitle != "" {
			w.block(w.siteTitle)
			w.siteTitle = ""
		}
		return
	case n.DataAtom == atom.Dt:
		// A term of a description list heads its description ("Start date", "21 September 2026").
		w.flush()
		if t := inlineText(n); t != "" {
			w.block("###### " + t)
		}
		return
	case n.DataAtom == atom.Ul || n.DataAtom == atom.Ol:
		w.flush()
		w.list(n, 0)
		return
	case n.DataAtom == atom.Table:
		w.flush()
		w.table(n)
		return
	case n.DataAtom == atom.Pre:
		w.flush()
		w.block(strings.TrimRight(textOf(n), "\n"))
		return
	case n.DataAtom == atom.Br:
		w.para.WriteString("\n")
		return
	}
	block := isBlock(n.DataAtom)
	if block {
		w.flush()
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		w.walk(c, depth)
	}
	if block {
		w.flush()
	}
}

// list writes "- item" lines, nested lists indented.
func (w *htmlWriter) list(n *html.Node, level int) {
	for li := n.FirstChild; li != nil; li = li.NextSibling {
		if li.Type != html.ElementNode || li.DataAtom != atom.Li || isChrome(li, true) {
			continue
		}
		var text strings.Builder
		var nested []*html.Node
		for c := li.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && (c.DataAtom == atom.Ul || c.DataAtom == atom.Ol) {
				nested = append(nested, c)
				continue
			}
			writeInline(&text, c, "\n")
		}
		// An item's lines broken by <br> are its lines: the first after the marker, the rest
		// indented under it.
		mark := strings.Repeat("  ", level) + "- "
		for _, l := range strings.Split(text.String(), "\n") {
			if t := nlp.Collapse(l); t != "" {
				w.b.WriteString(mark + t + "\n")
				mark = strings.Repeat("  ", level+1)
			}
		}
		for _, l := range nested {
			w.list(l, level+1)
		}
	}
	if level == 0 {
		w.b.WriteString("\n")
	}
}

// table writes a pipe table: the first row is the header.
func (w *htmlWriter) table(n *html.Node) {
	var rows [][]string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Tr {
			var cells []string
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.ElementNode && (c.DataAtom == atom.Td || c.DataAtom == atom.Th) {
					cells = append(cells, strings.ReplaceAll(cellText(c), "|", "/"))
				}
			}
			if len(cells) > 0 {
				rows = append(rows, cells)
			}
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	if len(rows) == 0 {
		return
	}
	for i, r := range rows {
		w.b.WriteString("| " + strings.Join(r, " | ") + " |\n")
		if i == 0 {
			w.b.WriteString("|" + strings.Repeat(" --- |", len(r)) + "\n")
		}
	}
	w.b.WriteString("\n")
}

// textOf is the raw text of a subtree (for <pre>).
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

func isHeading(a atom.Atom) bool {
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

func isBlock(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Br, atom.Li, atom.Ul, atom.Ol, atom.Tr, atom.Table, atom.Section,
		atom.Article, atom.Header, atom.Footer, atom.Nav, atom.Aside, atom.Main, atom.Blockquote,
		atom.Pre, atom.Hr, atom.Dd, atom.Dt, atom.Dl, atom.Figure, atom.Figcaption, atom.Title,
		atom.Caption, atom.Form, atom.Fieldset, atom.Address, atom.Details, atom.Summary:
		return true
	}
	return isHeading(a)
}
