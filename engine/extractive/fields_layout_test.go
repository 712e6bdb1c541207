package extractive_test

import (
	"testing"

	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/enginetest"
	"github.com/stretchr/testify/require"
)

// A booking's field lines answer the fields their labels name, a field named as an identifier
// included ("pickup_date" by "Pick-up:"); a figure counts what a count field names ("14 lenders",
// not the year 1874 in the next sentence); a page's range of dates gives its opening and closing
// dates; a title field takes the title of the page the question is about.
func TestStructuredFieldsFromLayout(t *testing.T) {
	t.Parallel()
	booking := []byte("# Kestrelway Rental Agreement\n\n**Agreement number:** KW-58214-B\n**Renter:** Imogen Farrant\n" +
		"**Pick-up:** 14 August 2025 at 09:30\n**Return:** 21 August 2025 at 09:30\n\n" +
		"Renters may buy **Fuel Ahead** at the counter instead of returning the car full.\n")
	page := []byte(`<html><head><title>Salt &amp; Indigo: Textiles of the North Sea Coast | Exhibitions | Calderbridge Museum</title></head><body>
<p class="kicker">Exhibition</p><h1>Salt &amp; Indigo: Textiles of the North Sea Coast</h1>
<p class="dates">7 March – 30 August 2026 · Wrenfield Gallery</p>
<h2>About the exhibition</h2>
<p>Drawing on loans from 14 lenders in Britain and Norway, the exhibition follows cloth from the net lofts.
Many of the objects have never been shown before, including a gansey knitted in 1874.</p>
<p>Friday 17 July 2026 – Salt &amp; Indigo Late: the exhibition opens late.</p></body></html>`)
	ws := enginetest.Workspace(t, map[string][]byte{"booking.md": booking, "exhibition.html": page})
	for _, tc := range []struct {
		question string
		schema   map[string]any
		want     map[string]any
	}{
		{"Extract the key details of this car rental booking.", objectOf(map[string]any{
			"renter_name": map[string]any{"type": "string", "description": "Full name of the main renter"},
			"pickup_date": map[string]any{"type": "string", "format": "date", "description": "Date the vehicle is collected"},
		}), map[string]any{"renter_name": "Imogen Farrant", "pickup_date": "2025-08-14"}},
		{"Pull out the exhibition details for Salt & Indigo.", objectOf(map[string]any{
			"exhibition_title":  map[string]any{"type": "string"},
			"opening_date":      map[string]any{"type": "string", "format": "date"},
			"closing_date":      map[string]any{"type": "string", "format": "date"},
			"number_of_lenders": map[string]any{"type": "integer", "description": "How many lenders contributed objects"},
		}), map[string]any{"exhibition_title": "Salt & Indigo: Textiles of the North Sea Coast", "opening_date": "2026-03-07",
			"closing_date": "2026-08-30", "number_of_lenders": int64(14)}},
	} {
		in := engine.Input{Question: tc.question, Effort: engine.EffortLow, JSONSchema: tc.schema, Workspace: ws}
		out := runOffline(t, in, "").res.StructuredOutput
		for k, v := range tc.want {
			require.EqualValues(t, v, out[k], "%s: %s", tc.question, k)
		}
	}
}

// objectOf is a schema of an object whose properties are all required.
func objectOf(props map[string]any) map[string]any {
	var req []any
	for k := range props {
		req = append(req, k)
	}
	return map[string]any{"type": "object", "properties": props, "required": req}
}

// An enum value written as a code is the field's when the sources state no other, however often
// they state it ("TPLO" in the operation note and the bill; "other" is said of anything); a version
// field is read from "from … to …" by what it names; a field named only by words of form
// ("current_version") is searched for by them; a count of steps counts the items of the list under
// the heading that names them.
func TestStructuredCodesAndVersions(t *testing.T) {
	t.Parallel()
	vet := []byte("# Discharge summary\n\n**Patient:** Juniper\n\n## What we did\n\nJuniper had a **TPLO** on her left stifle. Other findings were normal.\n\n" +
		"## Bill\n\n| Item | Amount |\n|---|---|\n| TPLO surgery | £2,640.00 |\n")
	mail := []byte("Subject: LedgerBase upgrade\n\nWe plan to upgrade our main server from 11.4.7 to version 12 in November.\n\n" +
		"Our recommendation is to go straight from 11.4.7 to 12.1.2 and not to install 12.0.x at all.\n\n" +
		"MIGRATION PROCEDURE\nFor a database of your size (about 310 GB) we suggest the link method.\n\n" +
		"1. Take a full backup.\n2. Run lbcheck.\n3. Stop the service.\n")
	ws := enginetest.Workspace(t, map[string][]byte{"vet.md": vet, "mail.txt": mail})
	for _, tc := range []struct {
		question string
		schema   map[string]any
		want     map[string]any
	}{
		{"Extract the details of the dog's surgery.", objectOf(map[string]any{
			"procedure": map[string]any{"type": "string", "enum": []any{"TPLO", "TTA", "amputation", "other"}, "description": "Surgical procedure performed"},
		}), map[string]any{"procedure": "TPLO"}},
		{"Extract the upgrade details from the LedgerBase e-mail.", objectOf(map[string]any{
			"current_version":      map[string]any{"type": "string"},
			"recommended_version":  map[string]any{"type": "string"},
			"migration_step_count": map[string]any{"type": "integer", "description": "Number of numbered steps in the migration procedure"},
		}), map[string]any{"current_version": "11.4.7", "recommended_version": "12.1.2", "migration_step_count": int64(3)}},
	} {
		in := engine.Input{Question: tc.question, Effort: engine.EffortLow, JSONSchema: tc.schema, Workspace: ws}
		out := runOffline(t, in, "").res.StructuredOutput
		for k, v := range tc.want {
			require.EqualValues(t, v, out[k], "%s: %s", tc.question, k)
		}
	}
}
