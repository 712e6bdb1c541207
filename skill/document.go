// Package skill holds SKILL.md skills (the Agent Skills format, https://agentskills.io/specification):
// the catalogue shipped in the binary and the skills each account authors, stored in the database.
// A skill's category is kept in its front matter as metadata.category (a column too, for own skills).
package skill

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits of the Agent Skills format and of this service.
const (
	MaxNameLen          = 64
	MaxDescriptionLen   = 1024
	MaxCompatibilityLen = 500
	MaxCategoryLen      = 100
	MaxContentLen       = 200_000
	// DefaultCategory is the category of an own skill that names none.
	DefaultCategory = "custom"
	// CategoryKey is the metadata key that carries a skill's category.
	CategoryKey = "category"
)

var namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// FieldError names one thing wrong with a SKILL.md.
type FieldError struct{ Field, Message string }

// InvalidError is a SKILL.md that does not follow the format; Fields says what is wrong.
type InvalidError struct{ Fields []FieldError }

func (e *InvalidError) Error() string {
	parts := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		parts[i] = f.Field + ": " + f.Message
	}
	return "invalid SKILL.md: " + strings.Join(parts, "; ")
}

// Document is a parsed SKILL.md.
type Document struct {
	Name          string
	Description   string
	License       string
	Compatibility string
	AllowedTools  []string
	Metadata      map[string]string
	Body          string // the Markdown after the front matter
}

// Category is metadata.category, or "" when the document names none.
func (d Document) Category() string { return d.Metadata[CategoryKey] }

// CheckName reports what is wrong with a skill name under the Agent Skills rules, or "" when it is valid.
func CheckName(name string) string {
	switch {
	case name == "":
		return "is required"
	case len(name) > MaxNameLen:
		return fmt.Sprintf("must be at most %d characters", MaxNameLen)
	case !namePattern.MatchString(name):
		return "must be lowercase letters, digits and single hyphens, not starting or ending with a hyphen"
	}
	return ""
}

var knownKeys = map[string]bool{"name": true, "description": true, "license": true, "compatibility": true, "allowed-tools": true, "metadata": true}

// Parse reads a SKILL.md: an optional YAML front matter between "---" lines, then the Markdown body.
// It checks the types of the front-matter fields and refuses unknown ones, but not that name and
// description are present: Validate does, once the caller has merged in its own values.
func Parse(content string) (Document, error) {
	var d Document
	if !utf8.ValidString(content) {
		return d, &InvalidError{Fields: []FieldError{{"content", "is not UTF-8 text"}}}
	}
	content = strings.TrimPrefix(strings.ReplaceAll(content, "\r\n", "\n"), "\uFEFF")
	head, body, has, err := split(content)
	if err != nil {
		return d, err
	}
	d.Body = strings.TrimLeft(body, "\n")
	if !has {
		return d, nil
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(head), &root); err != nil {
		return d, &InvalidError{Fields: []FieldError{{"front_matter", "is not valid YAML: " + yamlMessage(err)}}}
	}
	if len(root.Content) == 0 { // an empty front matter
		return d, nil
	}
	top := root.Content[0]
	if top.Kind != yaml.MappingNode {
		return d, &InvalidError{Fields: []FieldError{{"front_matter", "must be a YAML mapping of fields"}}}
	}
	// Fields are read from the YAML nodes so types stay honest: a number where a string belongs is
	// refused, not silently converted.
	var bad []FieldError
	fields := map[string]*yaml.Node{}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k := top.Content[i].Value
		if !knownKeys[k] {
			bad = append(bad, FieldError{"front_matter." + k, "is not a SKILL.md field (name, description, license, compatibility, allowed-tools, metadata)"})
			continue
		}
		fields[k] = top.Content[i+1]
	}
	str := func(n *yaml.Node, field string) string {
		if n == nil {
			return ""
		}
		if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
			bad = append(bad, FieldError{"front_matter." + field, "must be a string"})
			return ""
		}
		return n.Value
	}
	d.Name = str(fields["name"], "name")
	d.Description = str(fields["description"], "description")
	d.License = str(fields["license"], "license")
	d.Compatibility = str(fields["compatibility"], "compatibility")
	if n := fields["allowed-tools"]; n != nil {
		switch {
		case n.Kind == yaml.ScalarNode && n.Tag == "!!str":
			d.AllowedTools = strings.Fields(n.Value) // the format's space-delimited list
		case n.Kind == yaml.SequenceNode:
			for _, item := range n.Content {
				if item.Kind != yaml.ScalarNode || item.Tag != "!!str" || strings.TrimSpace(item.Value) == "" {
					bad = append(bad, FieldError{"front_matter.allowed-tools", "must list tool names as strings"})
					break
				}
				d.AllowedTools = append(d.AllowedTools, strings.TrimSpace(item.Value))
			}
		default:
			bad = append(bad, FieldError{"front_matter.allowed-tools", "must be a space-delimited string of tool names"})
		}
	}
	if n := fields["metadata"]; n != nil {
		if n.Kind != yaml.MappingNode {
			bad = append(bad, FieldError{"front_matter.metadata", "must be a mapping of string keys to string values"})
		} else {
			d.Metadata = map[string]string{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
					bad = append(bad, FieldError{"front_matter.metadata." + k.Value, "must be a string"})
					continue
				}
				d.Metadata[k.Value] = v.Value
			}
		}
	}
	if len(bad) > 0 {
		return Document{}, &InvalidError{Fields: bad}
	}
	return d, nil
}

