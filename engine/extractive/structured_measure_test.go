package extractive_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine"
)

// TestStructuredFieldsByMeasure: a number field takes a figure of the kind it asks for, in its
// scale; a party named by its role comes from a passage that states the role; evidence comes from
// the documents that name the question's names; each field is null when nothing gives it.
func TestStructuredFieldsByMeasure(t *testing.T) {
	t.Parallel()
	docs := map[string]string{
		"harbour.md": "# Porthkellis harbour wall\n\nThe harbour wall at Porthkellis will be rebuilt this summer after storms in January left a 40-metre breach.\n\n" +
			"The work will cost £3.8 million. The county council will pay £2.5 million and the harbour commissioners the rest.\n\n" +
			"Net debt of the commissioners was £0.4 million at the end of 2025. They will decide on a dividend next year.\n\n" +
			"The wall was first built in 2025 terms of the harbour charter.\n",
		"other.md": "# Kellerhals\n\nAfter graduating, she spent six years at the firm of Roth & Aeberli, the contractor for the Gallenstock railway.\n",
		"dryer.md": "# Kestrel HD8 dryer\n\nThe room temperature must stay between 5 °C and 35 °C. Revenue of the maker grew 12 per cent.\n",
		"flats.md": "# Harbourside roof levy\n\nEach of the Harbourside flats pays a roof levy of £1,850 this year.\n",
		"bins.md":  "# Brackenfield garden waste\n\nA Brackenfield garden waste subscription costs £52 a year, or £45 if you pay by direct debit.\n",
		"bridge.md": "# Castlegate Bridge to shut\n\n**By Harriet Olusanya**\n\n*Wendleford Courier · Thursday 12 March 2026*\n\n" +
			"Castlegate Bridge will close to traffic for 14 weeks from Monday 20 April.\n\n" +
			"Keeping one lane open would have stretched the Castlegate Bridge closure to about 30 weeks.\n\n" +
			"The council now puts the Castlegate Bridge repair bill at £2.4 million, up from the £1.6 million it estimated in 2024.\n\n" +
			"Castlegate Bridge engineer job. Location: Wendleford (hybrid). Salary: £58,000 – £66,000 per year. " +
			"We are unable to offer visa sponsorship for the Castlegate Bridge engineer job.\n\n" +
			"The Castlegate Bridge shuttle bus is free for all residents. \n\nA replacement Castlegate Bridge parking permit is free if yours was stolen.\n",
		"policy.txt": "BRAMBLEWICK HOME COVER\n\nEXCESSES\n\n  Standard excess (all claims unless shown below) ......... £150\n  Escape of water ........ £400\n\n" +
			"YOUR RIGHT TO CANCEL\n\nYou have 14 days to cancel your Bramblewick policy. After that we refund the premium for the unexpired period of cover, less an administration fee of £30.\n",
		"aldric.md": "# Edwin Aldric\n\nEdwin Aldric was a civil engineer.\n\n**Born:** 14 March 1826, Hollowmere\n**Died:** 2 November 1893, Kesterby\n",
		"toaster.html": "<html><body><main><h1>Brenna toaster recall</h1><p>Brenna is recalling its toasters.</p>" +
			"<dl><dt>Recall reference</dt><dd>BR-TR-2026-01</dd><dt>Units affected</dt><dd>About 2,000</dd></dl></main></body></html>",
		"recall.md": "# Arla kettle recall\n\nThe Arla kettle recall was announced on 14 October 2025.\n\n**Recall reference:** BW-RC-2025-04\n",
		"gym.md":    "# Ironhill Gym membership\n\nA Standard Ironhill Gym membership costs £30 a month.\n\nThe Ironhill Gym complaints service is free for members.\n",
		"course.md": "# MSc Tidal Surveying\n\n**English language:** IELTS Academic 6.5 overall, with no component below 6.0, or an equivalent qualification.\n",
		"shop.md": "# Fennick & Rowe checkout outage\n\nCustomers of the Fennick & Rowe shop could not complete orders for 3 hours and 12 minutes. The fix took 31 minutes to deploy.\n\n" +
			"Gross margin of Fennick & Rowe fell to 39.8 per cent. We expect gross margin to recover to about 42 per cent next year.\n\n" +
			"A frozen Fennick & Rowe loyalty month costs 5 euros. We may raise the loyalty fee once a year.\n\n" +
			"You can freeze a Fennick & Rowe loyalty membership once a year for between one and three months.\n\n" +
			"Fennick & Rowe revenue rose 9 per cent to £4.86 million, from £4.46 million in 2024.\n",
	}
	num := func(desc string) map[string]any {
		return map[string]any{"type": []any{"number", "null"}, "description": desc}
	}
	tests := []struct {
		name, question, field string
		prop                  map[string]any
		want                  any
	}{
		{"money at its scale", "What will the Porthkellis harbour wall cost?", "total_cost_gbp", num("Total cost in pounds"), 3.8e6},
		{"money in the field's millions", "What will the Porthkellis harbour wall cost?", "total_cost_gbp_million", num(""), 3.8},
		{"no figure of the kind asked: null", "What does a pack of Porthkellis harbour wall stones cost?", "stone_price_eur", num("Retail price"), nil},
		{"a figure of something else: null", "What dividend per share did the Porthkellis commissioners pay?", "dividend_per_share_gbp", num("Net dividend per share"), nil},
		{"a percentage only", "How much did the Kestrel maker's revenue grow?", "revenue_growth_percent", num(""), 12.0},
		{"the upper end of a range", "What is the warmest room the Kestrel HD8 dryer may run in?", "max_room_temperature_c", num("Highest room temperature"), 35.0},
		{"the lower end of a range", "What is the coldest room the Kestrel HD8 dryer may run in?", "min_room_temperature_c", num("Lowest room temperature"), 5.0},
		{"a span of time in the field's unit", "How long could Fennick & Rowe customers not check out?", "outage_minutes", num("Time checkout was down"), 192.0},
		{"the figure reported, not the outlook", "What gross margin did Fennick & Rowe report?", "gross_margin_percent", num(""), 39.8},
		{"money needs fewer of the field's words", "What does a paused Fennick & Rowe loyalty month cost?", "freeze_fee_eur_per_month", num(""), 5.0},
		{"months, the upper end in words", "How long can a Fennick & Rowe loyalty membership be frozen at most?", "max_freeze_months", num(""), 3.0},
		{"a year compared with is not the year stated", "What was Fennick & Rowe revenue in 2025?", "revenue_gbp_million", num(""), 4.86},
		{"a count is no amount of money", "How many flats does Harbourside have, and what does each pay?", "number_of_flats",
			map[string]any{"type": []any{"integer", "null"}}, nil},
		{"what will be, not what would have been", "How long will Castlegate Bridge be closed?", "closure_length_weeks",
			map[string]any{"type": []any{"integer", "null"}}, 14.0},
		{"a rate is stated by what it counts", "What does each Harbourside flat pay for the roof?", "levy_per_flat_gbp", num(""), 1850.0},
		{"a total is no rate", "What do the Porthkellis harbour wall works cost per tonne of stone?", "cost_per_tonne_gbp", num(""), nil},
		{"the figure the field's words follow", "What does a Brackenfield garden waste subscription cost?", "direct_debit_price_gbp", num(""), 45.0},
		{"the figure now, not the one it rose from", "What will the Castlegate Bridge repairs cost?", "repair_cost_gbp_million", num(""), 2.4},
		{"free is nothing to pay", "What is the fare on the Castlegate Bridge shuttle bus?", "shuttle_fare_gbp", num(""), 0.0},
		{"free only on a condition is no price", "What does a Castlegate Bridge parking permit cost?", "parking_permit_fee_gbp", num(""), nil},
		{"a date worded by a relative, in the year of the dateline", "When does Castlegate Bridge close?", "closure_start_date",
			map[string]any{"type": []any{"string", "null"}, "format": "date"}, "2026-04-20"},
		{"the upper end of a range in pounds", "What does the Castlegate Bridge engineer job pay at most?", "salary_max_gbp", num(""), 66000.0},
		{"the lower end of a range in pounds", "What does the Castlegate Bridge engineer job pay at least?", "salary_min_gbp", num(""), 58000.0},
		{"the only value of an enum the sources state", "How would a Castlegate Bridge engineer work?", "work_pattern",
			map[string]any{"type": []any{"string", "null"}, "enum": []any{"fully_remote", "hybrid", "office_based", nil}}, "hybrid"},
		{"unable to is a no", "Would Castlegate Bridge sponsor a visa for the engineer job?", "visa_sponsorship_available",
			map[string]any{"type": []any{"boolean", "null"}}, false},
		{"a description's 'per claim' is no rate", "What is the standard excess on Bramblewick home cover?", "standard_excess_gbp", num("Standard excess per claim, in pounds"), 150.0},
		{"a span of time the name asks for, whatever the description mentions", "What are the Bramblewick cancellation terms?", "cooling_off_days",
			map[string]any{"type": []any{"integer", "null"}, "description": "Number of days in which the policy can be cancelled without a cancellation fee"}, 14.0},
		{"a figure after a name the field names is its value", "What IELTS score does the MSc Tidal Surveying require?", "min_ielts_overall",
			num("Minimum overall IELTS Academic score required"), 6.5},
		{"a birth date from the line that says born", "When was Edwin Aldric born and when did he die?", "birth_date",
			map[string]any{"type": []any{"string", "null"}, "format": "date"}, "1826-03-14"},
		{"free says nothing of a price it does not name", "Fill in the Ironhill Gym membership details.", "day_pass_price_gbp",
			num("Price of a day pass for someone who is not a member"), nil},
		{"a reference number is no source file", "What is the reference of the Arla kettle recall?", "recall_reference",
			map[string]any{"type": []any{"string", "null"}, "description": "Recall reference number"}, "BW-RC-2025-04"},
		{"a description list's value under its term", "What is the reference of the Brenna toaster recall?", "recall_reference",
			map[string]any{"type": []any{"string", "null"}, "description": "Recall reference number"}, "BR-TR-2026-01"},
		{"a role no passage states: null", "Which company will rebuild the Porthkellis harbour wall?", "contractor_name", map[string]any{"type": []any{"string", "null"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			schema := map[string]any{"type": "object", "properties": map[string]any{tc.field: tc.prop}, "required": []any{tc.field}}
			res, err := runOnDocs(t, docs, tc.question, schema)
			require.NoError(t, err)
			require.NoError(t, engine.ValidateStructuredOutput(schema, res.StructuredOutput))
			require.Contains(t, res.StructuredOutput, tc.field)
			require.Equal(t, tc.want, res.StructuredOutput[tc.field])
		})
	}
}

// TestStructuredListUnderLeadIn: an array of strings takes the list that a heading or lead-in
// naming the field introduces, an item each, not sentences that merely mention its words.
func TestStructuredListUnderLeadIn(t *testing.T) {
	t.Parallel()
	docs := map[string]string{"leaflet.md": "# Almeron\n\n## Possible side effects\n\nLike all medicines, Almeron can cause side effects.\n\n" +
		"Common side effects (may affect up to 1 in 10 people):\n\n- headache;\n- dry mouth;\n- tiredness.\n\n" +
		"Uncommon side effects (may affect up to 1 in 100 people): nausea and dizziness.\n"}
	schema := map[string]any{"type": "object", "required": []any{"common_side_effects"},
		"properties": map[string]any{"common_side_effects": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}}
	res, err := runOnDocs(t, docs, "What are the common side effects of Almeron?", schema)
	require.NoError(t, err)
	require.NoError(t, engine.ValidateStructuredOutput(schema, res.StructuredOutput))
	require.Equal(t, []any{"headache", "dry mouth", "tiredness"}, res.StructuredOutput["common_side_effects"])
}

// TestStructuredDemandedAnswer: an answer field the schema requires and does not let be null is
// filled from the passage most likely to answer, at low confidence, when the report does not
// answer for want of confidence; it stays null where null is allowed, and nothing is filled for a
// question naming something no source mentions.
func TestStructuredDemandedAnswer(t *testing.T) {
	t.Parallel()
	docs := map[string]string{"tay.md": "# The Tay Bridge disaster\n\n## The inquiry\n\nA court of inquiry reported in June 1880. " +
		"It concluded that the bridge had been badly designed, badly built and badly maintained. The report placed the main blame on Bouch.\n"}
	answer := func(types any) map[string]any {
		return map[string]any{"type": "object", "required": []any{"answer"}, "properties": map[string]any{"answer": map[string]any{"type": types}}}
	}
	q := "Who got the blame for the fall of the rail crossing over the Tay?"
	res, err := runOnDocs(t, docs, q, answer("string"))
	require.NoError(t, err)
	require.Contains(t, res.Report, "do not answer", "the report does not answer: the field is filled all the same")
	require.Contains(t, res.StructuredOutput["answer"], "Bouch")

	res, err = runOnDocs(t, docs, q, answer([]any{"string", "null"}))
	require.NoError(t, err)
	if v := res.StructuredOutput["answer"]; v != nil {
		require.Contains(t, v, "Bouch", "an answer the report gives, or null")
	}

	_, err = runOnDocs(t, docs, "Who got the blame for the fall of the Zarnovia crossing?", answer("string"))
	require.Error(t, err, "a name no source mentions: no passage answers")
}

// TestStructuredFieldWordedOtherwise: a field whose name holds a word no source uses ("fixed")
// is still spoken of when the sources use its other words ("firmware"); a date without its year
// takes the year of the e-mail it is in.
func TestStructuredFieldWordedOtherwise(t *testing.T) {
	t.Parallel()
	docs := map[string]string{"ticket.txt": "Subject: Re: Ticket 48213\nDate: 14 October 2026\n\n" +
		"Thank you for the logs. The feeder goes to sleep after 90 seconds.\n\n" +
		"Firmware 2.1.6, released on 9 October, raises the timer to ten minutes.\n"}
	schema := map[string]any{"type": "object", "required": []any{"fixed_firmware_version", "firmware_release_date"}, "properties": map[string]any{
		"fixed_firmware_version": map[string]any{"type": "string", "description": "Firmware version that resolves the issue"},
		"firmware_release_date":  map[string]any{"type": []any{"string", "null"}, "format": "date"},
	}}
	res, err := runOnDocs(t, docs, "Our scanner keeps cutting out. What did support say the fix is?", schema)
	require.NoError(t, err)
	require.Equal(t, "2.1.6", res.StructuredOutput["fixed_firmware_version"])
	require.Equal(t, "2026-10-09", res.StructuredOutput["firmware_release_date"])
}

// TestStructuredFiguresThatAreNoQuantity: the day and year of a date, the number of a named thing
// ("Round 2"), a step's number and a span of time are no count or age; a field in a unit takes a
// figure stated in it; a table's column header that states the field's words decides between
// columns, and a row the field's description rules out ("non-early-bird") loses.
func TestStructuredFiguresThatAreNoQuantity(t *testing.T) {
	t.Parallel()
	docs := map[string]string{
		"marlow.md": "# Edwin Marlow\n\nEdwin Marlow died at Kesterby on 2 November 1893, aged 67.\n\n" +
			"His Orrin Dam was finished in 1865, when it was 96 feet high and 1,150 feet long.\n",
		"fund.md": "# Rook Fund grants\n\nRound 2 of the Rook Fund has a total budget of £1.2 million.\n\n" +
			"Rook Fund grants over £100,000 need two years of audited accounts.\n\n2. Talk to our officer before you apply for a Rook Fund grant.\n",
		"kell.md": "# Kell festival tickets\n\n| Ticket | Standard | Concession |\n| --- | --- | --- |\n" +
			"| Early-bird weekend pass | £36 | £27 |\n| Weekend pass | £45 | £34 |\n",
	}
	num := func(t any, desc string) map[string]any { return map[string]any{"type": t, "description": desc} }
	tests := []struct {
		name, question, field string
		prop                  map[string]any
		want                  any
	}{
		{"the day of a date is no age", "How old was Edwin Marlow when he died?", "age_at_death", num("integer", ""), 67.0},
		{"a field in feet takes a figure in feet, not a year", "How high was Edwin Marlow's Orrin Dam?", "dam_height_feet", num("number", ""), 96.0},
		{"a named number, a step's number and a span of time are no count", "How many Rook Fund grants will be awarded?",
			"number_of_grants_awarded", num([]any{"integer", "null"}, "How many grants the Rook Fund expects to award"), nil},
		{"the column the field names, not the row it rules out", "What does a weekend pass for the Kell festival cost?",
			"weekend_pass_standard_gbp", num("number", "Standard (non-concession, non-early-bird) weekend pass price"), 45.0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			schema := map[string]any{"type": "object", "properties": map[string]any{tc.field: tc.prop}}
			res, err := runOnDocs(t, docs, tc.question, schema)
			require.NoError(t, err)
			require.NoError(t, engine.ValidateStructuredOutput(schema, res.StructuredOutput))
			require.Equal(t, tc.want, res.StructuredOutput[tc.field])
		})
	}
}

