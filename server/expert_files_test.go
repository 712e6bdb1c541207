package server_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gocloud.dev/blob/memblob"

	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/expert"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/netguard"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
	"github.com/researchd/researchd/workspace"
)

// --- environment --------------------------------------------------------------------------------

type filesEnv struct {
	expertEnv
	svc    *expert.Service
	repos  string // the experts' repositories
	owner  servertest.Account
	origin string // port of the loopback origin behind files.example.test
}

// newFilesEnv runs the app with expert repositories in a temporary folder and an import client
// whose resolver maps files.example.test to a public address that the test dialer connects to a
// loopback origin (the address checks still apply to every other name and literal).
func newFilesEnv(t *testing.T, d store.Dialect) *filesEnv {
	t.Helper()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/docs/rubric.md", "/export":
			w.Header().Set("Content-Type", "text/markdown")
			_, _ = io.WriteString(w, "# Rubric\n\nHigh risk: a breach.\n")
		case "/docs/brief.pdf":
			w.Header().Set("Content-Type", "application/pdf")
			_, _ = w.Write(textPDF("Heat pumps grew forty percent"))
		case "/docs/bundle.zip":
			_, _ = w.Write(zipOf(t, map[string]string{"readme.txt": "hi"}))
		case "/docs/fake.png":
			_, _ = io.WriteString(w, "not an image")
		case "/docs/big.txt":
			_, _ = w.Write(bytes.Repeat([]byte("a"), testMaxBytes+1))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(origin.Close)
	res := &testResolver{names: map[string][]netip.Addr{"files.example.test": {publicAddr}}}
	dialer := &testDialer{origin: origin.Listener.Addr().String()}

	f := &filesEnv{repos: t.TempDir()}
	env := servertest.New(t, d, func(cfg *servertest.Config) {
		bucket := memblob.OpenBucket(nil)
		t.Cleanup(func() { _ = bucket.Close() })
		cfg.App.Bucket = bucket
		cfg.App.Attachments = attachments.Config{MaxBytes: testMaxBytes, ImportTimeout: 5 * time.Second,
			ImportOptions: []netguard.Option{netguard.WithResolver(res), netguard.WithDialer(dialer)}}
		cfg.App.SkillCatalog, cfg.App.ToolCatalog = testSkills{"sec-filings"}, testTools{"web_search"}
		cfg.App.ExpertFilesDir = f.repos
	})
	f.svc = env.Services.Experts
	f.expertEnv = expertEnv{env}
	f.owner = f.NewAccount(t, store.TierPro, false, 0)
	_, f.origin, _ = splitHostPort(origin.Listener.Addr().String())
	return f
}

func splitHostPort(addr string) (string, string, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return "", "", err
	}
	return ap.Addr().String(), fmt.Sprint(ap.Port()), nil
}

func (f *filesEnv) newExpert(t *testing.T, key string) gen.Expert {
	t.Helper()
	return f.create(t, key, map[string]any{
		"name": "Vendor Risk", "system_prompt": "Assess vendors.",
		"context_files":        []map[string]any{{"name": "template.html", "content": "<h1>{{vendor}}</h1>"}},
		"output_template_file": "template.html",
	})
}

func (f *filesEnv) upload(t *testing.T, key, expertID string, parts ...part) *servertest.Resp {
	t.Helper()
	for i := range parts {
		if parts[i].field == "" {
			parts[i].field = "file"
		}
	}
	body, ct := multipartBody(t, parts...)
	return f.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/experts/" + expertID + "/context-files", Token: key, RawBody: body, ContentType: ct})
}

func (f *filesEnv) importFile(t *testing.T, key, expertID string, body map[string]any) *servertest.Resp {
	t.Helper()
	return f.req(t, "POST", "/experts/"+expertID+"/context-files/import", key, body)
}

