package server_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/textproto"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/netguard"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

const testMaxBytes = 64 << 10

// --- sample files -------------------------------------------------------------------------------

var (
	samplePDF  = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
	samplePNG  = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{1}, 64)...)
	sampleJPEG = append([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00}, bytes.Repeat([]byte{2}, 64)...)
	sampleGIF  = append([]byte("GIF89a"), bytes.Repeat([]byte{3}, 32)...)
	sampleWebP = append([]byte("RIFF\x24\x00\x00\x00WEBPVP8 "), bytes.Repeat([]byte{4}, 32)...)
	sampleEXE  = append([]byte("MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00"), bytes.Repeat([]byte{0}, 64)...)
)

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, name := range []string{"[Content_Types].xml", "_rels/.rels", "word/document.xml", "ppt/presentation.xml", "readme.txt"} {
		body, ok := files[name]
		if !ok {
			continue
		}
		w, err := zw.Create(name)
		require.NoError(t, err)
		_, err = io.WriteString(w, body)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func sampleDOCX(t *testing.T) []byte {
	return zipOf(t, map[string]string{
		"[Content_Types].xml": `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`,
		"_rels/.rels":         `<?xml version="1.0"?><Relationships/>`,
		"word/document.xml":   `<?xml version="1.0"?><w:document/>`,
	})
}

// longText is valid UTF-8 well past one copy buffer, with multi-byte characters straddling chunks.
func longText() []byte {
	return []byte(strings.Repeat("Zürich – 東京 – €uro; ", 3000)[:50000] + "\n")
}

// --- environment --------------------------------------------------------------------------------

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type attEnv struct {
	*servertest.Env
	svc    *attachments.Service
	bucket *blob.Bucket
	clock  *clock
	owner  servertest.Account
}

func newAttEnv(t *testing.T, d store.Dialect, importOpts ...netguard.Option) *attEnv {
	t.Helper()
	e := &attEnv{bucket: memblob.OpenBucket(nil), clock: &clock{t: time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)}}
	t.Cleanup(func() { _ = e.bucket.Close() })
	e.Env = servertest.New(t, d, func(c *servertest.Config) {
		c.Now = e.clock.Now
		c.App.Bucket = e.bucket
		c.App.Attachments = attachments.Config{MaxBytes: testMaxBytes, ImportTimeout: 5 * time.Second, ImportOptions: importOpts}
	})
	e.svc = e.Services.Attachments
	e.owner = e.NewAccount(t, store.TierFree, false, 0)
	return e
}

// blobCount counts stored objects (under prefix).
func (e *attEnv) blobCount(t *testing.T, prefix string) int {
	t.Helper()
	n := 0
	it := e.bucket.List(&blob.ListOptions{Prefix: prefix})
	for {
		_, err := it.Next(context.Background())
		if err == io.EOF {
			return n
		}
		require.NoError(t, err)
		n++
	}
}

type part struct {
	field       string // default "files"
	filename    string
	contentType string // "" omits the header
	data        []byte
}

func multipartBody(t *testing.T, parts ...part) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		field := p.field
		if field == "" {
			field = "files"
		}
		h := textproto.MIMEHeader{}
		disp := fmt.Sprintf(`form-data; name=%q`, field)
		if p.filename != "" {
			disp += fmt.Sprintf(`; filename=%q`, p.filename)
		}
		h.Set("Content-Disposition", disp)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		w, err := mw.CreatePart(h)
		require.NoError(t, err)
		_, err = w.Write(p.data)
		require.NoError(t, err)
	}
	require.NoError(t, mw.Close())
	return buf.Bytes(), mw.FormDataContentType()
}

func (e *attEnv) upload(t *testing.T, key string, parts ...part) *servertest.Resp {
	t.Helper()
	body, ct := multipartBody(t, parts...)
	return e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: key, RawBody: body, ContentType: ct})
}

func readAll(t *testing.T, f attachments.File) []byte {
	t.Helper()
	r, err := f.Open(context.Background())
	require.NoError(t, err)
	defer r.Close()
	b, err := io.ReadAll(r)
	require.NoError(t, err)
	return b
}

// --- multipart ----------------------------------------------------------------------------------