// TestStructuredDates: a date field takes the end of a range it asks for, a date under its
// document's title at the top of the page, and of two dates in its passages the one stated right
// after a word of its name ("to launch on 1 April"), not the press release's own.
func TestStructuredDates(t *testing.T) {
	t.Parallel()
	docs := map[string]string{
		"kell.md": "# Kell Riverside Festival\n\nFriday 11 – Sunday 13 September 2026 · Three days of music on the River Kell.\n\n" +
			"Early-bird passes are on sale until 31 July 2026.\n",
		"beacon.md": "# Lumen Beacon\n\nHALVERTON, 3 February 2026 -- Lumen Health today announced its results for the year ended " +
			"31 December 2025 and the launch of Lumen Beacon.\n\n- Lumen Beacon to launch on 1 April 2026 at £4.50 a month\n",
	}
	date := map[string]any{"type": "string", "format": "date"}
	tests := []struct{ question, field, want string }{
		{"When is the Kell Riverside Festival?", "festival_start_date", "2026-09-11"},
		{"When is the Kell Riverside Festival?", "festival_end_date", "2026-09-13"},
		{"When does Lumen Beacon launch?", "launch_date", "2026-04-01"},
	}
	for _, tc := range tests {
		t.Run(tc.field, func(t *testing.T) {
			t.Parallel()
			schema := map[string]any{"type": "object", "properties": map[string]any{tc.field: date}, "required": []any{tc.field}}
			res, err := runOnDocs(t, docs, tc.question, schema)
			require.NoError(t, err)
			require.Equal(t, tc.want, res.StructuredOutput[tc.field])
		})
	}
}

