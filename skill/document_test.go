package skill_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/skill"
)

func TestCheckName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"a", true},
		{"pdf-processing", true},
		{"v2-data-1", true},
		{strings.Repeat("a", 64), true},
		{"", false},
		{strings.Repeat("a", 65), false},
		{"PDF", false},
		{"-lead", false},
		{"trail-", false},
		{"double--hyphen", false},
		{"under_score", false},
		{"dot.name", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.ok, skill.CheckName(tc.name) == "", skill.CheckName(tc.name))
		})
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		content string
		want    skill.Document
		field   string // the field an invalid document is refused for; "" when valid
	}{
		{name: "no front matter", content: "# Digest\n\nGroup by theme.", want: skill.Document{Body: "# Digest\n\nGroup by theme."}},
		{
			name: "every field",
			content: "---\nname: sec-filings\ndescription: Read SEC filings.\nlicense: MIT\ncompatibility: needs web access\n" +
				"allowed-tools: fetch_url  read_file\nmetadata:\n  category: finance\n  author: ops\n---\n\n# SEC\n",
			want: skill.Document{Name: "sec-filings", Description: "Read SEC filings.", License: "MIT", Compatibility: "needs web access",
				AllowedTools: []string{"fetch_url", "read_file"}, Metadata: map[string]string{"category": "finance", "author": "ops"}, Body: "# SEC\n"},
		},
		{name: "allowed-tools as a list", content: "---\nallowed-tools: [a, b]\n---\nbody", want: skill.Document{AllowedTools: []string{"a", "b"}, Body: "body"}},
		{name: "CRLF and BOM", content: "\uFEFF---\r\nname: x\r\n---\r\nbody\r\n", want: skill.Document{Name: "x", Body: "body\n"}},
		{name: "empty front matter", content: "---\n---\nbody", want: skill.Document{Body: "body"}},
		{name: "unclosed", content: "---\nname: x\nbody", field: "front_matter"},
		{name: "bad yaml", content: "---\nname: [x\n---\nbody", field: "front_matter"},
		{name: "not a mapping", content: "---\n- a\n---\nbody", field: "front_matter"},
		{name: "unknown field", content: "---\nname: x\ntriggers: y\n---\nbody", field: "front_matter.triggers"},
		{name: "name not a string", content: "---\nname: 12\n---\nbody", field: "front_matter.name"},
		{name: "metadata value not a string", content: "---\nmetadata:\n  version: 1.0\n---\nbody", field: "front_matter.metadata.version"},
		{name: "metadata not a mapping", content: "---\nmetadata: x\n---\nbody", field: "front_matter.metadata"},
		{name: "allowed-tools a number", content: "---\nallowed-tools: 3\n---\nbody", field: "front_matter.allowed-tools"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := skill.Parse(tc.content)
			if tc.field == "" {
				require.NoError(t, err)
				require.Equal(t, tc.want, got)
				return
			}
			fields, ok := skill.IsInvalid(err)
			require.True(t, ok, "want an invalid-document error, got %v", err)
			require.Equal(t, tc.field, fields[0].Field)
		})
	}
}

func TestValidateAndRender(t *testing.T) {
	t.Parallel()
	d := skill.Document{Name: "weekly-digest", Description: "Format findings: as a weekly digest.", AllowedTools: []string{"read_file"},
		Metadata: map[string]string{"category": "writing"}, Body: "# Digest\n\nGroup findings by theme.\n"}
	require.NoError(t, d.Validate())
	out, err := d.Render()
	require.NoError(t, err)
	again, err := skill.Parse(out)
	require.NoError(t, err)
	require.Equal(t, d, again, out)

	for _, tc := range []struct {
		field string
		edit  func(*skill.Document)
	}{
		{"name", func(d *skill.Document) { d.Name = "Bad Name" }},
		{"description", func(d *skill.Document) { d.Description = " " }},
		{"description", func(d *skill.Document) { d.Description = strings.Repeat("x", 1025) }},
		{"front_matter.compatibility", func(d *skill.Document) { d.Compatibility = strings.Repeat("x", 501) }},
		{"category", func(d *skill.Document) { d.Metadata = map[string]string{"category": strings.Repeat("c", 101)} }},
		{"content", func(d *skill.Document) { d.Body = "\n\n" }},
	} {
		bad := d
		tc.edit(&bad)
		fields, ok := skill.IsInvalid(bad.Validate())
		require.True(t, ok, tc.field)
		require.Equal(t, tc.field, fields[0].Field)
	}
}