func TestAttachmentsMultipartLifecycle(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newAttEnv(t, d)
			docx := sampleDOCX(t)
			text := longText()
			r := e.upload(t, e.owner.Key,
				part{filename: "q3-report.pdf", contentType: "application/pdf", data: samplePDF},
				part{filename: "customers.csv", contentType: "text/csv; charset=utf-8", data: []byte("id,name\n1,Zoë\n")},
				part{filename: `..\..\windows\chart.png`, data: samplePNG},
				part{filename: "../../etc/photo.JPG", contentType: "image/jpeg", data: sampleJPEG},
				part{filename: "anim.gif", contentType: "image/gif", data: sampleGIF},
				part{filename: "pic.webp", contentType: "image/webp", data: sampleWebP},
				part{filename: "memo.docx", contentType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", data: docx},
				part{filename: "notes.md", contentType: "text/markdown", data: text},
			)
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			var a gen.Attachment
			r.JSON(t, &a)
			require.Equal(t, gen.AttachmentStatus("ready"), a.Status)
			require.True(t, a.ExpiresAt.IsNull())
			require.Equal(t, []gen.AttachedFile{
				{Filename: "q3-report.pdf", SizeBytes: len(samplePDF), ContentType: "application/pdf"},
				{Filename: "customers.csv", SizeBytes: len("id,name\n1,Zoë\n"), ContentType: "text/csv"},
				{Filename: "chart.png", SizeBytes: len(samplePNG), ContentType: "application/octet-stream"},
				{Filename: "photo.JPG", SizeBytes: len(sampleJPEG), ContentType: "image/jpeg"},
				{Filename: "anim.gif", SizeBytes: len(sampleGIF), ContentType: "image/gif"},
				{Filename: "pic.webp", SizeBytes: len(sampleWebP), ContentType: "image/webp"},
				{Filename: "memo.docx", SizeBytes: len(docx), ContentType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
				{Filename: "notes.md", SizeBytes: len(text), ContentType: "text/markdown"},
			}, a.Files)
			id := a.AttachmentId.String()
			path := "/api/v2/attachments/" + id
			require.Equal(t, 8, e.blobCount(t, "attachments/"+id+"/"))

			// The owner reads it back; anyone else gets 404 for read and delete alike.
			r = e.Do(t, servertest.Req{Method: "GET", Path: path, Token: e.owner.Key})
			require.Equal(t, http.StatusOK, r.Status)
			var got gen.Attachment
			r.JSON(t, &got)
			require.Equal(t, a.Files, got.Files)
			other := e.NewAccount(t, store.TierFree, false, 0)
			require.Equal(t, http.StatusNotFound, e.Do(t, servertest.Req{Method: "GET", Path: path, Token: other.Key}).Status)
			require.Equal(t, http.StatusNotFound, e.Do(t, servertest.Req{Method: "DELETE", Path: path, Token: other.Key}).Status)
			require.Equal(t, http.StatusUnauthorized, e.Do(t, servertest.Req{Method: "GET", Path: path}).Status)

			// Jobs get the files, bytes intact, in upload order.
			files, err := e.svc.FilesForJob(context.Background(), e.owner.ID, []string{id})
			require.NoError(t, err)
			require.Len(t, files, 8)
			require.Equal(t, "q3-report.pdf", files[0].Name)
			require.Equal(t, samplePDF, readAll(t, files[0]))
			require.Equal(t, text, readAll(t, files[7]))
			_, err = e.svc.FilesForJob(context.Background(), other.ID, []string{id})
			require.ErrorIs(t, err, attachments.ErrUnusable)

			// Deleted: gone for reads, deletes and jobs; the bytes are gone too.
			require.Equal(t, http.StatusNoContent, e.Do(t, servertest.Req{Method: "DELETE", Path: path, Token: e.owner.Key}).Status)
			require.Equal(t, http.StatusNotFound, e.Do(t, servertest.Req{Method: "GET", Path: path, Token: e.owner.Key}).Status)
			r = e.Do(t, servertest.Req{Method: "DELETE", Path: path, Token: e.owner.Key})
			require.Equal(t, http.StatusNotFound, r.Status)
			require.Equal(t, "not_found", r.Problem(t).Code)
			require.Zero(t, e.blobCount(t, "attachments/"+id+"/"))
			_, err = e.svc.FilesForJob(context.Background(), e.owner.ID, []string{id})
			require.ErrorIs(t, err, attachments.ErrUnusable)
			_, err = files[0].Open(context.Background())
			require.Error(t, err)
		})
	}
}

