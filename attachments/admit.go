package attachments

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"mime"
	"path"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/gabriel-vasile/mimetype"
	"gocloud.dev/blob"
)

// kind is how a file's content is checked, decided by its extension.
type kind struct {
	text  bool   // UTF-8 without NUL bytes
	mime  string // binary: the signature mimetype must detect (a zip container for OOXML)
	ooxml string // OOXML: the main part folder that must be in the container ("word/", ...)
}

const zipMIME = "application/zip"

// kinds is the extension allowlist. Everything else — archives and executables above all — is refused.
var kinds = map[string]kind{
	"pdf":  {mime: "application/pdf"},
	"png":  {mime: "image/png"},
	"jpg":  {mime: "image/jpeg"},
	"jpeg": {mime: "image/jpeg"},
	"gif":  {mime: "image/gif"},
	"webp": {mime: "image/webp"},
	"docx": {mime: zipMIME, ooxml: "word/"},
	"pptx": {mime: zipMIME, ooxml: "ppt/"},
	"xlsx": {mime: zipMIME, ooxml: "xl/"},
	"txt":  {text: true}, "md": {text: true}, "csv": {text: true}, "tsv": {text: true},
	"json": {text: true}, "jsonl": {text: true}, "xml": {text: true}, "html": {text: true},
	"htm": {text: true}, "yaml": {text: true}, "yml": {text: true},
}

func allowedList() string {
	names := make([]string, 0, len(kinds))
	for ext := range kinds {
		names = append(names, ext)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// kindOf returns the check for a file name, or ErrUnsupportedType.
func kindOf(field, name string) (kind, error) {
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(name), "."))
	if k, ok := kinds[ext]; ok {
		return k, nil
	}
	if ext == "" {
		return kind{}, refuse(field, ErrUnsupportedType, "%q has no extension; accepted: %s", name, allowedList())
	}
	return kind{}, refuse(field, ErrUnsupportedType, "%q: .%s files are not accepted (archives and executables never are); accepted: %s", name, ext, allowedList())
}

// maxNameRunes bounds stored names (the API's filename maxLength).
const maxNameRunes = 255

// safeName makes a client-supplied name path-safe and portable: the base name only (directory parts
// of either slash style stripped, leading spaces trimmed), and it refuses what git or a common file
// system cannot store, since a job copies the file into its git workspace and fails there on every
// attempt otherwise: control characters, a trailing dot or space, characters Windows forbids,
// Windows device names (with any extension), and .git in any of its disguises.
func safeName(field, raw string) (string, error) { return safeNameMax(field, raw, maxNameRunes) }

// safeNameMax is safeName with another length bound (context files allow longer names).
func safeNameMax(field, raw string, maxRunes int) (string, error) {
	if !utf8.ValidString(raw) {
		return "", refuse(field, ErrInvalid, "file name is not valid UTF-8")
	}
	if strings.IndexFunc(raw, unicode.IsControl) >= 0 {
		return "", refuse(field, ErrInvalid, "file name %q contains a control character", raw)
	}
	name := strings.ReplaceAll(raw, "\\", "/")
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	name = strings.TrimLeftFunc(name, unicode.IsSpace)
	switch {
	case name == "" || name == "." || name == "..":
		return "", refuse(field, ErrInvalid, "%q is not a usable file name", raw)
	case utf8.RuneCountInString(name) > maxRunes:
		return "", refuse(field, ErrInvalid, "file name is longer than %d characters", maxRunes)
	case strings.HasSuffix(name, ".") || strings.TrimRightFunc(name, unicode.IsSpace) != name:
		return "", refuse(field, ErrInvalid, "file name %q ends with a dot or a space, which Windows file systems drop", name)
	case strings.ContainsAny(name, windowsForbidden):
		return "", refuse(field, ErrInvalid, "file name %q contains one of %s, which Windows file systems cannot store", name, windowsForbidden)
	case isDeviceName(name):
		return "", refuse(field, ErrInvalid, "file name %q is a Windows device name (CON, PRN, AUX, NUL, COM0-9, LPT0-9), which git refuses with any extension", name)
	case isDotGit(name):
		return "", refuse(field, ErrInvalid, "file name %q would be git metadata", name)
	}
	return name, nil
}

// windowsForbidden are the printable characters Windows refuses in a file name (besides the slashes
// safeName already strips).
const windowsForbidden = `<>:"|?*`

// deviceNames are the Windows reserved device names, as git's core.protectNTFS (on by default in
// go-git) and Windows itself refuse them: also with an extension ("con.txt") and with trailing
// spaces before it ("aux .md"). ¹²³ count as digits there.
var deviceNames = func() map[string]bool {
	m := map[string]bool{"con": true, "prn": true, "aux": true, "nul": true, "conin$": true, "conout$": true}
	for _, d := range []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³"} {
		m["com"+d], m["lpt"+d] = true, true
	}
	return m
}()