func (f *filesEnv) list(t *testing.T, key, expertID string) gen.ContextFileList {
	t.Helper()
	r := f.req(t, "GET", "/experts/"+expertID+"/context-files", key, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var l gen.ContextFileList
	r.JSON(t, &l)
	return l
}

func stored(t *testing.T, r *servertest.Resp) gen.ContextFileUploadResponse {
	t.Helper()
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var out gen.ContextFileUploadResponse
	r.JSON(t, &out)
	require.True(t, out.Success)
	return out
}

// repoFile reads context/<name> at a commit of the expert's repository.
func (f *filesEnv) repoFile(t *testing.T, expertID, sha, name string) ([]byte, error) {
	t.Helper()
	repo, err := workspace.Open(filepath.Join(f.repos, expertID))
	require.NoError(t, err)
	return repo.ReadFile(sha, "context/"+name)
}

// textPDF builds a one-page PDF showing text in Helvetica.
func textPDF(text string) []byte {
	content := fmt.Sprintf("BT /F1 12 Tf 72 712 Td (%s) Tj ET", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// --- tests --------------------------------------------------------------------------------------

func TestExpertContextFilesUploadListDownloadDelete(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			f := newFilesEnv(t, d)
			x := f.newExpert(t, f.owner.Key)
			id := x.ExpertId

			notes := []byte("# Notes\n\nZürich – vendors must hold ISO 27001.\n")
			md := stored(t, f.upload(t, f.owner.Key, id, part{filename: "notes.md", data: notes}))
			require.Equal(t, "notes.md", md.Name)
			require.Equal(t, "context/notes.md", md.Path)
			require.Equal(t, len(notes), md.SizeBytes)
			require.True(t, md.TextMirrored)
			require.Equal(t, len([]rune(string(notes))), md.CharCount)
			sha, err := md.CommitSha.Get()
			require.NoError(t, err)
			require.Regexp(t, shaPattern, sha)
			got, err := f.repoFile(t, id, sha, "notes.md")
			require.NoError(t, err)
			require.Equal(t, notes, got, "the commit holds the file")

			pdf := stored(t, f.upload(t, f.owner.Key, id, part{filename: "brief.pdf", data: textPDF("Heat pumps grew forty percent")}))
			require.True(t, pdf.TextMirrored)
			require.Positive(t, pdf.CharCount)
			png := stored(t, f.upload(t, f.owner.Key, id, part{filename: "chart.png", data: samplePNG}))
			require.False(t, png.TextMirrored)
			require.Zero(t, png.CharCount)
			docx := stored(t, f.upload(t, f.owner.Key, id, part{filename: "policy.docx", data: sampleDOCX(t)}))
			require.Equal(t, "context/policy.docx", docx.Path)

			l := f.list(t, f.owner.Key, id)
			require.Equal(t, id, l.ExpertId)
			require.Equal(t, 5, l.Count)
			byName := map[string]gen.ContextFileSummary{}
			for _, s := range l.Files {
				byName[s.Name] = s
			}
			require.Equal(t, gen.ContextFileSummary{Name: "notes.md", CharCount: md.CharCount, SizeBytes: len(notes), InRepository: true, TextMirrored: true}, byName["notes.md"])
			require.True(t, byName["brief.pdf"].InRepository)
			require.False(t, byName["chart.png"].TextMirrored)
			require.True(t, byName["template.html"].TextMirrored, "inline files are listed too")
			require.True(t, byName["template.html"].InRepository)
			inline, err := f.repoFile(t, id, "", "template.html")
			require.NoError(t, err)
			require.Equal(t, []byte("<h1>{{vendor}}</h1>"), inline)

			// Downloads: the bytes with their type.
			for _, tc := range []struct {
				name, ctype string
				data        []byte
			}{
				{"notes.md", "text/markdown; charset=utf-8", notes},
				{"chart.png", "image/png", samplePNG},
				{"template.html", "text/html; charset=utf-8", []byte("<h1>{{vendor}}</h1>")},
			} {
				r := f.req(t, "GET", "/experts/"+id+"/context-files/"+tc.name, f.owner.Key, nil)
				require.Equal(t, http.StatusOK, r.Status)
				require.Equal(t, tc.data, r.Body)
				require.Equal(t, tc.ctype, r.Header.Get("Content-Type"))
				require.Equal(t, `attachment; filename=`+tc.name, r.Header.Get("Content-Disposition"))
			}
			require.Equal(t, http.StatusNotFound, f.req(t, "GET", "/experts/"+id+"/context-files/missing.md", f.owner.Key, nil).Status)

			// Re-upload replaces: same count, new content, a new commit.
			again := stored(t, f.upload(t, f.owner.Key, id, part{filename: "notes.md", data: []byte("v2")}))
			sha2, _ := again.CommitSha.Get()
			require.NotEqual(t, sha, sha2)
			require.Equal(t, 5, f.list(t, f.owner.Key, id).Count)
			require.Equal(t, []byte("v2"), f.req(t, "GET", "/experts/"+id+"/context-files/notes.md", f.owner.Key, nil).Body)
			got, err = f.repoFile(t, id, sha2, "notes.md")
			require.NoError(t, err)
			require.Equal(t, []byte("v2"), got)

			// Inline files of an update are committed too.
			require.Equal(t, http.StatusOK, f.req(t, "PATCH", "/experts/"+id, f.owner.Key, map[string]any{
				"context_files": []map[string]any{{"name": "faq.md", "content": "Q: why?"}}}).Status)
			faq, err := f.repoFile(t, id, "", "faq.md")
			require.NoError(t, err)
			require.Equal(t, []byte("Q: why?"), faq)
			require.Equal(t, http.StatusOK, f.req(t, "DELETE", "/experts/"+id+"/context-files/faq.md", f.owner.Key, nil).Status)

			// The template file cannot be detached until the setting is cleared.
			r := f.req(t, "DELETE", "/experts/"+id+"/context-files/template.html", f.owner.Key, nil)
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "context_file_in_use", r.Problem(t).Code)
			require.Equal(t, http.StatusOK, f.req(t, "PATCH", "/experts/"+id, f.owner.Key, map[string]any{"output_template_file": ""}).Status)
			r = f.req(t, "DELETE", "/experts/"+id+"/context-files/template.html", f.owner.Key, nil)
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var del gen.ContextFileDeleteResponse
			r.JSON(t, &del)
			require.Equal(t, gen.ContextFileDeleteResponse{Name: "template.html", RemovedFromMirror: true, RemovedFromRepository: true, Success: true}, del,
				"inline files from create are committed too")

			r = f.req(t, "DELETE", "/experts/"+id+"/context-files/notes.md", f.owner.Key, nil)
			require.Equal(t, http.StatusOK, r.Status)
			r.JSON(t, &del)
			require.Equal(t, gen.ContextFileDeleteResponse{Name: "notes.md", RemovedFromMirror: true, RemovedFromRepository: true, Success: true}, del)
			_, err = f.repoFile(t, id, "", "notes.md")
			require.ErrorIs(t, err, workspace.ErrNotFound, "the deletion is committed")
			require.Equal(t, http.StatusNotFound, f.req(t, "DELETE", "/experts/"+id+"/context-files/notes.md", f.owner.Key, nil).Status)
			require.Equal(t, 3, f.list(t, f.owner.Key, id).Count)

			// The database is the source of truth: reads survive a lost repository, and the next
			// upload starts a new one.
			require.NoError(t, os.RemoveAll(filepath.Join(f.repos, id)))
			require.Equal(t, samplePNG, f.req(t, "GET", "/experts/"+id+"/context-files/chart.png", f.owner.Key, nil).Body)
			require.Equal(t, 3, f.list(t, f.owner.Key, id).Count)
			fresh := stored(t, f.upload(t, f.owner.Key, id, part{filename: "notes.md", data: notes}))
			require.True(t, fresh.CommitSha.IsSpecified() && !fresh.CommitSha.IsNull())
		})
	}
}