func TestAttachmentsMultipartRefusals(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newAttEnv(t, d)
			plainZip := zipOf(t, map[string]string{"readme.txt": "hello"})
			pptxAsDocx := zipOf(t, map[string]string{"[Content_Types].xml": "<Types/>", "ppt/presentation.xml": "<p/>"})
			good := part{filename: "ok.txt", contentType: "text/plain", data: []byte("fine\n")}
			tests := []struct {
				name   string
				parts  []part
				status int
				code   string
				fields []string
			}{
				{"bad extension", []part{{filename: "notes.rtf", data: []byte("{\\rtf1}")}}, 422, "unsupported_file_type", []string{"files/0"}},
				{"no extension", []part{{filename: "README", data: []byte("hi")}}, 422, "unsupported_file_type", []string{"files/0"}},
				{"zip archive", []part{{filename: "bundle.zip", data: plainZip}}, 422, "unsupported_file_type", []string{"files/0"}},
				{"tar.gz archive", []part{{filename: "bundle.tar.gz", data: []byte{0x1f, 0x8b, 8, 0}}}, 422, "unsupported_file_type", []string{"files/0"}},
				{"executable", []part{{filename: "setup.exe", data: sampleEXE}}, 422, "unsupported_file_type", []string{"files/0"}},
				{"shell script", []part{{filename: "run.sh", data: []byte("#!/bin/sh\n")}}, 422, "unsupported_file_type", []string{"files/0"}},
				{"executable named .pdf", []part{{filename: "invoice.pdf", data: sampleEXE}}, 422, "file_type_mismatch", []string{"files/0"}},
				{"jpeg named .png", []part{{filename: "photo.png", data: sampleJPEG}}, 422, "file_type_mismatch", []string{"files/0"}},
				{"text named .gif", []part{{filename: "anim.gif", data: []byte("GIF? no")}}, 422, "file_type_mismatch", []string{"files/0"}},
				{"plain zip named .docx", []part{{filename: "memo.docx", data: plainZip}}, 422, "file_type_mismatch", []string{"files/0"}},
				{"presentation named .docx", []part{{filename: "memo.docx", data: pptxAsDocx}}, 422, "file_type_mismatch", []string{"files/0"}},
				{"binary named .txt", []part{{filename: "notes.txt", data: []byte("ok\xff\xfe")}}, 422, "file_type_mismatch", []string{"files/0"}},
				{"NUL in text", []part{{filename: "data.csv", data: []byte("a,b\x00\n")}}, 422, "file_type_mismatch", []string{"files/0"}},
				{"empty file", []part{{filename: "empty.txt", data: nil}}, 422, "validation_error", []string{"files/0"}},
				{"name that is only dots", []part{{filename: "..", data: []byte("x")}}, 422, "validation_error", []string{"files/0"}},
				{"Windows device name", []part{good, {filename: "CON.txt", data: []byte("x")}}, 422, "validation_error", []string{"files/1"}},
				{"Windows device name, lower case", []part{{filename: "aux.md", data: []byte("x")}}, 422, "validation_error", []string{"files/0"}},
				{"COM port", []part{{filename: "com1.csv", data: []byte("a\n")}}, 422, "validation_error", []string{"files/0"}},
				{"trailing space", []part{{filename: "notes.txt ", data: []byte("x")}}, 422, "validation_error", []string{"files/0"}},
				{"character Windows forbids", []part{{filename: "q3:draft.txt", data: []byte("x")}}, 422, "validation_error", []string{"files/0"}},
				{"duplicate names", []part{good, good}, 422, "validation_error", []string{"files/1"}},
				{"one bad file refuses all", []part{good, {filename: "x.exe", data: sampleEXE}, {filename: "y.pdf", data: []byte("nope")}}, 422, "unsupported_file_type", []string{"files/1", "files/2"}},
				{"no files part", []part{{field: "note", data: []byte("hello")}}, 422, "validation_error", []string{"note"}},
				{"files part without a file name", []part{{data: []byte("hello")}}, 422, "validation_error", []string{"files/0"}},
				{"file over the limit", []part{good, {filename: "big.txt", data: bytes.Repeat([]byte("a"), testMaxBytes+1)}}, 413, "payload_too_large", nil},
				{"file at the limit is fine but its neighbour is not", []part{{filename: "max.txt", data: bytes.Repeat([]byte("a"), testMaxBytes)}, {filename: "x.zip", data: plainZip}}, 422, "unsupported_file_type", []string{"files/1"}},
			}
			for _, tc := range tests {
				// Sequential: each case must leave the bucket empty.
				r := e.upload(t, e.owner.Key, tc.parts...)
				require.Equal(t, tc.status, r.Status, "%s: %s", tc.name, r.Body)
				p := r.Problem(t)
				require.Equal(t, tc.code, p.Code, tc.name)
				if tc.fields != nil {
					require.NotNil(t, p.Errors, tc.name)
					var fields []string
					for _, fe := range *p.Errors {
						fields = append(fields, fe.Field)
					}
					require.Equal(t, tc.fields, fields, tc.name)
				}
				require.Zero(t, e.blobCount(t, ""), "%s: bytes were kept", tc.name)
			}

			// More files than allowed, a missing boundary, and a non-multipart body.
			many := make([]part, attachments.DefaultMaxFiles+1)
			for i := range many {
				many[i] = part{filename: fmt.Sprintf("f%d.txt", i), data: []byte("x")}
			}
			r := e.upload(t, e.owner.Key, many...)
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)
			require.Zero(t, e.blobCount(t, ""))
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: e.owner.Key, RawBody: []byte("x"), ContentType: "multipart/form-data"})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: e.owner.Key, Body: map[string]any{"files": []string{"x"}}})
			require.Equal(t, http.StatusUnsupportedMediaType, r.Status)
			require.Equal(t, "unsupported_media_type", r.Problem(t).Code)
			body, ct := multipartBody(t, good)
			r = e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: e.owner.Key, RawBody: body[:len(body)-20], ContentType: ct})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status, string(r.Body))
			require.Zero(t, e.blobCount(t, ""))

			// The attachments scope is required.
			key := e.Key(t, e.owner.ID, "research")
			r = e.upload(t, key, good)
			require.Equal(t, http.StatusForbidden, r.Status)
		})
	}
}

// The upload routes skip the global body limit (uploads are larger) but keep their own.
func TestAttachmentsBodyLimits(t *testing.T) {
	t.Parallel()
	// A global limit smaller than a legitimate upload must not refuse it.
	small := servertest.New(t, store.SQLite, func(c *servertest.Config) {
		c.MaxBodyBytes = 1024
		c.App.Attachments = attachments.Config{MaxBytes: testMaxBytes, MaxRequestBytes: 8 << 10}
	})
	acct := small.NewAccount(t, store.TierFree, false, 0)
	body, ct := multipartBody(t, part{filename: "a.txt", data: bytes.Repeat([]byte("a"), 4096)})
	r := small.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: acct.Key, RawBody: body, ContentType: ct})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	// Over the whole-request limit: 413 before anything is read.
	body, ct = multipartBody(t, part{filename: "a.txt", data: bytes.Repeat([]byte("a"), 5000)}, part{filename: "b.txt", data: bytes.Repeat([]byte("b"), 5000)})
	r = small.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: acct.Key, RawBody: body, ContentType: ct})
	require.Equal(t, http.StatusRequestEntityTooLarge, r.Status)
	require.Equal(t, "payload_too_large", r.Problem(t).Code)
	// Without a Content-Length the limit is enforced while streaming.
	r = sendChunked(t, small, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: acct.Key, RawBody: body, ContentType: ct})
	require.Equal(t, http.StatusRequestEntityTooLarge, r.Status, string(r.Body))
	// JSON routes keep the global limit.
	r = small.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments/uploads", Token: acct.Key, Body: map[string]any{"filename": strings.Repeat("a", 250) + ".txt", "size_bytes": 1, "content_type": strings.Repeat("x", 900)}})
	require.Equal(t, http.StatusRequestEntityTooLarge, r.Status)
}

