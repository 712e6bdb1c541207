package server_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// A job may only name the caller's own, uploaded, undeleted attachments; anything else is a 422 that
// names the bad entry, and no job is created.
func TestResearchRefusesUnusableAttachments(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newResearchEnv(t, d)
			owner := e.NewAccount(t, store.TierPro, false, 100)
			stranger := e.NewAccount(t, store.TierPro, false, 100)

			upload := func(key string) string {
				body, ct := multipartBody(t, part{filename: "notes.txt", data: []byte("some notes\n")})
				r := e.Do(t, servertest.Req{Method: "POST", Path: "/api/v2/attachments", Token: key, RawBody: body, ContentType: ct})
				require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
				var a struct {
					AttachmentID string `json:"attachment_id"`
				}
				r.JSON(t, &a)
				return a.AttachmentID
			}
			kept := upload(owner.Key)
			deleted := upload(owner.Key)
			require.Equal(t, http.StatusNoContent, e.Do(t, servertest.Req{Method: "DELETE", Path: "/api/v2/attachments/" + deleted, Token: owner.Key}).Status)
			foreign := upload(stranger.Key)

			for _, tc := range []struct {
				name  string
				ids   []string
				field string
			}{
				{"deleted", []string{deleted}, "attachment_ids/0"},
				{"another account's", []string{kept, foreign}, "attachment_ids/1"},
			} {
				r := e.create(t, owner.Key, map[string]any{"question": "What do the notes say?", "effort": "low", "attachment_ids": tc.ids}, nil)
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, tc.name)
				p := r.Problem(t)
				require.NotNil(t, p.Errors, tc.name)
				require.Equal(t, tc.field, (*p.Errors)[0].Field, tc.name)
			}

			r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/research", Token: owner.Key})
			require.Equal(t, http.StatusOK, r.Status)
			var page struct {
				Items []any `json:"items"`
			}
			r.JSON(t, &page)
			require.Empty(t, page.Items, "a refused create leaves no job behind")
		})
	}
}
