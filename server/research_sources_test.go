package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/engine/sources"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestResearchWithoutSourcesIsNotCharged: on a server with no corpus and no web search, a job
// without attachments completes with a report that says no sources were available, and the
// account's credits are unchanged (the charge taken at dispatch is refunded, and the ledger says
// why). The same job with an attachment is charged.
func TestResearchWithoutSourcesIsNotCharged(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newExpertResearchEnv(t, d, extractive.New(extractive.Options{}), nil)
			owner := e.NewAccount(t, store.TierPro, false, 100)
			credits := func() int {
				var q gen.QuotaResponse
				r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/quota", Token: owner.Key})
				require.Equal(t, http.StatusOK, r.Status, string(r.Body))
				r.JSON(t, &q)
				return q.CreditsRemaining
			}
			require.Equal(t, 100, credits())

			const q = "What seasonal COP did the heat pump field trial reach?"
			job := e.mustCreate(t, owner.Key, map[string]any{"question": q, "effort": "high"})
			done := e.await(t, owner.Key, job.JobId.String(), isTerminal)
			require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)
			require.Contains(t, done.Report.Markdown, "No sources were available to this run")
			require.Contains(t, done.Report.Markdown, "this run is not charged")
			require.Zero(t, done.CreditsCharged)
			require.Len(t, done.Runs, 1)
			require.Zero(t, done.Runs[0].CreditsCharged)
			require.Equal(t, 100, credits(), "no credits spent")
			ev := eventTitled(e.timeline(t, owner.Key, job.JobId.String()), "No sources")
			require.NotNil(t, ev)
			require.Equal(t, false, ev.Data.MustGet()["charged"])
			ledger, err := e.Store.ListLedger(context.Background(), accountOf(t, e, owner.Email), store.TxRefund, store.PageRequest{Limit: 10})
			require.NoError(t, err)
			require.Len(t, ledger.Items, 1)
			require.Equal(t, "Refund: research job (high) had no sources", *ledger.Items[0].Description)

			// An attachment is a source: the same question is charged.
			body, ct := multipartBody(t, part{filename: "trial.txt", data: []byte("In the 2024 field trial, the heat pumps reached a seasonal COP of 3.4 across forty homes.\n")})
			r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: owner.Key, RawBody: body, ContentType: ct})
			require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
			var att struct {
				AttachmentID string `json:"attachment_id"`
			}
			r.JSON(t, &att)
			job = e.mustCreate(t, owner.Key, map[string]any{"question": q, "effort": "high", "attachment_ids": []string{att.AttachmentID}})
			done = e.await(t, owner.Key, job.JobId.String(), isTerminal)
			require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)
			require.Contains(t, done.Report.Markdown, "seasonal COP of 3.4")
			require.Equal(t, 5, done.CreditsCharged)
			require.Equal(t, 95, credits())
		})
	}
}

func accountOf(t *testing.T, e *researchEnv, email string) string {
	t.Helper()
	a, err := e.Store.AccountByEmail(context.Background(), email)
	require.NoError(t, err)
	return a.ID
}

