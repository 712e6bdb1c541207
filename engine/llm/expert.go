package llm

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/researchd/researchd/engine"
)

// TokenPrices are what the provider charges, in US dollars per million tokens; they turn token
// usage into the estimated cost a run's MaxCostUSD is checked against.
type TokenPrices struct {
	InputPerMTok, OutputPerMTok float64
}

// cost is the estimated price of prompt and completion tokens.
func (p TokenPrices) cost(prompt, completion int64) float64 {
	return (float64(prompt)*p.InputPerMTok + float64(completion)*p.OutputPerMTok) / 1e6
}

// expertInstructions is the expert's part of a system message: its prompt and its skills' full
// instructions; "" without either.
func expertInstructions(in engine.Input) string {
	var b strings.Builder
	if p := strings.TrimSpace(in.SystemPrompt); p != "" {
		name := "the expert"
		if in.Expert != nil && in.Expert.Name != "" {
			name = in.Expert.Name
		}
		fmt.Fprintf(&b, "You are running as %s. The expert's instructions:\n\n%s\n\n", name, p)
	}
	if len(in.Skills) > 0 {
		b.WriteString("Skills linked to this expert. Follow a skill's instructions whenever the task calls for it:\n\n")
		for _, s := range in.Skills {
			fmt.Fprintf(&b, "=== Skill: %s ===\n%s\n=== End of skill %s ===\n\n", s.Name, strings.TrimSpace(s.Content), s.Name)
		}
	}
	if b.Len() > 0 {
		b.WriteString("Whatever the instructions above say, the research rules below apply.\n\n")
	}
	return b.String()
}

// ParseTokenPrices reads "input=0.15,output=0.60" (US dollars per million tokens); "" is nil (no
// prices: spend is not estimated).
func ParseTokenPrices(s string) (*TokenPrices, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var p TokenPrices
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		k = strings.TrimSpace(k)
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if !ok || err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%q: want input=<usd>,output=<usd> per million tokens", s)
		}
		switch k {
		case "input":
			p.InputPerMTok = f
		case "output":
			p.OutputPerMTok = f
		default:
			return nil, fmt.Errorf("%q: unknown price %q (want input and output)", s, k)
		}
		seen[k] = true
	}
	if !seen["input"] || !seen["output"] {
		return nil, fmt.Errorf("%q: both input and output prices are required", s)
	}
	return &p, nil
}
