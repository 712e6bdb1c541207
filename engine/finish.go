package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// finish ends a run the same way for every engine: it writes report.md, structured_output.json (when
// a schema was given) and, at effort build, the static site; records the final answer (answerData
// is its event data); and takes the run's last checkpoint.
func finish(ctx context.Context, em emitter, in Input, report string, structured map[string]any, answerData map[string]any) (Result, error) {
	return finishWith(ctx, em, in, report, structured, answerData, siteInput{})
}

// finishWith is finish with what the build site shows besides the report (the sources read and
// the tables found); an empty siteInput derives both from the report.
func finishWith(ctx context.Context, em emitter, in Input, report string, structured map[string]any, answerData map[string]any, site siteInput) (Result, error) {
	files := map[string][]byte{ReportPath: []byte(report)}
	if structured != nil {
		b, err := json.MarshalIndent(structured, "", "  ")
		if err != nil {
			return Result{}, fmt.Errorf("engine: encode structured output: %w", err)
		}
		files[StructuredOutputPath] = append(b, '\n')
	}
	if depths[in.Effort].Site {
		pages, err := renderSite(reportTitle(in.Question), report, site)
		if err != nil {
			return Result{}, err
		}
		maps.Copy(files, pages)
		if err := em.event(ctx, KindStatus, "Site written", SiteDir+"/index.html", map[string]any{"path": SiteDir + "/index.html"}); err != nil {
			return Result{}, err
		}
	}
	// Path order, so commits are deterministic.
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if err := in.Workspace.WriteFile(p, files[p]); err != nil {
			return Result{}, fmt.Errorf("engine: write %s: %w", p, err)
		}
	}
	if err := em.event(ctx, KindFinalAnswer, "Report", report, answerData); err != nil {
		return Result{}, err
	}
	msg := "Final report"
	if in.Continuation {
		msg = "Continuation report"
	}
	if _, err := em.checkpoint(ctx, msg, in.finalType()); err != nil {
		return Result{}, err
	}
	return Result{Report: report, StructuredOutput: structured}, nil
}

func reportTitle(q string) string {
	t := truncate(collapse(q), 200)
	if t == "" {
		return "Research report"
	}
	return t
}