// TestResearchExtractiveSearchesTheWeb: with a search provider, the extractive engine answers from
// the web: a scripted SearXNG names an article (reached through the SSRF guard, which refuses the
// other result's loopback address), the report quotes the article by URL, every citation verifies
// against the page stored under sources/, and the run is charged like any run with sources.
func TestResearchExtractiveSearchesTheWeb(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			web := newWebFixture(t)
			eng := extractive.New(extractive.Options{Web: sources.NewWebSearcher(web.searcher, web.fetch, nil)})
			e := newExpertResearchEnv(t, d, eng, nil)
			owner := e.NewAccount(t, store.TierPro, false, 100)
			job := e.mustCreate(t, owner.Key, map[string]any{"question": "What seasonal COP did the heat pump field trial reach?", "effort": "medium"})
			done := e.await(t, owner.Key, job.JobId.String(), isTerminal)
			require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)
			md := done.Report.Markdown
			require.Contains(t, md, "“In the 2024 field trial, the heat pumps reached a seasonal COP of 3.4 across forty homes.” [1]")
			require.Contains(t, md, "1. `"+web.page+"`, line 3, “Field trial results”")
			require.Contains(t, md, "A web page found could not be read: `"+web.internal+"`")
			c := done.Citations.MustGet()
			require.Positive(t, c.Total)
			require.Equal(t, c.Total, c.Verified, md)
			require.Equal(t, 1, done.CreditsCharged)

			// The article is stored as read (chrome left out); the refused address is not.
			r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + job.JobId.String() + "/files/sources/index.json", Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			var index []sources.StoredSource
			require.NoError(t, json.Unmarshal(r.Body, &index))
			require.Len(t, index, 1)
			require.Equal(t, web.page, index[0].Origin)
			require.Equal(t, sources.KindWeb, index[0].Kind)
			r = e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + job.JobId.String() + "/files/" + index[0].Path, Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			require.Contains(t, string(r.Body), "seasonal COP of 3.4")
			require.NotContains(t, string(r.Body), "Copyright")

			var refused bool
			for _, ev := range e.timeline(t, owner.Key, job.JobId.String()) {
				if ev.Kind == gen.TimelineEventKindToolResult && ev.Title == "web_search" {
					refused = refused || strings.Contains(ev.Content, "not read: "+web.internal) && strings.Contains(ev.Content, "destination not allowed")
				}
			}
			require.True(t, refused, "the guard's refusal is in the timeline")
		})
	}
}

// TestResearchBuildWritesASite: a build run leaves a static site beside the report (the report with
// a chart of the numeric table it read, drawn as inline SVG, and a sources page), served with the
// workspace files; nothing in it loads from elsewhere.
func TestResearchBuildWritesASite(t *testing.T) {
	t.Parallel()
	e := newExpertResearchEnv(t, storetest.Dialects()[0], extractive.New(extractive.Options{}), nil)
	owner := e.NewAccount(t, store.TierEnterprise, false, 100)
	csv := "country,2019,2020,2021\nKenya,210.3,199.0,231.8\nColombia,180.2,171.5,198.4\nEthiopia,150.0,162.4,170.1\n"
	body, ct := multipartBody(t, part{filename: "arabica-export-prices.csv", data: []byte(csv)})
	r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: owner.Key, RawBody: body, ContentType: ct})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var att struct {
		AttachmentID string `json:"attachment_id"`
	}
	r.JSON(t, &att)
	job := e.mustCreate(t, owner.Key, map[string]any{"question": "Which country had the highest arabica export price in 2021?", "effort": "build",
		"attachment_ids": []string{att.AttachmentID}})
	done := e.await(t, owner.Key, job.JobId.String(), isTerminal)
	require.Equal(t, gen.JobStatusCompleted, done.Status, "%+v", done.Error)
	require.Equal(t, gen.Effort("build"), done.Effort)
	require.Contains(t, done.Report.Markdown, "Kenya had the highest value for 2021 (231.8)")

	file := func(p string) string {
		r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research/" + job.JobId.String() + "/files/" + p, Token: owner.Key})
		require.Equal(t, http.StatusOK, r.Status, p)
		return string(r.Body)
	}
	index, sources := file("site/index.html"), file("site/sources.html")
	require.NotEmpty(t, file("site/style.css"))
	require.Equal(t, 1, strings.Count(index, "<svg "), "one chart for the one numeric table")
	require.Contains(t, index, "<title>Kenya, 2021: 231.8</title>")
	require.Contains(t, sources, "<code>input_files/arabica-export-prices.csv</code>")
	for _, page := range []string{index, sources} {
		require.NotRegexp(t, `(?i)<script|src="http|href="http|@import|url\(`, page, "nothing loads from elsewhere")
	}
}
