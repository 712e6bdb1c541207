package qadata

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/nlp"
)

func TestContainsAnswer(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		text    string
		answers []string
		want    bool
	}{
		"case and punctuation": {"It opened in 1990, in Paris.", []string{"paris"}, true},
		"article dropped":      {"He wrote The Road.", []string{"the road"}, true},
		"word boundary":        {"Code 19901 was used.", []string{"1990"}, false},
		"any answer":           {"Made by Apple Inc.", []string{"Microsoft", "Apple"}, true},
		"none":                 {"Nothing here.", nil, false},
		"empty answer ignored": {"Anything.", []string{"  "}, false},
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, tc.want, ContainsAnswer(tc.text, tc.answers))
		})
	}
}

func TestSplitsAreDisjoint(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	squad := `{"version":"v2.0","data":[` +
		`{"title":"Solar_energy","paragraphs":[{"context":"Sun shines.","qas":[{"id":"a","question":"What shines?","is_impossible":false,"answers":[{"text":"Sun","answer_start":0}]}]}]},` +
		`{"title":"IPod","paragraphs":[{"context":"The iPod plays music.","qas":[{"id":"b","question":"What plays music?","is_impossible":false,"answers":[{"text":"iPod","answer_start":4}]},{"id":"c","question":"What plays video?","is_impossible":true,"answers":[]}]}]},` +
		`{"title":"New_York_City","paragraphs":[{"context":"NYC is big.","qas":[{"id":"d","question":"What is big?","is_impossible":false,"answers":[{"text":"NYC","answer_start":0}]}]}]}]}`
	path := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(path, []byte(squad), 0o600))
	train, err := SQuAD(path, Train, 1, 7)
	require.NoError(t, err)
	dev, err := SQuAD(path, Dev, 1, 7)
	require.NoError(t, err)
	ids := map[string]Split{}
	for _, it := range train {
		ids[it.ID] = Train
		require.NotEqual(t, "Solar_energy.txt", it.Docs[0].Name)
	}
	for _, it := range dev {
		require.NotContains(t, ids, it.ID)
	}
	require.Len(t, dev, 1)     // one article: nothing to swap with
	require.Len(t, train, 3+2) // b, c, d and one swapped item per answerable question
	require.False(t, train[1].Answerable())
	for _, it := range train[3:] {
		require.Equal(t, KindSwapped, it.Kind)
		require.False(t, it.Answerable())
		require.NotEqual(t, it.ID[:1], map[string]string{"IPod.txt": "b", "New_York_City.txt": "d"}[it.Docs[0].Name])
	}
}

// TestAlterAndPool: altered questions differ from their source and have no answer; pooled ones keep
// their article first among others and keep their answers.
func TestAlterAndPool(t *testing.T) {
	t.Parallel()
	a := Doc{Name: "A.txt", Text: "In 1990 Alice Smith founded the oldest bakery in Paris.\n"}
	b := Doc{Name: "B.txt", Text: "Bob Jones sells bread in Lyon.\n"}
	items := []Item{
		{ID: "1", Kind: KindSQuAD, Question: "In which year did Alice Smith found the oldest bakery?", Answers: []string{"1990"}, Docs: []Doc{a}},
		{ID: "2", Kind: KindSQuAD, Question: "Where does Bob Jones sell bread?", Answers: []string{"Lyon"}, Docs: []Doc{b}},
	}
	altered := Alter(items, 1, 3)
	require.NotEmpty(t, altered)
	for _, it := range altered {
		require.Equal(t, KindAltered, it.Kind)
		require.False(t, it.Answerable())
		src := items[0]
		if it.ID == "2-altered" {
			src = items[1]
		}
		require.NotEqual(t, src.Question, it.Question)
	}
	pooled := Pool(items, 1, 1, 3)
	require.Len(t, pooled, 2)
	for i, it := range pooled {
		require.Equal(t, KindPooled, it.Kind)
		require.Equal(t, items[i].Docs[0].Name, it.Docs[0].Name, "its own article first")
		require.Len(t, it.Docs, 2)
		require.Equal(t, items[i].Answers, it.Answers)
	}
}

// TestAlterNegates: over many seeds a question with an auxiliary verb is sometimes negated after
// it, the way SQuAD 2.0's negation questions were written, and never negated twice.
func TestAlterNegates(t *testing.T) {
	t.Parallel()
	a := Doc{Name: "A.txt", Text: "Alice Smith founded the bakery.\n"}
	items := []Item{
		{ID: "1", Kind: KindSQuAD, Question: "Who did found the bakery?", Answers: []string{"Alice Smith"}, Docs: []Doc{a}},
		{ID: "2", Kind: KindSQuAD, Question: "Who did not found the bakery?", Answers: []string{"Alice Smith"}, Docs: []Doc{a}},
	}
	negated := false
	for seed := range uint64(40) {
		for _, it := range Alter(items, 1, seed) {
			require.NotContains(t, it.Question, "not not")
			require.NotEqual(t, "Who did not not found the bakery?", it.Question)
			if it.ID == "1-altered" && it.Question == "Who did not found the bakery?" {
				negated = true
			}
		}
	}
	require.True(t, negated)
}

// TestAlterSimilarWord: a word near the answer is replaced by a word of similar use that is neither
// its synonym nor stated near the answer ("rain" asked as "snow"), the way SQuAD 2.0's writers
// swapped a detail.
func TestAlterSimilarWord(t *testing.T) {
	t.Parallel()
	text := "The fire brigade was on set to simulate rain during the night scenes.\n"
	q, ok := similarWord("What did the fire brigade simulate rain for?", text, []string{"night scenes"}, rand.New(rand.NewPCG(1, 2)))
	require.True(t, ok)
	require.NotEqual(t, "What did the fire brigade simulate rain for?", q)
	changed := strings.Fields(q)
	orig := strings.Fields("What did the fire brigade simulate rain for?")
	require.Len(t, changed, len(orig), "one word replaced by one word")
	for i := range orig {
		if changed[i] != orig[i] {
			require.NotContains(t, text, changed[i], "the new word is not near the answer")
			cos, _ := nlp.Similarity(nlp.Stem(strings.Trim(orig[i], "?")), nlp.Stem(strings.Trim(changed[i], "?")))
			require.GreaterOrEqual(t, cos, similarAtLeast)
		}
	}
	_, ok = similarWord("Who is Qzxv?", "Qzxv is Alice.\n", []string{"Alice"}, rand.New(rand.NewPCG(1, 2)))
	require.False(t, ok, "no word with a vector near the answer: no change")
}