// sendChunked sends r without a Content-Length (chunked) and checks the response like Env.Do.
func sendChunked(t *testing.T, env *servertest.Env, r servertest.Req) *servertest.Resp {
	t.Helper()
	req, err := http.NewRequest(r.Method, env.URL+r.Path, io.MultiReader(bytes.NewReader(r.RawBody)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", r.ContentType)
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	resp := &servertest.Resp{Status: res.StatusCode, Header: res.Header, Body: b}
	require.NoError(t, env.Check(r, resp))
	return resp
}

// --- reserved uploads ---------------------------------------------------------------------------

func (e *attEnv) begin(t *testing.T, key string, body map[string]any) (*servertest.Resp, gen.AttachmentUploadBeginResponse) {
	t.Helper()
	r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments/uploads", Token: key, Body: body})
	var res gen.AttachmentUploadBeginResponse
	if r.Status == http.StatusCreated {
		r.JSON(t, &res)
	}
	return r, res
}

func (e *attEnv) put(t *testing.T, id, token string, data []byte) *servertest.Resp {
	t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set("X-Upload-Token", token)
	}
	return e.Do(t, servertest.Req{Method: "PUT", Path: "/api/v2/attachments/uploads/" + id, RawBody: data, ContentType: "application/octet-stream", Header: h})
}

func TestAttachmentsReservedUpload(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newAttEnv(t, d)
			ctx := context.Background()
			r, res := e.begin(t, e.owner.Key, map[string]any{"filename": "q3 report.pdf", "size_bytes": len(samplePDF), "content_type": "application/pdf"})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			id := res.AttachmentId.String()
			require.Equal(t, gen.AttachmentUploadBeginResponseStatus("pending_upload"), res.Status)
			require.Equal(t, e.URL+"/api/v2/attachments/uploads/"+id, res.UploadUrl)
			require.Equal(t, gen.AttachmentUploadBeginResponseUploadTokenHeader("X-Upload-Token"), res.UploadTokenHeader)
			require.Equal(t, testMaxBytes, res.MaxBytes)
			require.Equal(t, e.clock.Now().Add(time.Hour), res.ExpiresAt.UTC())
			require.True(t, strings.HasPrefix(res.UploadToken, "rut-"), res.UploadToken)
			require.Equal(t, "curl -X PUT -H 'X-Upload-Token: "+res.UploadToken+"' -H 'Content-Type: application/octet-stream' --data-binary @'q3 report.pdf' '"+res.UploadUrl+"'", res.Curl)
			// Only the token's hash is stored.
			row, err := e.Store.AttachmentByID(ctx, id)
			require.NoError(t, err)
			require.NotNil(t, row.UploadTokenHash)
			require.NotContains(t, *row.UploadTokenHash, strings.TrimPrefix(res.UploadToken, "rut-"))

			// Pending: visible to the owner with its expiry, unusable by jobs, invisible to others.
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/attachments/" + id, Token: e.owner.Key})
			require.Equal(t, http.StatusOK, r.Status)
			var a gen.Attachment
			r.JSON(t, &a)
			require.Equal(t, gen.AttachmentStatus("pending_upload"), a.Status)
			require.Equal(t, []gen.AttachedFile{{Filename: "q3 report.pdf", SizeBytes: len(samplePDF), ContentType: "application/pdf"}}, a.Files)
			require.False(t, a.ExpiresAt.IsNull())
			_, err = e.svc.FilesForJob(ctx, e.owner.ID, []string{id})
			require.ErrorIs(t, err, attachments.ErrUnusable)
			other := e.NewAccount(t, store.TierFree, false, 0)
			require.Equal(t, http.StatusNotFound, e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/attachments/" + id, Token: other.Key}).Status)

			// Token refusals: missing, wrong, another attachment's (the other account's reservation),
			// an API key instead of the token.
			code := func(r *servertest.Resp) string { return r.Problem(t).Code }
			r = e.put(t, id, "", samplePDF)
			require.Equal(t, http.StatusUnauthorized, r.Status)
			require.Equal(t, "unauthenticated", code(r))
			r = e.put(t, id, "rut-"+strings.Repeat("A", 43), samplePDF)
			require.Equal(t, http.StatusUnauthorized, r.Status)
			_, otherRes := e.begin(t, other.Key, map[string]any{"filename": "x.txt", "size_bytes": 3})
			r = e.put(t, id, otherRes.UploadToken, samplePDF)
			require.Equal(t, http.StatusForbidden, r.Status)
			require.Equal(t, "forbidden", code(r))
			r = e.Do(t, servertest.Req{Method: "PUT", Path: "/api/v2/attachments/uploads/" + id, Token: e.owner.Key, RawBody: samplePDF, ContentType: "application/octet-stream"})
			require.Equal(t, http.StatusUnauthorized, r.Status)
			r = e.put(t, "00000000-0000-4000-8000-000000000000", res.UploadToken, samplePDF)
			require.Equal(t, http.StatusNotFound, r.Status)

			// Wrong lengths and wrong content: refused, nothing kept, the token still works.
			short, long := samplePDF[:len(samplePDF)-1], append(append([]byte{}, samplePDF...), '\n')
			for _, body := range [][]byte{short, long} {
				r = e.put(t, id, res.UploadToken, body)
				require.Equal(t, http.StatusUnprocessableEntity, r.Status)
				require.Equal(t, "size_mismatch", code(r))
			}
			for _, body := range [][]byte{short, long} {
				r = sendChunked(t, e.Env, servertest.Req{Method: "PUT", Path: "/api/v2/attachments/uploads/" + id, RawBody: body, ContentType: "application/octet-stream", Header: http.Header{"X-Upload-Token": {res.UploadToken}}})
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, string(r.Body))
				require.Equal(t, "size_mismatch", code(r))
			}
			r = sendChunked(t, e.Env, servertest.Req{Method: "PUT", Path: "/api/v2/attachments/uploads/" + id, RawBody: bytes.Repeat([]byte("a"), testMaxBytes+1), ContentType: "application/octet-stream", Header: http.Header{"X-Upload-Token": {res.UploadToken}}})
			require.Equal(t, http.StatusRequestEntityTooLarge, r.Status)
			r = e.put(t, id, res.UploadToken, bytes.Repeat([]byte("a"), testMaxBytes+1))
			require.Equal(t, http.StatusRequestEntityTooLarge, r.Status)
			exe := make([]byte, len(samplePDF))
			copy(exe, sampleEXE)
			r = e.put(t, id, res.UploadToken, exe)
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)
			require.Equal(t, "file_type_mismatch", code(r))
			require.Zero(t, e.blobCount(t, "attachments/"+id+"/"), "a refused body was kept")
			_, err = e.svc.FilesForJob(ctx, e.owner.ID, []string{id})
			require.ErrorIs(t, err, attachments.ErrUnusable)

			// The right bytes land, sent with the file's own Content-Type (any is accepted): ready, no
			// expiry, usable; the token is spent.
			r = e.Do(t, servertest.Req{Method: "PUT", Path: "/api/v2/attachments/uploads/" + id, RawBody: samplePDF, ContentType: "application/PDF", Header: http.Header{"X-Upload-Token": {res.UploadToken}}})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			r.JSON(t, &a)
			require.Equal(t, gen.AttachmentStatus("ready"), a.Status)
			require.True(t, a.ExpiresAt.IsNull())
			require.Equal(t, 1, e.blobCount(t, "attachments/"+id+"/"))
			files, err := e.svc.FilesForJob(ctx, e.owner.ID, []string{id})
			require.NoError(t, err)
			require.Equal(t, samplePDF, readAll(t, files[0]))
			require.Equal(t, "q3 report.pdf", files[0].Name)
			r = e.put(t, id, res.UploadToken, samplePDF)
			require.Equal(t, http.StatusUnauthorized, r.Status, "token reuse")
			require.Equal(t, 1, e.blobCount(t, "attachments/"+id+"/"))

			// Deleting a reservation invalidates its token.
			_, res2 := e.begin(t, e.owner.Key, map[string]any{"filename": "b.txt", "size_bytes": 2})
			require.Equal(t, http.StatusNoContent, e.Do(t, servertest.Req{Method: "DELETE", Path: "/api/v2/attachments/" + res2.AttachmentId.String(), Token: e.owner.Key}).Status)
			require.Equal(t, http.StatusNotFound, e.put(t, res2.AttachmentId.String(), res2.UploadToken, []byte("hi")).Status)
		})
	}
}

