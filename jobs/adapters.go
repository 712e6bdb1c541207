package jobs

import (
	"context"
	"errors"

	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/mcptool"
)

// AttachmentsFrom adapts the attachment service to what jobs needs: the files of a job's
// attachment ids, and a refusal made of an *UnusableAttachmentError naming the first id that
// cannot be used.
func AttachmentsFrom(s *attachments.Service) Attachments {
	if s == nil {
		return nil
	}
	return attachmentSource{s}
}

type attachmentSource struct{ s *attachments.Service }

func (a attachmentSource) FilesForJob(ctx context.Context, accountID string, ids []string) ([]InputFile, error) {
	files, err := a.s.FilesForJob(ctx, accountID, ids)
	var ue *attachments.UnusableError
	if errors.As(err, &ue) {
		return nil, unusable(&UnusableAttachmentError{Index: ue.Index, ID: ue.ID, Reason: ue.Reason})
	}
	if err != nil {
		return nil, err
	}
	out := make([]InputFile, len(files))
	for i, f := range files {
		out[i] = InputFile{Name: f.Name, Open: f.Open}
	}
	return out, nil
}

// Tools describes and calls the MCP tools an expert grants (ToolsFrom adapts an mcptool.Registry).
type Tools interface {
	// Granted returns the granted names that are server tools, described for the engine, and the
	// names that cannot be offered now (unknown, or their server is unreachable). Built-in tools
	// (search_files, read_file, ...) are the engine's own and are in neither list.
	Granted(ctx context.Context, names []string) (tools []engine.GrantedTool, unavailable []string)
	engine.ToolCaller
}

// ToolsFrom adapts the MCP tool registry to what runs need.
func ToolsFrom(r *mcptool.Registry) Tools {
	if r == nil {
		return nil
	}
	return toolSource{r}
}

type toolSource struct{ *mcptool.Registry }

func (t toolSource) Granted(ctx context.Context, names []string) ([]engine.GrantedTool, []string) {
	known := t.Lookup(ctx, names)
	var tools []engine.GrantedTool
	var unavailable []string
	for _, n := range names {
		tl, ok := known[n]
		switch {
		case !ok:
			unavailable = append(unavailable, n)
		case tl.Server != mcptool.BuiltinServer:
			tools = append(tools, engine.GrantedTool{Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema})
		}
	}
	return tools, unavailable
}