// split cuts a SKILL.md into its front matter and body. A document that does not start with a
// "---" line has no front matter; one that opens it and never closes it is invalid.
func split(content string) (head, body string, has bool, err error) {
	first, rest, _ := strings.Cut(content, "\n")
	if strings.TrimRight(first, " \t") != "---" {
		return "", content, false, nil
	}
	for off := 0; off <= len(rest); {
		line, after, found := strings.Cut(rest[off:], "\n")
		if strings.TrimRight(line, " \t") == "---" {
			return rest[:off], after, true, nil
		}
		if !found {
			break
		}
		off += len(line) + 1
	}
	return "", "", false, &InvalidError{Fields: []FieldError{{"front_matter", `is opened with "---" but never closed`}}}
}

func yamlMessage(err error) string {
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// Validate checks a document against the Agent Skills rules and this service's limits.
func (d Document) Validate() error {
	var bad []FieldError
	if msg := CheckName(d.Name); msg != "" {
		bad = append(bad, FieldError{"name", msg})
	}
	switch n := utf8.RuneCountInString(d.Description); {
	case strings.TrimSpace(d.Description) == "":
		bad = append(bad, FieldError{"description", "is required"})
	case n > MaxDescriptionLen:
		bad = append(bad, FieldError{"description", fmt.Sprintf("must be at most %d characters", MaxDescriptionLen)})
	}
	if n := utf8.RuneCountInString(d.Compatibility); n > MaxCompatibilityLen {
		bad = append(bad, FieldError{"front_matter.compatibility", fmt.Sprintf("must be at most %d characters", MaxCompatibilityLen)})
	}
	if c, ok := d.Metadata[CategoryKey]; ok && (strings.TrimSpace(c) == "" || utf8.RuneCountInString(c) > MaxCategoryLen) {
		bad = append(bad, FieldError{"category", fmt.Sprintf("must be 1-%d characters", MaxCategoryLen)})
	}
	if strings.TrimSpace(d.Body) == "" {
		bad = append(bad, FieldError{"content", "has no instructions after the front matter"})
	}
	if len(bad) > 0 {
		return &InvalidError{Fields: bad}
	}
	return nil
}

// Render writes the document as a SKILL.md with its front matter in the format's field order.
func (d Document) Render() (string, error) {
	type out struct {
		Name          string            `yaml:"name"`
		Description   string            `yaml:"description"`
		License       string            `yaml:"license,omitempty"`
		Compatibility string            `yaml:"compatibility,omitempty"`
		AllowedTools  string            `yaml:"allowed-tools,omitempty"`
		Metadata      map[string]string `yaml:"metadata,omitempty"`
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	err := enc.Encode(out{d.Name, d.Description, d.License, d.Compatibility, strings.Join(d.AllowedTools, " "), d.Metadata})
	if err != nil {
		return "", fmt.Errorf("render SKILL.md front matter: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("render SKILL.md front matter: %w", err)
	}
	return "---\n" + buf.String() + "---\n\n" + strings.TrimRight(d.Body, "\n") + "\n", nil
}

// ErrNotFound: no skill of that name for the caller (another account's skill is not found either).
var ErrNotFound = errors.New("skill not found")

// ErrNameTaken: the name belongs to a catalogue skill.
var ErrNameTaken = errors.New("skill name taken by the catalogue")