func TestAttachmentsUploadExpiry(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newAttEnv(t, d)
			_, res := e.begin(t, e.owner.Key, map[string]any{"filename": "late.txt", "size_bytes": 5})
			id := res.AttachmentId.String()
			e.clock.Advance(time.Hour)

			// Expired but not yet discarded: the token no longer works; the attachment is gone for reads.
			r := e.put(t, id, res.UploadToken, []byte("hello"))
			require.Equal(t, http.StatusUnauthorized, r.Status)
			require.Contains(t, *r.Problem(t).Detail, "expired")
			require.Equal(t, http.StatusNotFound, e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/attachments/" + id, Token: e.owner.Key}).Status)
			_, err := e.svc.FilesForJob(context.Background(), e.owner.ID, []string{id})
			require.ErrorIs(t, err, attachments.ErrUnusable)

			// The next reservation discards it: 404 from then on.
			r, _ = e.begin(t, e.owner.Key, map[string]any{"filename": "next.txt", "size_bytes": 5})
			require.Equal(t, http.StatusCreated, r.Status)
			require.Equal(t, http.StatusNotFound, e.put(t, id, res.UploadToken, []byte("hello")).Status)
		})
	}
}

func TestAttachmentsBeginRefusals(t *testing.T) {
	t.Parallel()
	e := newAttEnv(t, store.SQLite)
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		code   string
		field  string
	}{
		{"archive", map[string]any{"filename": "a.zip", "size_bytes": 10}, 422, "unsupported_file_type", "filename"},
		{"executable", map[string]any{"filename": "a.exe", "size_bytes": 10}, 422, "unsupported_file_type", "filename"},
		{"over the limit", map[string]any{"filename": "a.pdf", "size_bytes": testMaxBytes + 1}, 413, "payload_too_large", ""},
		{"zero size", map[string]any{"filename": "a.pdf", "size_bytes": 0}, 422, "validation_error", "size_bytes"},
		{"slash in name", map[string]any{"filename": "../a.pdf", "size_bytes": 1}, 422, "validation_error", "filename"},
		{"Windows device name", map[string]any{"filename": "nul.json", "size_bytes": 1}, 422, "validation_error", "filename"},
		{"device name with spaces", map[string]any{"filename": "LPT1 .pdf", "size_bytes": 1}, 422, "validation_error", "filename"},
		{"trailing dot", map[string]any{"filename": "a.pdf.", "size_bytes": 1}, 422, "validation_error", "filename"},
		{"trailing space", map[string]any{"filename": "a.pdf ", "size_bytes": 1}, 422, "validation_error", "filename"},
		{"unknown field", map[string]any{"filename": "a.pdf", "size_bytes": 1, "sha256": "x"}, 422, "validation_error", "sha256"},
		{"missing size", map[string]any{"filename": "a.pdf"}, 422, "validation_error", ""},
	} {
		r, _ := e.begin(t, e.owner.Key, tc.body)
		require.Equal(t, tc.status, r.Status, "%s: %s", tc.name, r.Body)
		p := r.Problem(t)
		require.Equal(t, tc.code, p.Code, tc.name)
		if tc.field != "" {
			require.NotNil(t, p.Errors, tc.name)
			require.Equal(t, tc.field, (*p.Errors)[0].Field, tc.name)
		}
	}
}

