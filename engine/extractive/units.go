package extractive

import (
	"regexp"
	"slices"
	"strings"

	"github.com/researchd/researchd/engine/nlp"
)

// A question can ask for a figure in a unit of measurement: "how many litres of water", "how
// many square metres", "how much does it weigh", "how fast". Its answer gives a figure in a unit
// of that dimension — any unit of it ("21 m" answers "how many feet") — which a passage states
// unmistakably; a passage with other figures does not answer it.

// unitWords name each dimension's units as questions write them (full words and common symbols).
var unitWords = map[string]string{
	"length": `metre metres meter meters kilometre kilometres kilometer kilometers km centimetre centimetres
		centimeter centimeters cm millimetre millimetres millimeter millimeters mm mile miles foot feet ft inch
		inches yard yards`,
	"area":   `hectare hectares acre acres km2 m2`,
	"volume": `litre litres liter liters millilitre millilitres milliliter milliliters ml gallon gallons barrel barrels`,
	"mass": `kilogram kilograms kg kilo kilos gram grams tonne tonnes ton tons pound pounds lb lbs ounce
		ounces oz`,
	"energy": `kwh mwh gwh twh joule joules kilojoule kilojoules calorie calories kcal`,
	"power":  `watt watts kw kilowatt kilowatts mw megawatt megawatts gw gigawatt gigawatts horsepower hp`,
	"speed":  `mph kph knot knots`,
}

// dimensionOf is the dimension each unit word measures.
var dimensionOf = func() map[string]string {
	m := map[string]string{}
	for dim, ws := range unitWords {
		for _, w := range strings.Fields(ws) {
			m[w] = dim
		}
	}
	return m
}()

// askedDimension is the dimension a question asks a figure in, or "": the unit after "how many"
// ("square" and "cubic" make a length an area or a volume), a "how heavy"/"how fast" measure, or a weight
// ("how much does it weigh").
func askedDimension(w []string, measure string) string {
	for i := 0; i+2 < len(w); i++ {
		if w[i] != "how" || w[i+1] != "many" {
			continue
		}
		unit, j := w[i+2], i+2
		if (unit == "square" || unit == "cubic") && j+1 < len(w) && dimensionOf[w[j+1]] == "length" {
			return map[string]string{"square": "area", "cubic": "volume"}[unit]
		}
		return dimensionOf[unit]
	}
	for i, x := range w {
		if (x == "weigh" || x == "weighs" || x == "weighed") && i > 0 {
			return "mass"
		}
	}
	// Lengths are left out: "how long", "how high", "how far" ask as often for a time, a rank on a
	// chart or a degree ("how high could the number go").
	if dims := headDimensions[measure]; len(dims) == 1 && dims[0] != "length" {
		return dims[0]
	}
	return ""
}

// dimensionNames say in a report what a figure of each dimension is.
var dimensionNames = map[string]string{"length": "length or distance", "area": "area", "volume": "volume",
	"mass": "weight", "energy": "amount of energy", "power": "power", "speed": "speed"}

// reFigure is a figure before a unit: digits (a symbol may follow at once: "8kg") or a number word.
const reFigure = `(?:\d[\d.,]*\s*|(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|a few|several|half an?|an?)\s+)(?:(?:thousand|million|billion)\s+)?(?:-\s*)?`

// reDimension matches a figure with a unit of each dimension in a passage, symbols included
// ("8 kg", "1.45 kWh", "110,000 cubic metres", "111 kilometres per hour").
var reDimension = func() map[string]*regexp.Regexp {
	units := func(dim string, extra ...string) string {
		return strings.Join(append(strings.Fields(unitWords[dim]), extra...), "|")
	}
	length := units("length", "m", "mi", "yd", "in")
	m := map[string]*regexp.Regexp{}
	for dim, alt := range map[string]string{
		"length": `(?:` + length + `)`,
		"area":   `(?:(?:square|sq\.?)\s+(?:` + length + `)|` + units("area", "ha", "km²", "m²", "sq\\s?km", "sq\\s?mi") + `)`,
		"volume": `(?:cubic\s+(?:` + length + `)|` + units("volume", "l", "m³", "bbl", "gal") + `)`,
		"mass":   `(?:` + units("mass", "g", "t") + `)`,
		"energy": `(?:` + units("energy", "wh", "j", "kj", "mj") + `)`,
		"power":  `(?:` + units("power", "w") + `)`,
		"speed":  `(?:` + units("speed", `km/h`, `km/hr`, `m/s`) + `|(?:` + length + `)\s+(?:per|an|a)\s+(?:hour|second|minute))`,
	} {
		m[dim] = regexp.MustCompile(`(?i)(?:^|[^\p{L}\d])` + reFigure + alt + `(?:[^\p{L}\d]|$)`)
	}
	return m
}()

// headDimensions are the dimensions a measured noun measures, by stem: "top speed" is stated by
// "25 km/h", "capacity" by "8 kilograms"; "how heavy" (weight) asks for a mass; a row labelled
// "Weight" gives one.
var headDimensions = func() map[string][]string {
	m := map[string][]string{}
	for noun, dims := range map[string]string{"speed": "speed", "weight": "mass", "weigh": "mass", "mass": "mass",
		"height": "length", "length": "length", "depth": "length", "width": "length", "distance": "length",
		"area": "area", "surface": "area", "volume": "volume", "energy": "energy", "power": "power",
		"capacity": "volume mass power energy", "consumption": "energy volume", "output": "energy power"} {
		m[nlp.Stem(noun)] = strings.Fields(dims)
	}
	// A unit asked for ("how many meters") is stated by a figure in any unit of its dimension ("feet").
	for w, dim := range dimensionOf {
		if s := nlp.Stem(w); m[s] == nil {
			m[s] = []string{dim}
		}
	}
	return m
}()

// measuredBy: text gives a figure of what the measured noun head (a stem) measures.
func measuredBy(head, text string) bool {
	switch head {
	case nlp.Stem("temperature"):
		return typeTemperature.satisfies(text)
	case nlp.Stem("duration"):
		return reSpan.MatchString(text)
	case nlp.Stem("money"), nlp.Stem("cash"):
		return typeMoney.satisfies(text)
	case stemRate:
		return reRate.MatchString(text) || typePercent.satisfies(text)
	}
	return slices.ContainsFunc(headDimensions[head], func(d string) bool { return givesDimension(text, d) })
}

// labelMeasures: a row's or field's label says its figures are of dimension dim, by a unit or a
// measured noun ("Weight", "Top speed (km/h)").
func labelMeasures(label, dim string) bool {
	for _, w := range nlp.Words(label) {
		if dimensionOf[w] == dim || slices.Contains(headDimensions[nlp.Stem(w)], dim) {
			return true
		}
	}
	return false
}

// givesDimension: text gives a figure in a unit of dimension dim.
func givesDimension(text, dim string) bool {
	re, ok := reDimension[dim]
	return ok && re.MatchString(text)
}

// reRate matches a figure per unit, which is what a rate is: "45p per mile", "£35 a day", "2 litres
// an hour".
var reRate = regexp.MustCompile(`(?i)\d\S*\s+(?:\p{L}+\s+)?(?:per\s+\p{L}+|an?\s+(?:mile|kilometre|km|hour|day|week|month|year|night|person|head|unit|page|minute)s?\b)`)
