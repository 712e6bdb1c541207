package sources

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/engine/nlp"
)

// fetchMaxBytes caps a fetched page.
const fetchMaxBytes = 2 << 20

// Page is a fetched web page as text.
type Page struct {
	URL         string // after redirects
	Title       string // the HTML <title>, when there is one
	ContentType string
	Kind        string // how the text was read: html, pdf or text
	Status      int
	Text        string
	Truncated   bool // the body was over fetchMaxBytes and was cut
	RetrievedAt time.Time
}

// FetchPage GETs an http(s) URL through client and returns its text: HTML through the same
// extraction attachments and local files get, PDF through the PDF extractor, text as it is. In
// production client is the netguard (SSRF-safe) client, which re-checks every address it dials and
// every redirect. now stamps RetrievedAt (nil: time.Now).
func FetchPage(ctx context.Context, client *http.Client, raw string, now func() time.Time) (Page, error) {
	if client == nil {
		return Page{}, errors.New("fetching is not available")
	}
	if now == nil {
		now = time.Now
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Page{}, errors.New("only absolute http(s) URLs can be fetched")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Page{}, err
	}
	req.Header.Set("User-Agent", "researchd/2 (+research agent)")
	req.Header.Set("Accept", "text/html,text/plain,application/json,application/pdf;q=0.9,*/*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		return Page{}, fmt.Errorf("fetch failed: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, fetchMaxBytes+1))
	if err != nil {
		return Page{}, fmt.Errorf("reading the response failed: %v", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Page{}, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	p := Page{URL: resp.Request.URL.String(), Status: resp.StatusCode, RetrievedAt: now().UTC(), Truncated: len(body) > fetchMaxBytes}
	body = body[:min(len(body), fetchMaxBytes)]
	p.ContentType, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	ct := p.ContentType
	switch {
	case ct == "text/html" || ct == "application/xhtml+xml":
		if p.Text, err = extract.HTMLToText(body); err != nil {
			return Page{}, fmt.Errorf("unreadable HTML: %v", err)
		}
		p.Title, p.Kind = htmlTitle(body), "html"
	case ct == "application/pdf":
		if p.Text, err = extract.PDFToText(body); err != nil {
			return Page{}, fmt.Errorf("unreadable PDF: %v", err)
		}
		p.Kind = "pdf"
	case strings.HasPrefix(ct, "text/") || ct == "application/json" || ct == "application/xml" || extract.LooksLikeText(body):
		p.Text, p.Kind = strings.ToValidUTF8(string(body), "\uFFFD"), "text"
	default:
		return Page{}, fmt.Errorf("unsupported content type %q", ct)
	}
	p.Text = strings.ReplaceAll(strings.ReplaceAll(p.Text, "\r\n", "\n"), "\r", "\n")
	if strings.TrimSpace(p.Text) == "" {
		return Page{}, errors.New("the page has no text")
	}
	return p, nil
}

// htmlTitle is the text of a page's first <title>.
func htmlTitle(data []byte) string {
	z := html.NewTokenizer(bytes.NewReader(data))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken:
			name, _ := z.TagName()
			if atom.Lookup(name) != atom.Title {
				continue
			}
			if z.Next() == html.TextToken {
				return nlp.Truncate(nlp.Collapse(string(z.Text())), 200)
			}
			return ""
		}
	}
}