// The curl command of a reservation works when pasted into a shell.
func TestAttachmentsCurlCommandWorks(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("sh is not installed")
	}
	e := newAttEnv(t, store.SQLite)
	name := "Q3 report (final) it's.csv"
	data := []byte("quarter,revenue\nQ3,1200\n")
	_, res := e.begin(t, e.owner.Key, map[string]any{"filename": name, "size_bytes": len(data), "content_type": "text/csv"})
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o600))
	cmd := exec.Command(sh, "-c", res.Curl+" --silent --show-error")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), `"status":"ready"`)
	files, err := e.svc.FilesForJob(context.Background(), e.owner.ID, []string{res.AttachmentId.String()})
	require.NoError(t, err)
	require.Equal(t, data, readAll(t, files[0]))
}

// --- import -------------------------------------------------------------------------------------

// publicAddr is a global unicast address the test resolver hands out for the "public" hosts; the test
// dialer connects it to a loopback server, so nothing leaves the machine and the block stays on.
var publicAddr = netip.MustParseAddr("93.184.215.14")

type testResolver struct {
	mu     sync.Mutex
	names  map[string][]netip.Addr
	rebind map[string]int
}

func (r *testResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n, ok := r.rebind[host]; ok {
		r.rebind[host] = n + 1
		if n == 0 {
			return []netip.Addr{publicAddr}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	if ips, ok := r.names[host]; ok {
		return ips, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// testDialer routes the public address to the origin server and counts any other dial (none may
// happen: the guard refuses before dialling).
type testDialer struct {
	origin string
	stray  atomic.Int64
}

func (d *testDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	ap, err := netip.ParseAddrPort(address)
	if err == nil && ap.Addr() == publicAddr {
		var nd net.Dialer
		return nd.DialContext(ctx, network, d.origin)
	}
	d.stray.Add(1)
	return nil, fmt.Errorf("test dialer: refusing unexpected dial to %s", address)
}

type importFixture struct {
	*attEnv
	hits     *atomic.Int64 // requests that reached the loopback target
	port     string
	dialer   *testDialer
	resolver *testResolver
}

func newImportFixture(t *testing.T, d store.Dialect) *importFixture {
	t.Helper()
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, "internal secret")
	}))
	t.Cleanup(target.Close)
	_, port, _ := net.SplitHostPort(target.Listener.Addr().String())
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-loopback":
			http.Redirect(w, r, "http://127.0.0.1:"+port+"/x.txt", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/x.txt", http.StatusMovedPermanently)
		case "/to-private-name":
			http.Redirect(w, r, "http://private.example.test/x.txt", http.StatusTemporaryRedirect)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/to-ipv6-loopback":
			http.Redirect(w, r, "http://[::1]:"+port+"/x.txt", http.StatusFound)
		case "/loop.txt":
			http.Redirect(w, r, "/loop.txt", http.StatusFound)
		case "/hop/report.pdf":
			http.Redirect(w, r, "/papers/whitepaper.pdf", http.StatusFound)
		case "/papers/whitepaper.pdf":
			w.Header().Set("Content-Type", "application/pdf; qs=0.9")
			_, _ = w.Write(samplePDF)
		case "/docs/Q3 report.csv", "/export":
			w.Header().Set("Content-Type", "text/csv; charset=utf-8")
			_, _ = io.WriteString(w, "a,b\n1,2\n")
		case "/fake.pdf":
			_, _ = w.Write(sampleEXE)
		case "/big.txt":
			_, _ = w.Write(bytes.Repeat([]byte("a"), testMaxBytes+1))
		case "/big-chunked.txt":
			w.(http.Flusher).Flush()
			_, _ = w.Write(bytes.Repeat([]byte("a"), testMaxBytes+1))
		case "/empty.txt":
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(origin.Close)
	res := &testResolver{
		names: map[string][]netip.Addr{
			"files.example.test":   {publicAddr},
			"private.example.test": {netip.MustParseAddr("10.1.2.3")},
			"mixed.example.test":   {publicAddr, netip.MustParseAddr("127.0.0.1")},
			"mapped.example.test":  {netip.MustParseAddr("::ffff:169.254.169.254")},
			"ula.example.test":     {netip.MustParseAddr("fd12:3456::1")},
		},
		rebind: map[string]int{"rebind.example.test": 0},
	}
	dialer := &testDialer{origin: origin.Listener.Addr().String()}
	e := newAttEnv(t, d, netguard.WithResolver(res), netguard.WithDialer(dialer))
	return &importFixture{attEnv: e, hits: &hits, port: port, dialer: dialer, resolver: res}
}

func (f *importFixture) importURL(t *testing.T, body map[string]any) *servertest.Resp {
	t.Helper()
	return f.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments/import", Token: f.owner.Key, Body: body})
}

func TestAttachmentsImportHostileURLs(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			f := newImportFixture(t, d)
			p := f.port
			hostile := []string{
				"http://127.0.0.1:" + p + "/x.txt",
				"http://127.1:" + p + "/x.txt",
				"http://2130706433:" + p + "/x.txt",
				"http://0x7f000001:" + p + "/x.txt",
				"http://017700000001:" + p + "/x.txt",
				"http://0x7f.0.0.1:" + p + "/x.txt",
				"http://0177.0.0.1:" + p + "/x.txt",
				"http://127.000.000.001:" + p + "/x.txt",
				"http://[::1]:" + p + "/x.txt",
				"http://[::ffff:127.0.0.1]:" + p + "/x.txt",
				"http://[::ffff:7f00:1]:" + p + "/x.txt",
				"http://localhost:" + p + "/x.txt",
				"http://LocalHost.:" + p + "/x.txt",
				"http://app.localhost:" + p + "/x.txt",
				"http://0.0.0.0:" + p + "/x.txt",
				"http://0:" + p + "/x.txt",
				"http://[::]:" + p + "/x.txt",
				"http://169.254.169.254/latest/meta-data/x.txt",
				"http://[fd00:ec2::254]/latest/meta-data/x.txt",
				"http://10.0.0.1/x.txt",
				"http://10.255.255.255/x.txt",
				"http://172.16.0.1/x.txt",
				"http://172.31.255.254/x.txt",
				"http://192.168.0.1/x.txt",
				"http://100.64.0.1/x.txt",
				"http://100.127.255.254/x.txt",
				"http://[fc00::1]/x.txt",
				"http://[fe80::1]/x.txt",
				"http://[fe80::1%25eth0]/x.txt",
				"http://224.0.0.251/x.txt",
				"http://[ff02::1]/x.txt",
				"http://255.255.255.255/x.txt",
				"http://240.0.0.1/x.txt",
				"http://192.0.2.1/x.txt",
				"http://[::ffff:a00:1]/x.txt",
				"http://[64:ff9b::7f00:1]/x.txt",
				"https://private.example.test/x.txt",
				"http://mixed.example.test/x.txt",
				"http://mapped.example.test/x.txt",
				"http://ula.example.test/x.txt",
				"http://rebind.example.test/x.txt",
				"http://files.example.test/to-loopback",
				"http://files.example.test/to-metadata",
				"http://files.example.test/to-private-name",
				"http://files.example.test/to-file",
				"http://files.example.test/to-ipv6-loopback",
				"file:///etc/passwd",
				"gopher://127.0.0.1:" + p + "/_x.txt",
				"ftp://files.example.test/x.txt",
				"dict://127.0.0.1:" + p + "/x.txt",
				"http://user:pass@files.example.test/x.txt",
				"http://admin@files.example.test/x.txt",
			}
			require.GreaterOrEqual(t, len(hostile), 25)
			// DNS rebinding: the name answers a public address to a first look-up (what a check-then-
			// fetch client would validate) and loopback afterwards; only the dial-time answer counts.
			_, err := f.resolver.LookupNetIP(context.Background(), "ip", "rebind.example.test")
			require.NoError(t, err)
			for _, u := range hostile {
				r := f.importURL(t, map[string]any{"source_url": u, "filename": "x.txt"})
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s: %s", u, r.Body)
				pr := r.Problem(t)
				require.Equal(t, "url_not_allowed", pr.Code, "%s: %s", u, r.Body)
				require.NotNil(t, pr.Errors)
				require.Equal(t, "source_url", (*pr.Errors)[0].Field, u)
			}
			require.Zero(t, f.hits.Load(), "a hostile URL reached the loopback server")
			require.Zero(t, f.dialer.stray.Load(), "a hostile address reached the dialer")
			require.Zero(t, f.blobCount(t, ""))
			t.Logf("%d hostile URLs refused", len(hostile))
		})
	}
}

