// Package output writes what every engine ends a run with: report.md, structured_output.json, at
// effort build the static site (site.go, with charts of the numeric tables found: chart.go), the
// final answer and the last checkpoint.
package output

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/nlp"
)

// Finish ends a run the same way for every engine: it writes report.md, structured_output.json (when
// a schema was given) and, at effort build, the static site; records the final answer (answerData
// is its event data); and takes the run's last checkpoint. site is what the build site shows
// besides the report (the sources read and the tables found); an empty Site derives both
// from the report.
func Finish(ctx context.Context, em engine.Emitter, in engine.Input, report string, structured map[string]any, answerData map[string]any, site Site) (engine.Result, error) {
	files := map[string][]byte{engine.ReportPath: []byte(report)}
	if structured != nil {
		b, err := json.MarshalIndent(structured, "", "  ")
		if err != nil {
			return engine.Result{}, fmt.Errorf("engine: encode structured output: %w", err)
		}
		files[engine.StructuredOutputPath] = append(b, '\n')
	}
	if in.Effort == engine.EffortBuild {
		pages, err := renderSite(Title(in.Question), report, site)
		if err != nil {
			return engine.Result{}, err
		}
		maps.Copy(files, pages)
		if err := em.Event(ctx, engine.KindStatus, "Site written", engine.SiteDir+"/index.html", map[string]any{"path": engine.SiteDir + "/index.html"}); err != nil {
			return engine.Result{}, err
		}
	}
	// Path order, so commits are deterministic.
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if err := in.Workspace.WriteFile(p, files[p]); err != nil {
			return engine.Result{}, fmt.Errorf("engine: write %s: %w", p, err)
		}
	}
	if err := em.Event(ctx, engine.KindFinalAnswer, "Report", report, answerData); err != nil {
		return engine.Result{}, err
	}
	msg := "Final report"
	if in.Continuation {
		msg = "Continuation report"
	}
	if _, err := em.Checkpoint(ctx, msg, in.FinalType()); err != nil {
		return engine.Result{}, err
	}
	return engine.Result{Report: report, StructuredOutput: structured}, nil
}

// Title is a report's title: its question, shortened.
func Title(q string) string {
	t := nlp.Truncate(nlp.Collapse(q), 200)
	if t == "" {
		return "Research report"
	}
	return t
}
