package llm

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/researchd/researchd/engine/nlp"
)

// Fitting the research conversation into the model's context window. Nothing read is lost by
// it: every source stays stored, and the report is written from all of them (evidence.go); only
// what the agent is shown of its earlier steps gets shorter.

// shortResultChars is how much of an older tool result is kept when the window is tight.
const shortResultChars = 320

// shortResult is the short form of a tool result ("" when it is short already).
func shortResult(out string) string {
	if utf8.RuneCountInString(out) <= 2*shortResultChars {
		return ""
	}
	return nlp.Truncate(out, shortResultChars) + "\n[shortened to fit the model's context: the full text is stored, and is given again when the report is written]"
}

// cutText cuts s to about n characters, saying so.
func cutText(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return nlp.Truncate(s, max(n, 1)) + "\n[cut to fit the model's context]"
}

// fitMessages fits a research conversation (system, user, then steps: an assistant message and
// its results) into budget tokens: older results to their short form, oldest first; then the
// oldest steps left out whole (a step's call and results together, so the protocol stays
// valid); then the latest results cut; then the system and user messages cut. It fails with
// errContextTooSmall when even that does not fit.
func fitMessages(msgs []chatMsg, budget int) ([]chatMsg, error) {
	out := slices.Clone(msgs)
	fits := func() bool { return estimateMsgs(out) <= budget }
	if fits() {
		return out, nil
	}
	last := lastAssistant(out)
	for i := 0; i < last && !fits(); i++ {
		if out[i].Short != "" {
			out[i].Content, out[i].Short = out[i].Short, ""
		}
	}
	dropped := 0
	for !fits() {
		i := slices.IndexFunc(out, func(m chatMsg) bool { return m.Role == "assistant" })
		if i < 0 || i >= lastAssistant(out) {
			break
		}
		j := i + 1
		for j < len(out) && out[j].Role != "assistant" {
			j++
		}
		out = slices.Delete(out, i, j)
		dropped++
	}
	if dropped > 0 && len(out) > 1 {
		out[1].Content += fmt.Sprintf("\n(%d earlier research step(s) are left out to fit the model's context; the sources they read stay stored and are given to you when the report is written.)\n", dropped)
	}
	for !fits() {
		k, longest := -1, 0
		for i := lastAssistant(out) + 1; i < len(out); i++ {
			if n := len(out[i].Content); n > longest {
				k, longest = i, n
			}
		}
		if k < 0 || longest <= 2*shortResultChars {
			break
		}
		over := (estimateMsgs(out)-budget)*3 + 200
		out[k].Content = cutText(out[k].Content, max(shortResultChars, longest-over))
	}
	for _, i := range []int{0, 1} {
		if fits() || i >= len(out) {
			break
		}
		if n := len(out[i].Content); n > 1500 {
			out[i].Content = cutText(out[i].Content, max(1200, n-(estimateMsgs(out)-budget)*3-200))
		}
	}
	if !fits() {
		return nil, errContextTooSmall
	}
	return out, nil
}

// lastAssistant is the index of the latest assistant message, or len(msgs) without one.
func lastAssistant(msgs []chatMsg) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "assistant" {
			return i
		}
	}
	return len(msgs)
}
