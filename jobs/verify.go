package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/citations"
	"github.com/researchd/researchd/store"
)

// verified is what citation verification settled for a run: the counts for the job detail, and
// the structured output and its basis as they are to be stored.
type verified struct {
	total, verified  int
	structured       map[string]any
	basis            engine.Basis // nil when the engine wrote none
	structuredStored bool         // the run wrote structured_output.json
}

// verify checks the citations of the report the run is about to finalise, for every engine: it
// runs once per run, when the engine records its final answer (or, for an engine that records
// none, at its final checkpoint), and rewrites the workspace files before they are committed. The
// timeline says what was checked and which citations were removed or fields nulled.
func (k *sink) verify(ctx context.Context) (*verified, error) {
	if k.verified != nil {
		return k.verified, nil
	}
	v, err := citations.VerifyWorkspace(k.repo, k.schema)
	if err != nil {
		var ee *engine.Error
		if errors.As(err, &ee) {
			_ = k.record(ctx, engine.Event{Kind: engine.KindStatus, Title: "Structured output unsupported", Content: ee.Message,
				Data: map[string]any{"fields": v.Unsupported}})
		}
		return nil, err
	}
	k.verified = &verified{total: v.Total, verified: v.Verified, structured: v.StructuredOutput, basis: v.Basis,
		structuredStored: v.StructuredOutput != nil}
	k.verifiedReport = v.Report
	if err := k.record(ctx, citationEvent(v)); err != nil {
		return nil, err
	}
	return k.verified, nil
}

// record appends an event of the runner's own (not through the engine) at once, after the
// engine's events still buffered, so the timeline keeps the order of emission.
func (k *sink) record(ctx context.Context, e engine.Event) error {
	if err := k.events.add(ctx, e); err != nil {
		return err
	}
	return k.events.flush(ctx)
}

func citationEvent(v citations.Verification) engine.Event {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d quoted citations were found in their stored sources.", v.Verified, v.Total)
	failed := make([]map[string]any, 0, len(v.Failed))
	for _, f := range v.Failed {
		what := "removed from the report"
		if f.Where != "report" {
			what = "dropped from " + f.Where
		}
		fmt.Fprintf(&b, "\n- Unverified, %s: %q (%s): %s.", what, truncateRunes(f.Quote, 200), f.Source, f.Reason)
		failed = append(failed, map[string]any{"where": f.Where, "source": f.Source, "quote": truncateRunes(f.Quote, 500), "reason": f.Reason})
	}
	for _, field := range v.Unsupported {
		fmt.Fprintf(&b, "\n- Structured output field %q has no verified citation: set to null (or left out), confidence low.", field)
	}
	title := "Citations verified"
	if len(v.Failed) > 0 {
		title = "Unverified citations removed"
	}
	data := map[string]any{"total": v.Total, "verified": v.Verified, "unverified": failed, "unsupported_fields": nonNil(v.Unsupported)}
	return engine.Event{Kind: engine.KindStatus, Title: title, Content: b.String(), Data: data}
}

// record puts what verification settled (counts and basis) into a completed run's result; an
// unverified run clears them.
func (v *verified) record(out *store.JobResult) error {
	if v == nil {
		return nil
	}
	out.CitationsTotal, out.CitationsVerified = &v.total, &v.verified
	if v.basis != nil {
		b, err := json.Marshal(v.basis)
		if err != nil {
			return fmt.Errorf("encode structured output basis: %w", err)
		}
		out.StructuredOutputBasis = ptr(string(b))
	}
	return nil
}

func truncateRunes(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n]) + "…"
}

// Citations is the job's citation count (job detail and webhook citations).
type Citations struct {
	Total    int `json:"total"`
	Verified int `json:"verified"`
}

// withVerification adds what verification settled to a webhook body.
func withVerification(v *verified) func(*WebhookBody) {
	return func(b *WebhookBody) {
		if v == nil {
			return
		}
		b.Citations = &Citations{Total: v.total, Verified: v.verified}
		if v.basis != nil {
			b.StructuredOutputBasis = v.basis
		}
	}
}
