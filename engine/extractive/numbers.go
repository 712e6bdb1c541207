package extractive

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/researchd/researchd/engine/nlp"
)

// normNumber drops thousands separators and a decimal part of zeros, so "1,204" and "1204",
// "£1,450.00" and "1450", "2.50" and "2.5" match.
func normNumber(s string) string {
	if strings.Count(s, ",") > 0 && (!strings.Contains(s, ".") || reThousands.MatchString(s)) {
		s = strings.ReplaceAll(s, ",", "")
	}
	if i := strings.IndexByte(s, '.'); i > 0 && strings.Count(s, ".") == 1 {
		// "300.00" is 300 and "2.50" is 2.5: a question writes "£300" of "£300.00".
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// reThousands is a figure with commas between thousands and a decimal point: "1,450.00".
var reThousands = regexp.MustCompile(`^\d{1,3}(?:,\d{3})+\.\d+$`)

var (
	reMoney   = regexp.MustCompile(`(?i)[$€£¥]\s?\d|\d\s?(?:(?:thousand|million|billion|trillion|bn|m|k)\s)?(?:[$€£¥]|(?:usd|eur|gbp|nok|sek|dkk|chf|jpy)\b|(?:dollars?|euros?|pounds?|kroner|kronor|krona|yen|cents?|francs?)\b)|\b(?:usd|eur|gbp|nok|sek|dkk|chf)\s?\d`)
	rePercent = regexp.MustCompile(`(?i)%|\bper ?cent\b|\bpercent(?:age)?\b|\bhalf\b|\bthirds?\b|\bquarters?\b`)
	reTemp    = regexp.MustCompile(`(?i)°|℃|℉|\bdegrees?\b`)
	reTime    = regexp.MustCompile(`(?i)\b(?:1[5-9]|20)\d\d\b|\b(?:jan(?:uary)?|feb(?:ruary)?|march|april|may|june|july|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tomorrow|yesterday|spring|summer|autumn|winter)\b|\b\d+\.\d+\b|\b\d{1,2}:\d\d\b`)
	rePerson  = regexp.MustCompile(`\b\p{Lu}[\p{Ll}'’-]+(?:\s+\p{Lu}\.)?\s+\p{Lu}[\p{Ll}'’-]+`)
	rePlace   = regexp.MustCompile(`.\b\p{Lu}\p{Ll}+`)
	reDigits  = regexp.MustCompile(`\d`)
	// numberWords let "Eighty-one per cent" or "eleven minutes" count as figures.
	reNumberWord = regexp.MustCompile(`(?i)\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion|dozen|half|double|twice|triple)\b`)
)

// satisfies reports whether text holds a value of the kind asked for.
func (t answerType) satisfies(text string) bool {
	switch t {
	case typeNumber:
		return reDigits.MatchString(text) || reNumberWord.MatchString(text)
	case typeMoney:
		return reMoney.MatchString(text)
	case typePercent:
		return rePercent.MatchString(text) && (reDigits.MatchString(text) || reNumberWord.MatchString(text))
	case typeTemperature:
		return reTemp.MatchString(text) && reDigits.MatchString(text)
	case typeTime:
		return reTime.MatchString(text)
	case typePerson:
		return rePerson.MatchString(text)
	case typePlace, typeOrg:
		return rePlace.MatchString(text)
	}
	return true
}

// numbersIn are the normalised numbers a text states.
func numbersIn(s string) map[string]bool {
	out := map[string]bool{}
	for _, m := range figures(s) {
		out[normNumber(m)] = true
	}
	for _, loc := range wordNumberLocs(s) {
		out[wordNumber(s, loc)] = true // "ten" is also "10"
	}
	return out
}

// wordNumberLocs are the numbers written in words in s ("ten", "twenty-four"), with the hundred or
// thousand after one ("three thousand"), as [start, end) offsets; not the first part of
// a word joined by a hyphen ("twenty" of "twenty-fourth", "one" of "one-off"). A million is
// written "3 million" as often, and is read as 3 either way. A scan, not a regular expression: it
// runs over every sentence of the sources, and the expression cost an eighth of a run.
func wordNumberLocs(s string) [][]int {
	var out [][]int
	for i := 0; i < len(s); {
		j := wordEnd(s, i)
		if j == i {
			i++
			continue
		}
		if numberWord(s[i:j]) && (i == 0 || !isWordByte(s[i-1])) && (j == len(s) || !isWordByte(s[j])) {
			end := j
			k := j
			for k < len(s) && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n') {
				k++
			}
			if e := wordEnd(s, k); k > j && e > k {
				if w := strings.ToLower(s[k:e]); w == "hundred" || w == "thousand" {
					end = e
				}
			}
			out = append(out, []int{i, end})
		}
		i = j
	}
	return out
}

// numberWord: w is a number from zero to ninety-nine in words ("seven", "Forty-two").
func numberWord(w string) bool {
	w = strings.ToLower(w)
	if _, ok := smallNumbers[w]; ok {
		return true
	}
	tens, unit, ok := strings.Cut(w, "-")
	t, u := smallNumbers[tens], smallNumbers[unit]
	return ok && t >= 20 && u >= 1 && u <= 9
}

// wordEnd is the end of the run of letters and hyphens at s[i:] (i when none).
func wordEnd(s string, i int) int {
	j := i
	for j < len(s) && (isLetterByte(s[j]) || (s[j] == '-' && j > i)) {
		j++
	}
	return j
}

func isLetterByte(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

func isWordByte(b byte) bool { return isLetterByte(b) || (b >= '0' && b <= '9') || b == '_' }

// wordNumber is the value, in digits, of a number written in words at loc in s: the number, times
// the hundred or thousand after it.
func wordNumber(s string, loc []int) string {
	words := strings.Fields(s[loc[0]:loc[1]])
	f, _ := parseNumber(words[0])
	switch strings.ToLower(words[len(words)-1]) {
	case "hundred":
		f *= 100
	case "thousand":
		f *= 1000
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// wordNumbers are the numbers the question writes in words that an answer must be about ("kills
// four men", "three thousand"), not one or zero (rarely a count: "one of"), and not the count of
// a list asked for ("what two instruments", "name four", "who were two of"), which sources write
// as the list.
func wordNumbers(q string) []string {
	var out []string
	for _, loc := range wordNumberLocs(q) {
		n := wordNumber(q, loc)
		if n == "0" || n == "1" || countsList(q[:loc[0]]) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// countsList: the words before a number are only a question's opening ("what are the", "which",
// "name"), so the number counts what is asked for.
func countsList(before string) bool {
	for _, w := range nlp.Words(before) {
		if !isWh(w) && !skipWords[w] && w != "name" && w != "list" && w != "give" && w != "me" {
			return false
		}
	}
	return true
}

// figures are the numbers written in digits in s that stand on their own: the "2" of a model name
// such as "K2" or "A320" is part of a name, not a figure.
func figures(s string) []string {
	var out []string
	for _, loc := range reQueryNumber.FindAllStringIndex(s, -1) {
		before, _ := utf8.DecodeLastRuneInString(s[:loc[0]])
		after, _ := utf8.DecodeRuneInString(s[loc[1]:])
		if unicode.IsLetter(before) || unicode.IsLetter(after) {
			continue
		}
		out = append(out, s[loc[0]:loc[1]])
	}
	return out
}

// figuresCounting are the [start, end) offsets of the figures of text (in digits or words, not
// hyphened to a word: "three-season" counts nothing) that count a word for which is holds, within
// reach words after them ("12 commercial farms", "10 keeping-in-touch (KIT) days"; is gets the word
// in lower case). Amounts of money and percentages count nothing ("3.2 per cent of subscribers").
func figuresCounting(text string, reach int, is func(w string) bool) [][]int {
	lower := strings.ToLower(reNotCount.ReplaceAllStringFunc(text, func(m string) string { return strings.Repeat(" ", len(m)) }))
	var out [][]int
	for _, loc := range reCountFigure.FindAllStringIndex(lower, -1) {
		after := strings.Fields(lower[loc[1]:])
		if slices.ContainsFunc(after[:min(reach, len(after))], func(w string) bool { return is(strings.Trim(w, ".,;:()*_")) }) {
			out = append(out, []int{loc[0], loc[1] - 1})
		}
	}
	return out
}

// reCountFigure is a figure, in digits or words, standing alone (not hyphened to a word).
var reCountFigure = regexp.MustCompile(`(?:\b\d[\d,]*|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|hundred|thousand|dozen))\s`)