func isDeviceName(name string) bool {
	stem, _, _ := strings.Cut(name, ".")
	return deviceNames[strings.ToLower(strings.TrimRightFunc(stem, unicode.IsSpace))]
}

// isDotGit reports .git, its NTFS short name git~1, and the HFS+ spellings that hide ignorable code
// points in ".git" (git's is_hfs_dotgit), all case-insensitively.
func isDotGit(name string) bool {
	visible := strings.Map(func(r rune) rune {
		if hfsIgnorable(r) {
			return -1
		}
		return r
	}, name)
	return strings.EqualFold(visible, ".git") || strings.EqualFold(name, "git~1")
}

func hfsIgnorable(r rune) bool {
	return (r >= 0x200c && r <= 0x200f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x206a && r <= 0x206f) || r == 0xfeff
}

// reportedType is the MIME type to store: the client's (or the remote server's) media type without
// parameters, or application/octet-stream when missing or unusable.
func reportedType(v string) string {
	mt, _, err := mime.ParseMediaType(strings.TrimSpace(v))
	if err != nil || mt == "" || len(mt) > 255 {
		return "application/octet-stream"
	}
	return mt
}

// headerBytes is how much of a file the signature check sees (mimetype's own read limit).
const headerBytes = 4096

// checkMagic verifies a binary file's signature from its first bytes.
func checkMagic(field, name string, k kind, header []byte) error {
	if k.text {
		return nil
	}
	for m := mimetype.Detect(header); m != nil; m = m.Parent() {
		if m.Is(k.mime) {
			return nil
		}
	}
	return refuse(field, ErrTypeMismatch, "%q does not look like a .%s file (its content is %s)",
		name, strings.ToLower(strings.TrimPrefix(path.Ext(name), ".")), mimetype.Detect(header).String())
}

// textCheck validates a stream as UTF-8 without NUL bytes, chunk by chunk (a character may straddle
// two writes).
type textCheck struct {
	carry []byte
	bad   string
	pos   int64
}

func (t *textCheck) Write(p []byte) (int, error) {
	if t.bad != "" {
		return len(p), nil
	}
	buf := p
	if len(t.carry) > 0 {
		buf = append(t.carry, p...)
		t.pos -= int64(len(t.carry))
		t.carry = nil
	}
	i := 0
	for i < len(buf) {
		c := buf[i]
		if c == 0 {
			t.bad = fmt.Sprintf("NUL byte at offset %d", t.pos+int64(i))
			return len(p), nil
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRune(buf[i:])
		if r == utf8.RuneError && size <= 1 {
			if !utf8.FullRune(buf[i:]) {
				break // the rest of this character is in the next write
			}
			t.bad = fmt.Sprintf("invalid UTF-8 at offset %d", t.pos+int64(i))
			return len(p), nil
		}
		i += size
	}
	t.pos += int64(i)
	t.carry = append([]byte(nil), buf[i:]...)
	return len(p), nil
}

// result is the verdict once the stream ended.
func (t *textCheck) result() string {
	if t.bad == "" && len(t.carry) > 0 {
		return fmt.Sprintf("truncated UTF-8 character at offset %d", t.pos)
	}
	return t.bad
}

// checkOOXML opens a stored docx/pptx/xlsx as a zip and requires the OOXML parts, so a plain zip
// renamed to .docx is refused.
func checkOOXML(ctx context.Context, b *blob.Bucket, key string, size int64, k kind) error {
	return checkOOXMLAt(&blobReaderAt{ctx: ctx, b: b, key: key}, size, k)
}

// checkOOXMLAt is checkOOXML over any random-access reader.
func checkOOXMLAt(r io.ReaderAt, size int64, k kind) error {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return fmt.Errorf("not a zip container: %w", err)
	}
	var types, main bool
	for _, f := range zr.File {
		types = types || f.Name == "[Content_Types].xml"
		main = main || strings.HasPrefix(f.Name, k.ooxml)
	}
	if !types || !main {
		return fmt.Errorf("a zip container without the Office Open XML parts ([Content_Types].xml, %s)", k.ooxml)
	}
	return nil
}

// blobReaderAt reads a stored object at random offsets (zip reads its directory from the end).
type blobReaderAt struct {
	ctx context.Context
	b   *blob.Bucket
	key string
}

func (r *blobReaderAt) ReadAt(p []byte, off int64) (int, error) {
	rr, err := r.b.NewRangeReader(r.ctx, r.key, off, int64(len(p)), nil)
	if err != nil {
		return 0, err
	}
	defer rr.Close()
	n, err := io.ReadFull(rr, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF
	}
	return n, err
}

var _ io.ReaderAt = (*blobReaderAt)(nil)

// bytesHead reads up to headerBytes from r.
func bytesHead(r io.Reader) ([]byte, error) {
	buf := make([]byte, headerBytes)
	n, err := io.ReadFull(r, buf)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = nil
	}
	return buf[:n], err
}