func TestAttachmentsImport(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			f := newImportFixture(t, d)
			ctx := context.Background()

			// The name comes from the URL path, the type from the response, through a redirect.
			r := f.importURL(t, map[string]any{"source_url": "http://files.example.test/hop/report.pdf?x=1", "filename": nil})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			var a gen.Attachment
			r.JSON(t, &a)
			require.Equal(t, gen.AttachmentStatus("ready"), a.Status)
			require.Equal(t, []gen.AttachedFile{{Filename: "report.pdf", SizeBytes: len(samplePDF), ContentType: "application/pdf"}}, a.Files)
			files, err := f.svc.FilesForJob(ctx, f.owner.ID, []string{a.AttachmentId.String()})
			require.NoError(t, err)
			require.Equal(t, samplePDF, readAll(t, files[0]))

			// Percent-decoded path name; an explicit name for a URL without one.
			r = f.importURL(t, map[string]any{"source_url": "http://files.example.test/docs/Q3%20report.csv"})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			r.JSON(t, &a)
			require.Equal(t, "Q3 report.csv", a.Files[0].Filename)
			require.Equal(t, "text/csv", a.Files[0].ContentType)
			r = f.importURL(t, map[string]any{"source_url": "http://files.example.test/export?id=42", "filename": "export-42.csv"})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			r.JSON(t, &a)
			require.Equal(t, "export-42.csv", a.Files[0].Filename)

			for _, tc := range []struct {
				name, url, filename, code, field string
			}{
				{"no name in the URL", "http://files.example.test/", "", "validation_error", "filename"},
				{"archive by inferred name", "http://files.example.test/bundle.zip", "", "unsupported_file_type", "filename"},
				{"executable by explicit name", "http://files.example.test/export", "tool.exe", "unsupported_file_type", "filename"},
				{"device name by explicit name", "http://files.example.test/export", "Con.txt", "validation_error", "filename"},
				{"device name by inferred name", "http://files.example.test/docs/aux.md", "", "validation_error", "filename"},
				{"trailing dot by inferred name", "http://files.example.test/docs/notes.txt.", "", "validation_error", "filename"},
				{"content does not match", "http://files.example.test/fake.pdf", "", "file_type_mismatch", "filename"},
				{"not found", "http://files.example.test/missing.txt", "", "import_failed", "source_url"},
				{"too large", "http://files.example.test/big.txt", "", "import_failed", "source_url"},
				{"too large, chunked", "http://files.example.test/big-chunked.txt", "", "import_failed", "source_url"},
				{"empty", "http://files.example.test/empty.txt", "", "validation_error", "source_url"},
				{"redirect loop", "http://files.example.test/loop.txt", "", "import_failed", "source_url"},
				{"unknown host", "http://nowhere.example.test/x.txt", "", "import_failed", "source_url"},
			} {
				body := map[string]any{"source_url": tc.url}
				if tc.filename != "" {
					body["filename"] = tc.filename
				}
				r := f.importURL(t, body)
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s: %s", tc.name, r.Body)
				p := r.Problem(t)
				require.Equal(t, tc.code, p.Code, "%s: %s", tc.name, r.Body)
				require.Equal(t, tc.field, (*p.Errors)[0].Field, tc.name)
			}
			require.Equal(t, 3, f.blobCount(t, ""), "refused imports kept bytes")
			require.Zero(t, f.hits.Load())
			require.Zero(t, f.dialer.stray.Load())
		})
	}
}