func TestExpertContextFilesAdmission(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			f := newFilesEnv(t, d)
			id := f.newExpert(t, f.owner.Key).ExpertId
			cases := []struct {
				name  string
				parts []part
				code  string
			}{
				{"png that is text", []part{{filename: "chart.png", data: []byte("not an image at all")}}, "unsupported_file_type"},
				{"pdf that is an exe", []part{{filename: "report.pdf", data: sampleEXE}}, "unsupported_file_type"},
				{"zip archive", []part{{filename: "bundle.zip", data: zipOf(t, map[string]string{"readme.txt": "hi"})}}, "archive_not_allowed"},
				{"zip renamed docx", []part{{filename: "policy.docx", data: zipOf(t, map[string]string{"readme.txt": "hi"})}}, "unsupported_file_type"},
				{"unknown extension", []part{{filename: "tool.exe", data: sampleEXE}}, "unsupported_file_type"},
				{"no extension", []part{{filename: "README", data: []byte("hello")}}, "unsupported_file_type"},
				{"text with NUL", []part{{filename: "notes.txt", data: []byte("a\x00b")}}, "unsupported_file_type"},
				{"empty", []part{{filename: "empty.md", data: nil}}, "validation_error"},
				{"hidden name", []part{{filename: ".env.txt", data: []byte("x")}}, "validation_error"},
				{"wrong field", []part{{field: "files", filename: "notes.md", data: []byte("x")}}, "validation_error"},
				{"two files", []part{{filename: "a.md", data: []byte("a")}, {filename: "b.md", data: []byte("b")}}, "validation_error"},
			}
			for _, tc := range cases {
				r := f.upload(t, f.owner.Key, id, tc.parts...)
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, tc.name)
				require.Equal(t, tc.code, r.Problem(t).Code, tc.name)
			}
			r := f.upload(t, f.owner.Key, id, part{filename: "big.txt", data: bytes.Repeat([]byte("a"), testMaxBytes+1)})
			require.Equal(t, http.StatusRequestEntityTooLarge, r.Status)
			require.Equal(t, 1, f.list(t, f.owner.Key, id).Count, "refused uploads keep nothing")

			// A path in the name keeps only its base.
			s := stored(t, f.upload(t, f.owner.Key, id, part{filename: `..\..\etc\notes.md`, data: []byte("x")}))
			require.Equal(t, "context/notes.md", s.Path)
		})
	}
}

