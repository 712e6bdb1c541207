package extractive

import (
	"slices"
	"strings"

	"github.com/researchd/researchd/engine/nlp"
)

// entityNouns name the kind of entity a "which/what" question asks for.
var entityNouns = func() map[string]answerType {
	m := map[string]answerType{}
	for kind, ws := range map[answerType]string{
		typePerson: `person man woman actor actress author writer singer player president king queen leader
			founder director composer artist scientist musician wife husband son daughter father mother poet
			painter architect inventor politician minister emperor ruler coach captain`,
		typePlace: `city country state town place region continent island river mountain location province
			county nation capital village area district street building venue`,
		typeOrg: `company organization organisation team band group university school party club firm network
			label newspaper magazine agency studio publisher manufacturer brand airline`,
	} {
		for _, w := range strings.Fields(ws) {
			m[w] = kind
		}
	}
	return m
}()

// shapeOf reads the shape of answer a question wants from its lower-case words.
func shapeOf(w []string) questionShape {
	has := func(xs ...string) bool {
		for _, x := range w {
			if slices.Contains(xs, x) {
				return true
			}
		}
		return false
	}
	wh := slices.IndexFunc(w, isWh)
	first := ""
	if len(w) > 0 {
		first = w[0]
	}
	switch {
	case has("compare", "comparison", "versus", "vs", "differ", "differs", "difference", "differences"):
		return shapeCompare
	case has("why", "reason", "reasons") || (wh >= 0 && w[wh] == "what" && has("cause", "causes", "caused", "led")):
		return shapeReason
	case has("brief", "overview", "summarize", "summarise", "summary", "background", "gist", "outline", "rundown") ||
		slices.ContainsFunc(w[:max(len(w)-1, 0)], func(x string) bool { return x == "sum" }) && slices.Contains(w, "up") ||
		slices.ContainsFunc(catchUps, func(p []string) bool { return hasRun(w, p) }) ||
		(wh < 0 && (first == "describe" || first == "explain" || first == "tell")):
		return shapeBrief
	case first == "list" || first == "name" || has("main", "key", "major", "examples", "types", "kinds", "ways"):
		return shapeList
	case wh >= 0 && w[wh] == "what" && needsTo(w[wh+1:]):
		return shapeList // "what do I need to bring", "what does a tenant have to do": the things needed
	case wh >= 0 && w[wh] == "what" && wh+2 < len(w) && (copulas[w[wh+1]] || w[wh+1] == "has") && (w[wh+2] == "new" || w[wh+2] == "changed"):
		return shapeList // "what is new in 3.2", "what has changed": the changes a release lists
	case wh >= 0 && (w[wh] == "what" || w[wh] == "which") && asksPlural(w[wh+1:]):
		return shapeList
	case first == "define" || has("meaning", "definition") ||
		(wh >= 0 && w[wh] == "what" && wh+1 < len(w) && (w[wh+1] == "is" || w[wh+1] == "are") && len(w)-wh <= 5):
		return shapeDefinition
	}
	return shapeFactoid
}

// withoutNames are the lower-case words of a question less its names: "Roasters" of "Brackenfold
// Coffee Roasters' sales" is no plural asking for a list.
func withoutNames(toks, lower []string) []string {
	out := make([]string, 0, len(lower))
	for i, w := range lower {
		if i == 0 || !isName(toks[i]) {
			out = append(out, w)
		}
	}
	return out
}

// asksPlural: the noun a "what"/"which" question asks about is plural ("what effects does ...",
// "what are the most common mistakes"): it asks for several things. The noun is the first word
// after the linking words and up to two modifiers that looks plural.
func asksPlural(w []string) bool {
	content := 0
	for _, x := range w {
		switch {
		case (x == "are" || x == "were") && content > 0:
			return true // "which staff are leaving": the verb says the noun is plural
		case skipWords[x] || extremeHigh[x] || extremeLow[x]:
			if content > 0 {
				return false
			}
			continue
		case (x == "and" || x == "or") && content > 0:
			continue // "what uniform and PE reminders"
		case nlp.IsStopword(x) || nlp.IsQuestionWord(x):
			return false
		case looksPlural(x) && measureHeads[strings.TrimSuffix(x, "s")] == typeAny, massNouns[x]:
			return true // "what were the group's sales" asks for an amount, not things; "what equipment" for several
		}
		if content++; content > 2 {
			return false
		}
	}
	return false
}

// massNouns name several things in the singular: "what personal protective equipment is required".
var massNouns = map[string]bool{"equipment": true, "gear": true, "kit": true, "clothing": true, "paperwork": true,
	"documentation": true, "facilities": true, "luggage": true, "baggage": true, "furniture": true, "supplies": true}

func looksPlural(w string) bool {
	return len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") &&
		!strings.HasSuffix(w, "is") && !strings.HasSuffix(w, "'s") && !strings.HasSuffix(w, "’s")
}
