package extractive

import (
	"strings"

	"github.com/researchd/researchd/engine/nlp"
)

// Small, general word families that let a question match the way sources phrase the same thing:
// directions of change ("got longer" / "grew"), people ("how many people" / "participants"),
// frequency ("most common" / "most frequently"), and what a measure is stated in ("capacity" /
// "45 megawatt"). No domain vocabulary: these hold for any subject.

// synonymFamilies: a question word of a family is found by any word of it, at full weight.
var synonymFamilies = [][]string{
	strings.Fields(`increase increased increasing rise rose risen rising grow grew grown growing growth up higher
		more longer larger bigger gain gained climb climbed raise raised expand expanded upward`),
	strings.Fields(`decrease decreased decreasing fall fell fallen falling decline declined declining drop dropped
		down lower less fewer shorter smaller shrink shrank reduce reduced cut downward`),
	strings.Fields(`unchanged stable steady flat constant maintained same`),
	strings.Fields(`people persons person individuals participants participant residents inhabitants employees
		staff workers patients students pupils volunteers members users customers visitors passengers
		subscribers attendees respondents adults children`),
	strings.Fields(`common frequent frequently often usual usually typical typically widespread prevalent`),
	strings.Fields(`price prices cost costs fee fees fare fares`),
	strings.Fields(`weigh weighs weighed weighing weight weights`),
	strings.Fields(`revenue revenues sales turnover`),
	strings.Fields(`profit profits earnings income`),
}

// measureUnits: a measure noun of a question is also found, at half weight, by the units its
// values are stated in ("what capacity" / "45 megawatt").
var measureUnits = map[string]string{
	"capacity":    `watt watts kw kilowatt kilowatts mw megawatt megawatts gw gigawatt gigawatts kwh mwh gwh tonnes litres seats beds passengers`,
	"power":       `watt watts kw kilowatt kilowatts mw megawatt megawatts gw gigawatt gigawatts horsepower hp`,
	"output":      `kwh mwh gwh twh watt watts kw mw gw megawatt megawatts tonnes barrels units`,
	"depth":       `deep km kilometres kilometers metres meters feet miles`,
	"height":      `high tall km metres meters feet`,
	"length":      `long km kilometres kilometers metres meters miles feet`,
	"distance":    `far km kilometres kilometers metres meters miles`,
	"width":       `wide km metres meters feet`,
	"weight":      `heavy kg kilograms tonnes tons pounds grams`,
	"size":        `large big hectares acres km metres square`,
	"area":        `hectares acres square km2`,
	"duration":    `long minutes hours days weeks months years`,
	"age":         `old aged years`,
	"speed":       `fast km/h mph knots`,
	"population":  `residents inhabitants people`,
	"temperature": `°c °f degrees`,
	"energy":      unitWords["energy"],
	"electricity": unitWords["energy"],
}

// phrasalVerbs are read as the one word they mean ("took part" is "participated").
var phrasalVerbs = map[[2]string]string{
	{"take", "part"}: "participate", {"took", "part"}: "participate", {"taking", "part"}: "participate",
	{"takes", "part"}: "participate", {"set", "up"}: "establish", {"carry", "out"}: "conduct",
	{"carried", "out"}: "conduct", {"put", "off"}: "postpone", {"turn", "down"}: "reject",
	{"turned", "down"}: "reject", {"called", "off"}: "cancel", {"call", "off"}: "cancel",
}

// auxiliaries after "how long" make it ask for a duration ("how long does it last").
var auxiliaries = map[string]bool{"do": true, "does": true, "did": true, "will": true, "would": true, "can": true,
	"could": true, "should": true, "has": true, "have": true, "had": true, "may": true, "might": true}

// howMeasures: "how deep" asks for a depth.
var howMeasures = map[string]string{
	"deep": "depth", "long": "length", "high": "height", "tall": "height", "far": "distance",
	"wide": "width", "heavy": "weight", "large": "size", "big": "size", "old": "age", "fast": "speed",
}

var (
	synonymOf = func() map[string][]string {
		m := map[string][]string{}
		for _, fam := range synonymFamilies {
			var stems []string
			for _, w := range fam {
				stems = append(stems, nlp.Stem(w))
			}
			stems = nlp.Uniq(stems)
			for _, s := range stems {
				m[s] = nlp.Uniq(append(m[s], stems...))
			}
		}
		return m
	}()
	unitsOf = func() map[string][]string {
		m := map[string][]string{}
		for noun, units := range measureUnits {
			var stems []string
			for _, w := range strings.Fields(units) {
				stems = append(stems, nlp.Stem(w))
			}
			m[nlp.Stem(noun)] = nlp.Uniq(stems)
		}
		return m
	}()
)

// wordStems are the stems of every word of s, stopwords included ("up", "down" carry meaning in a
// family).
func wordStems(s string) []string { return wordStemsBy(s, nlp.Stem) }

func wordStemsBy(s string, stem func(string) string) []string {
	ws := nlp.Words(s)
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, stem(w))
	}
	return out
}