func TestExpertContextFilesImport(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			f := newFilesEnv(t, d)
			id := f.newExpert(t, f.owner.Key).ExpertId

			s := stored(t, f.importFile(t, f.owner.Key, id, map[string]any{"source_url": "http://files.example.test/docs/rubric.md"}))
			require.Equal(t, "rubric.md", s.Name)
			require.True(t, s.TextMirrored)
			pdf := stored(t, f.importFile(t, f.owner.Key, id, map[string]any{"source_url": "http://files.example.test/docs/brief.pdf"}))
			require.Positive(t, pdf.CharCount)
			named := stored(t, f.importFile(t, f.owner.Key, id, map[string]any{"source_url": "http://files.example.test/export", "filename": "export.md"}))
			require.Equal(t, "context/export.md", named.Path)

			refusals := []struct {
				name string
				body map[string]any
				code string
			}{
				{"neither", map[string]any{"filename": "a.md"}, "validation_error"},
				{"both", map[string]any{"source_url": "http://files.example.test/docs/rubric.md", "attachment_id": "2c9a4b1e-7f3d-4e2a-9b8c-6d5e4f3a2b1c"}, "validation_error"},
				{"no usable extension", map[string]any{"source_url": "http://files.example.test/export"}, "unsupported_file_type"},
				{"loopback", map[string]any{"source_url": "http://127.0.0.1:" + f.origin + "/docs/rubric.md"}, "url_not_allowed"},
				{"private name", map[string]any{"source_url": "http://localhost:" + f.origin + "/docs/rubric.md"}, "url_not_allowed"},
				{"archive", map[string]any{"source_url": "http://files.example.test/docs/bundle.zip"}, "archive_not_allowed"},
				{"magic bytes", map[string]any{"source_url": "http://files.example.test/docs/fake.png"}, "unsupported_file_type"},
				{"too large", map[string]any{"source_url": "http://files.example.test/docs/big.txt"}, "source_too_large"},
				{"not found", map[string]any{"source_url": "http://files.example.test/docs/missing.md"}, "import_failed"},
				{"unknown attachment", map[string]any{"attachment_id": "2c9a4b1e-7f3d-4e2a-9b8c-6d5e4f3a2b1c"}, "validation_error"},
			}
			for _, tc := range refusals {
				r := f.importFile(t, f.owner.Key, id, tc.body)
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, tc.name+": "+string(r.Body))
				require.Equal(t, tc.code, r.Problem(t).Code, tc.name)
			}

			// From attachments: one file, or one picked from several.
			attach := func(key string, parts ...part) string {
				body, ct := multipartBody(t, parts...)
				r := f.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: key, RawBody: body, ContentType: ct})
				require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
				var a gen.Attachment
				r.JSON(t, &a)
				return a.AttachmentId.String()
			}
			single := attach(f.owner.Key, part{filename: "chart.png", data: samplePNG})
			png := stored(t, f.importFile(t, f.owner.Key, id, map[string]any{"attachment_id": single}))
			require.Equal(t, "chart.png", png.Name)
			require.False(t, png.TextMirrored)
			renamed := stored(t, f.importFile(t, f.owner.Key, id, map[string]any{"attachment_id": single, "filename": "logo.png"}))
			require.Equal(t, "logo.png", renamed.Name)

			multi := attach(f.owner.Key, part{filename: "a.md", data: []byte("alpha")}, part{filename: "b.pdf", data: textPDF("Beta document")})
			r := f.importFile(t, f.owner.Key, id, map[string]any{"attachment_id": multi})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)
			require.Equal(t, "filename", (*r.Problem(t).Errors)[0].Field)
			r = f.importFile(t, f.owner.Key, id, map[string]any{"attachment_id": multi, "filename": "c.md"})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)
			b := stored(t, f.importFile(t, f.owner.Key, id, map[string]any{"attachment_id": multi, "filename": "b.pdf"}))
			require.True(t, b.TextMirrored)
			sha, _ := b.CommitSha.Get()
			got, err := f.repoFile(t, id, sha, "b.pdf")
			require.NoError(t, err)
			require.Equal(t, textPDF("Beta document"), got)

			// Another account's attachment is unknown to the caller.
			other := f.NewAccount(t, store.TierPro, false, 0)
			theirs := attach(other.Key, part{filename: "secret.md", data: []byte("theirs")})
			r = f.importFile(t, f.owner.Key, id, map[string]any{"attachment_id": theirs})
			require.Equal(t, http.StatusUnprocessableEntity, r.Status)
			require.Equal(t, "attachment_id", (*r.Problem(t).Errors)[0].Field)

			require.Equal(t, 7, f.list(t, f.owner.Key, id).Count)
		})
	}
}