// In the shipped configuration (no injected resolver or dialer) loopback targets are refused too.
func TestAttachmentsImportShippedClient(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, "internal secret")
	}))
	t.Cleanup(target.Close)
	_, port, _ := net.SplitHostPort(target.Listener.Addr().String())
	e := newAttEnv(t, store.SQLite)
	for _, u := range []string{target.URL + "/x.txt", "http://localhost:" + port + "/x.txt", "http://[::1]:" + port + "/x.txt", "http://2130706433:" + port + "/x.txt"} {
		r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments/import", Token: e.owner.Key, Body: map[string]any{"source_url": u}})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status)
		require.Equal(t, "url_not_allowed", r.Problem(t).Code)
	}
	require.Zero(t, hits.Load())
}

// --- FilesForJob --------------------------------------------------------------------------------

func TestAttachmentsFilesForJob(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newAttEnv(t, d)
			ctx := context.Background()
			mk := func(acct servertest.Account, parts ...part) string {
				r := e.upload(t, acct.Key, parts...)
				require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
				var a gen.Attachment
				r.JSON(t, &a)
				return a.AttachmentId.String()
			}
			a1 := mk(e.owner, part{filename: "data.csv", data: []byte("1\n")}, part{filename: "notes.md", data: []byte("# n\n")})
			a2 := mk(e.owner, part{filename: "DATA.csv", data: []byte("2\n")})
			other := e.NewAccount(t, store.TierFree, false, 0)
			foreign := mk(other, part{filename: "theirs.txt", data: []byte("x")})
			_, pending := e.begin(t, e.owner.Key, map[string]any{"filename": "later.txt", "size_bytes": 4})

			files, err := e.svc.FilesForJob(ctx, e.owner.ID, []string{a1, a2, a1})
			require.NoError(t, err)
			var names []string
			for _, f := range files {
				names = append(names, f.Name)
			}
			require.Equal(t, []string{"data.csv", "notes.md", "DATA (2).csv"}, names)
			require.Equal(t, []byte("2\n"), readAll(t, files[2]))
			require.Equal(t, int64(2), files[2].Size)

			for _, tc := range []struct {
				ids   []string
				index int
			}{
				{[]string{a1, "not-a-uuid"}, 1},
				{[]string{a1, a2, foreign}, 2},
				{[]string{pending.AttachmentId.String()}, 0},
				{[]string{a2, "00000000-0000-4000-8000-000000000000"}, 1},
			} {
				_, err := e.svc.FilesForJob(ctx, e.owner.ID, tc.ids)
				require.ErrorIs(t, err, attachments.ErrUnusable)
				var ue attachments.UnusableError
				require.ErrorAs(t, err, &ue)
				require.Equal(t, tc.index, ue.Index)
				var uep *attachments.UnusableError
				require.ErrorAs(t, err, &uep)
				require.Equal(t, tc.ids[tc.index], uep.ID)
			}

			require.Equal(t, http.StatusNoContent, e.Do(t, servertest.Req{Method: "DELETE", Path: "/api/v2/attachments/" + a2, Token: e.owner.Key}).Status)
			_, err = e.svc.FilesForJob(ctx, e.owner.ID, []string{a1, a2})
			var ue attachments.UnusableError
			require.ErrorAs(t, err, &ue)
			require.Equal(t, 1, ue.Index)
		})
	}
}
