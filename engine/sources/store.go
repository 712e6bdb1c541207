// Package sources is where a run finds and keeps what it reads: the local folders (the job's input
// files, expert context folders, the corpus; local.go), web search providers (SearXNG, Brave,
// Tavily, Wikipedia) and page fetching (websearch.go, wikipedia.go, webfetch.go, web.go), and the
// store of what a run read, under sources/ in its workspace (this file).
package sources

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/workspace"
)

// Where a run keeps what it read: one text file per source under Dir, described by
// IndexPath. Every citation in a report points to one of these stored copies.
const (
	Dir       = "sources"
	IndexPath = Dir + "/index.json"
)

// Source kinds.
const (
	KindWeb  = "web"
	KindFile = "file"
	KindTool = "tool" // the answer of an MCP tool
)

// Source is something a run read, before it is stored.
type Source struct {
	Origin      string // the URL, or the file path as cited (input_files/a.pdf, context/x.md, corpus/y.html)
	Kind        string // KindWeb, KindFile or KindTool
	Title       string
	Text        string    // the extracted text, exactly as the run read it
	RetrievedAt time.Time // zero: the store's clock
}

// StoredSource describes a stored copy (an entry of sources/index.json).
type StoredSource struct {
	ID          string    `json:"id"`   // S1, S2, … in order of first reading, stable across continuations
	Path        string    `json:"path"` // the stored text, e.g. sources/S1-example-com-report.txt
	Origin      string    `json:"origin"`
	Kind        string    `json:"kind"`
	Title       string    `json:"title,omitempty"`
	RetrievedAt time.Time `json:"retrieved_at"`
	SHA256      string    `json:"sha256"` // of the stored text
	Chars       int       `json:"chars"`
}

// Store is a run's source store in its workspace. Safe for concurrent use.
type Store struct {
	repo *workspace.Repo
	now  func() time.Time
	mu   sync.Mutex
	list []StoredSource
}

// Open opens the store of a workspace, keeping what earlier runs of the job stored (a
// continuation cites the same ids). now stamps retrieval times (nil: time.Now).
func Open(repo *workspace.Repo, now func() time.Time) (*Store, error) {
	if now == nil {
		now = time.Now
	}
	s := &Store{repo: repo, now: now}
	b, err := repo.ReadWorking(IndexPath)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &s.list); err != nil {
		return nil, fmt.Errorf("engine: %s: %w", IndexPath, err)
	}
	return s, nil
}

// Save stores src and returns its stored copy. Saving the same origin with the same text again
// returns the existing copy; a changed text (a page that changed between runs) is a new copy.
func (s *Store) Save(src Source) (StoredSource, error) {
	if strings.TrimSpace(src.Origin) == "" {
		return StoredSource{}, errors.New("engine: a source needs an origin")
	}
	digest := digestOf(src.Text)
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.find(src.Origin, digest); ok {
		return st, nil
	}
	when := src.RetrievedAt
	if when.IsZero() {
		when = s.now()
	}
	id := fmt.Sprintf("S%d", len(s.list)+1)
	st := StoredSource{ID: id, Path: Dir + "/" + id + "-" + slugOf(src.Origin) + ".txt", Origin: src.Origin, Kind: src.Kind,
		Title: src.Title, RetrievedAt: when.UTC().Truncate(time.Second), SHA256: digest, Chars: len([]rune(src.Text))}
	if err := s.repo.WriteFile(st.Path, []byte(src.Text)); err != nil {
		return StoredSource{}, fmt.Errorf("engine: store source: %w", err)
	}
	list := append(s.list, st)
	b, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return StoredSource{}, fmt.Errorf("engine: encode %s: %w", IndexPath, err)
	}
	if err := s.repo.WriteFile(IndexPath, append(b, '\n')); err != nil {
		return StoredSource{}, fmt.Errorf("engine: store source index: %w", err)
	}
	s.list = list
	return st, nil
}

// Stored returns the stored copy of src (same origin, same text), if there is one.
func (s *Store) Stored(src Source) (StoredSource, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.find(src.Origin, digestOf(src.Text))
}

func (s *Store) find(origin, digest string) (StoredSource, bool) {
	for _, st := range s.list {
		if st.Origin == origin && st.SHA256 == digest {
			return st, true
		}
	}
	return StoredSource{}, false
}

func digestOf(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// All lists the stored sources in order.
func (s *Store) All() []StoredSource {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]StoredSource(nil), s.list...)
}

// Lookup finds a stored source by id (S3), stored path, or origin (a URL, also without its
// fragment or trailing slash; a file path as cited). The newest copy of an origin wins.
func (s *Store) Lookup(ref string) (StoredSource, bool) {
	ref = strings.TrimSpace(ref)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.list) - 1; i >= 0; i-- {
		st := s.list[i]
		if strings.EqualFold(st.ID, ref) || st.Path == ref || st.Origin == ref {
			return st, true
		}
	}
	want := normURL(ref)
	if want == "" {
		return StoredSource{}, false
	}
	for i := len(s.list) - 1; i >= 0; i-- {
		if normURL(s.list[i].Origin) == want {
			return s.list[i], true
		}
	}
	return StoredSource{}, false
}

// Text is the stored text of a source.
func (s *Store) Text(st StoredSource) (string, error) {
	b, err := s.repo.ReadWorking(st.Path)
	if err != nil {
		return "", fmt.Errorf("engine: read stored source %s: %w", st.ID, err)
	}
	return string(b), nil
}

// normURL is a URL without scheme case, fragment or trailing slash, "" when ref is not a URL.
func normURL(ref string) string {
	u, err := url.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	u.Fragment, u.Scheme, u.Host = "", strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	return strings.TrimRight(u.String(), "/")
}

// slugOf makes a short file-name-safe slug of an origin ("https://example.com/a/b" → "example-com-a-b").
func slugOf(origin string) string {
	s := origin
	if u, err := url.Parse(origin); err == nil && u.Host != "" {
		s = u.Host + u.Path
	}
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "source"
	}
	return out
}

// FromDocument is the stored-source form of a document: a provided file (input, context or corpus)
// or a web page, with the text exactly as the run read it.
func FromDocument(d extract.Document) Source {
	text := strings.Join(d.Lines, "\n")
	if d.Web {
		return Source{Origin: d.Path, Kind: KindWeb, Title: d.Title, Text: text, RetrievedAt: d.Retrieved}
	}
	return Source{Origin: d.Path, Kind: KindFile, Title: d.Path, Text: text}
}
