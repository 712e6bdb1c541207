package extractive

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extract"
)

func TestChronologyQuestion(t *testing.T) {
	for _, tt := range []struct {
		q     string
		order int
		alts  []string
	}{
		{"Who is the oldest, Sid Haig or Vic Darchinyan?", -1, []string{" Sid Haig", "Vic Darchinyan"}},
		{"Which band was formed first The Exies or Circus Diablo ?", -1, []string{"The Exies", "Circus Diablo"}},
		{"Which came first the forming of The Dandy Warhols or the birth of Robert Young?", -1, []string{"the forming of The Dandy Warhols", "the birth of Robert Young"}},
		{"Which of the two is younger, Anna Smith or Bo Lee?", 1, []string{" Anna Smith", "Bo Lee"}},
		{"Who was the first person to climb Everest?", 0, nil},
		{"Is the museum older than the church?", 0, nil},
	} {
		order, alts := chronologyQuestion(tt.q)
		require.Equal(t, tt.order, order, tt.q)
		require.Equal(t, tt.alts, alts, tt.q)
	}
}

// Which of two named things came first is decided by the first year each one's own document
// gives; the one asked for leads and the other follows.
func TestChronologyAnswer(t *testing.T) {
	docs := map[string]string{
		"Sid Haig.txt":       "Sid Haig (born Dennis Lee Ray; July 14, 1939) is an American actor. He appeared in many films.",
		"Vic Darchinyan.txt": "Vic Darchinyan (born 7 January 1976) is an Armenian-Australian boxer. He won a world title in 2004.",
		"Boxing.txt":         "Boxing is a combat sport that has been practised since at least 3000 BC and became an Olympic sport in 1904.",
	}
	var ds []extract.Document
	for _, name := range []string{"Sid Haig.txt", "Vic Darchinyan.txt", "Boxing.txt"} {
		d, reason := extract.File("input_files/"+name, []byte(docs[name]))
		require.Empty(t, reason)
		ds = append(ds, d)
	}
	c := newCorpus(ds)
	o := findOptions{Candidates: 40, Sources: 3, Answers: 1, Items: 4, Support: 1}
	for _, tt := range []struct{ q, lead string }{
		{"Who is the oldest, Sid Haig or Vic Darchinyan?", "Sid Haig"},
		{"Who is younger, Sid Haig or Vic Darchinyan?", "Vic Darchinyan"},
	} {
		f := c.find(plainSub(tt.q), o)
		require.True(t, f.answered(), tt.q)
		texts := answerTexts(c, f)
		require.Len(t, texts, 2, tt.q)
		require.Contains(t, texts[0], tt.lead, tt.q)
	}
	// A name no document is about: no order is read.
	_, ok := c.chronology("Who is older, Sid Haig or Anna Smith?")
	require.False(t, ok)
}

// Of documents whose titles name an alternative, the one titled by just that name is its own.
func TestChronologySubjectDoc(t *testing.T) {
	var ds []extract.Document
	for name, text := range map[string]string{
		"Science News.txt":              "Science News is a magazine. It has been published since 1922.",
		"Science News for Students.txt": "Science News for Students is an online magazine started in 2003.",
		"Guitar World.txt":              "Guitar World is a music magazine published since July 1980.",
	} {
		d, reason := extract.File("input_files/"+name, []byte(text))
		require.Empty(t, reason)
		ds = append(ds, d)
	}
	c := newCorpus(ds)
	units, ok := c.chronology("Which magazine was published first, Guitar World or Science News?")
	require.True(t, ok)
	require.Contains(t, c.units[units[0]].Text, "1922")
}