func TestExpertContextFilesAccess(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			f := newFilesEnv(t, d)
			id := f.newExpert(t, f.owner.Key).ExpertId
			editor := f.account(t, "ed@partner.test", false)
			viewer := f.account(t, "vi@partner.test", false)
			stranger := f.account(t, "st@elsewhere.test", false)
			admin := f.account(t, "root@ops.test", true)
			for who, role := range map[string]string{editor.Email: "editor", viewer.Email: "viewer"} {
				r := f.req(t, "POST", "/experts/"+id+"/share", f.owner.Key, map[string]any{"principal_type": "user", "principal": who, "role": role})
				require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			}
			stored(t, f.upload(t, f.owner.Key, id, part{filename: "notes.md", data: []byte("owner's")}))

			file := "/experts/" + id + "/context-files/notes.md"
			for _, tc := range []struct {
				who                     servertest.Account
				read, write, wantDelete int
			}{
				{stranger, http.StatusNotFound, http.StatusNotFound, http.StatusNotFound},
				{viewer, http.StatusOK, http.StatusForbidden, http.StatusForbidden},
				{editor, http.StatusOK, http.StatusCreated, http.StatusOK},
				{admin, http.StatusOK, http.StatusCreated, http.StatusOK},
			} {
				require.Equal(t, tc.read, f.req(t, "GET", "/experts/"+id+"/context-files", tc.who.Key, nil).Status, tc.who.Email)
				require.Equal(t, tc.read, f.req(t, "GET", file, tc.who.Key, nil).Status, tc.who.Email)
				require.Equal(t, tc.write, f.upload(t, tc.who.Key, id, part{filename: "notes.md", data: []byte("by " + tc.who.Email)}).Status, tc.who.Email)
				require.Equal(t, tc.write, f.importFile(t, tc.who.Key, id, map[string]any{"source_url": "http://files.example.test/docs/rubric.md"}).Status, tc.who.Email)
				require.Equal(t, tc.wantDelete, f.req(t, "DELETE", "/experts/"+id+"/context-files/rubric.md", tc.who.Key, nil).Status, tc.who.Email)
			}
			require.Equal(t, []byte("by root@ops.test"), f.req(t, "GET", file, viewer.Key, nil).Body)

			// Built-in experts are read-only; their file list is empty.
			require.Equal(t, 0, f.list(t, stranger.Key, "general-researcher").Count)
			r := f.upload(t, f.owner.Key, "general-researcher", part{filename: "notes.md", data: []byte("x")})
			require.Equal(t, http.StatusForbidden, r.Status)

			// Archived experts stay readable by their editors, and changes are refused.
			require.Equal(t, http.StatusNoContent, f.req(t, "DELETE", "/experts/"+id, f.owner.Key, nil).Status)
			require.Equal(t, http.StatusOK, f.req(t, "GET", file, f.owner.Key, nil).Status)
			r = f.upload(t, f.owner.Key, id, part{filename: "late.md", data: []byte("x")})
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "expert_archived", r.Problem(t).Code)
			r = f.req(t, "DELETE", file, f.owner.Key, nil)
			require.Equal(t, http.StatusConflict, r.Status)
		})
	}
}
