package attachments

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSafeName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"../../etc/passwd.txt", "passwd.txt"},
		{`..\..\Windows\win.ini.txt`, "win.ini.txt"},
		{"/abs/path/data.csv", "data.csv"},
		{"  spaced name.md", "spaced name.md"},
		{"東京 – notes.md", "東京 – notes.md"},
		{".env.txt", ".env.txt"},
		{".gitignore.txt", ".gitignore.txt"},
		{"console.txt", "console.txt"},
		{"com10.csv", "com10.csv"},
		{"lpt.md", "lpt.md"},
		{"nullable.json", "nullable.json"},
		{"my con.txt", "my con.txt"},
		{"a.con", "a.con"},
		{"git~2.txt", "git~2.txt"},
	} {
		got, err := safeName("f", tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
	for _, bad := range []string{
		"", ".", "..", "dir/", "a/..", "\x01\x02", "bad\xffutf8.txt", strings.Repeat("a", 252) + ".txtx",
		// Control characters are refused, not silently dropped.
		"ctl\x00name.txt", "tab\tname.txt", "new\nline.md", "del\x7f.txt", "c1\u0085.txt",
		// Windows device names, any case, with or without extensions, also after a directory.
		"CON", "con.txt", "CON.txt", "aux.md", "Aux.tar.gz", "nul.json", "NUL", "prn.pdf", "com1.csv", "COM9.txt", "com0.txt",
		"lpt1.txt", "LPT9.md", "com¹.txt", "lpt³.md", "conin$.txt", "CONOUT$", "aux .md", "dir/con.txt", `x\nul.json`,
		// Trailing dots or spaces.
		"notes.txt.", "notes.txt ", "notes.txt. ", "notes...", "notes.txt\u00a0",
		// Characters Windows cannot store.
		"a:b.txt", "a<b.txt", "a>b.txt", `a"b.txt`, "a|b.txt", "a?.txt", "a*.txt", "notes.txt:stream",
		// git metadata in disguise.
		".git", ".GIT", "Git~1", ".g\u200cit", "\ufeff.git",
	} {
		_, err := safeName("f", bad)
		require.ErrorIs(t, err, ErrInvalid, "%q", bad)
	}
}

func TestKindOf(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"a.pdf", "a.PDF", "a.docx", "a.pptx", "a.xlsx", "a.png", "a.jpg", "a.JPEG", "a.gif", "a.webp",
		"a.txt", "a.md", "a.csv", "a.tsv", "a.json", "a.jsonl", "a.xml", "a.html", "a.htm", "a.yaml", "a.yml"} {
		_, err := kindOf("f", ok)
		require.NoError(t, err, ok)
	}
	for _, bad := range []string{"a.zip", "a.tar", "a.gz", "a.tar.gz", "a.7z", "a.rar", "a.exe", "a.dll", "a.so", "a.sh",
		"a.bat", "a.msi", "a.apk", "a.jar", "a.doc", "a.svg", "noext", "a.pdf.exe"} {
		_, err := kindOf("f", bad)
		require.ErrorIs(t, err, ErrUnsupportedType, bad)
	}
}

func TestTextCheckAcrossWrites(t *testing.T) {
	t.Parallel()
	valid := []byte(strings.Repeat("aé東€😀\n", 50))
	// Every split point, including inside multi-byte characters.
	for i := 0; i <= len(valid); i++ {
		var tc textCheck
		_, _ = tc.Write(valid[:i])
		_, _ = tc.Write(valid[i:])
		require.Empty(t, tc.result(), "split at %d", i)
	}
	for _, bad := range [][]byte{[]byte("ok\xff"), []byte("a\x00b"), []byte("trunc\xe6\x9d"), []byte("\xc0\xaf")} {
		var tc textCheck
		for _, b := range bad {
			_, _ = tc.Write([]byte{b})
		}
		require.NotEmpty(t, tc.result(), "%q", bad)
	}
}

func TestUniqueName(t *testing.T) {
	t.Parallel()
	used := map[string]bool{}
	var got []string
	for _, n := range []string{"a.pdf", "A.pdf", "a.pdf", "notes", "notes", "a (2).pdf"} {
		got = append(got, uniqueName(n, used))
	}
	require.Equal(t, []string{"a.pdf", "A (2).pdf", "a (3).pdf", "notes", "notes (2)", "a (2) (2).pdf"}, got)
}

func TestCurlCommandQuoting(t *testing.T) {
	t.Parallel()
	cmd := curlCommand("https://r.example.com/api/v2/attachments/uploads/x", "rut-abc", "it's a file.pdf")
	require.Equal(t, `curl -X PUT -H 'X-Upload-Token: rut-abc' -H 'Content-Type: application/octet-stream' --data-binary @'it'\''s a file.pdf' 'https://r.example.com/api/v2/attachments/uploads/x'`, cmd)
	// The shell reads the quoted name back exactly.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	out, err := exec.Command(sh, "-c", "printf %s "+shellQuote("a'b $HOME `x` \"q\"")).Output()
	require.NoError(t, err)
	require.Equal(t, "a'b $HOME `x` \"q\"", string(out))
	require.Equal(t, "plain-name_1.csv", shellWord("plain-name_1.csv"))
}

func TestUnusableErrorAs(t *testing.T) {
	t.Parallel()
	var err error = UnusableError{Index: 2, ID: "x", Reason: "gone"}
	err = errors.Join(errors.New("context"), err)
	require.ErrorIs(t, err, ErrUnusable)
	var v UnusableError
	require.ErrorAs(t, err, &v)
	require.Equal(t, 2, v.Index)
	var p *UnusableError
	require.ErrorAs(t, err, &p)
	require.Equal(t, "x", p.ID)
	require.Contains(t, err.Error(), "attachment_ids/2")
}

func TestOpenBucketFile(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "nested", "blobs")
	b, err := OpenBucket(context.Background(), "file://"+dir)
	require.NoError(t, err)
	defer b.Close()
	require.NoError(t, b.WriteAll(context.Background(), "attachments/a/b", []byte("hi"), nil))
	got, err := os.ReadFile(filepath.Join(dir, "attachments", "a", "b"))
	require.NoError(t, err)
	require.True(t, bytes.Equal([]byte("hi"), got))
	_, err = os.Stat(filepath.Join(dir, "attachments", "a", "b.attrs"))
	require.True(t, os.IsNotExist(err), "no metadata sidecar")
	_, err = OpenBucket(context.Background(), "nope://x")
	require.Error(t, err)
}