// TestStructuredListFromATable: an array of strings takes the labels of the rows that a table's
// column of categories marks with the category the field names, all of them.
func TestStructuredListFromATable(t *testing.T) {
	t.Parallel()
	docs := map[string]string{"course.html": `<html><body><main><h1>MSc Tidal Surveying</h1><h2>Modules</h2>
<table><tr><th>Module</th><th>Credits</th><th>Core/Optional</th></tr>
<tr><td>Tides and Currents</td><td>30</td><td>Core</td></tr><tr><td>Port Law</td><td>15</td><td>Optional</td></tr>
<tr><td>Hydrographic Survey</td><td>30</td><td>Core</td></tr><tr><td>Dredging Practice</td><td>15</td><td>Optional</td></tr>
<tr><td>Seabed Mapping</td><td>15</td><td>Core</td></tr><tr><td>Coastal Law</td><td>15</td><td>Core</td></tr>
<tr><td>Field Week</td><td>15</td><td>Core</td></tr><tr><td>Dissertation</td><td>60</td><td>Core</td></tr></table></main></body></html>`}
	schema := map[string]any{"type": "object", "properties": map[string]any{"core_modules": map[string]any{
		"type": "array", "items": map[string]any{"type": "string"}, "description": "Names of the core (compulsory) modules"}}}
	res, err := runOnDocs(t, docs, "Extract the key course details for the MSc Tidal Surveying.", schema)
	require.NoError(t, err)
	require.Equal(t, []any{"Tides and Currents", "Hydrographic Survey", "Seabed Mapping", "Coastal Law", "Field Week", "Dissertation"},
		res.StructuredOutput["core_modules"])
}
