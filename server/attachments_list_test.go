package server_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestListAttachments: GET /attachments lists the caller's own attachments, newest first, a page at
// a time (keyset cursor, stable under inserts), pending reservations until they expire, never
// another account's; bad paging parameters are 422 and a key without the scope is 403. Every answer
// is checked against the document.
func TestListAttachments(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			e := newAttEnv(t, d)
			other := e.NewAccount(t, store.TierFree, false, 0)
			upload := func(key, name string) string {
				r := e.upload(t, key, part{filename: name, contentType: "text/plain", data: []byte("notes\n")})
				require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
				var a gen.Attachment
				r.JSON(t, &a)
				return a.AttachmentId.String()
			}
			list := func(key, query string) (gen.AttachmentPage, *servertest.Resp) {
				r := e.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/attachments" + query, Token: key})
				var p gen.AttachmentPage
				if r.Status == http.StatusOK {
					r.JSON(t, &p)
				}
				return p, r
			}
			ids := func(p gen.AttachmentPage) []string {
				var out []string
				for _, a := range p.Items {
					out = append(out, a.AttachmentId.String())
				}
				return out
			}

			empty, r := list(e.owner.Key, "")
			require.Equal(t, http.StatusOK, r.Status, string(r.Body))
			require.Empty(t, empty.Items)
			require.False(t, empty.HasMore)
			require.True(t, empty.NextCursor.IsNull())

			// Two at the same instant (the id breaks the tie), a pending reservation, a newer one.
			a1, a2 := upload(e.owner.Key, "a1.txt"), upload(e.owner.Key, "a2.txt")
			same := []string{a1, a2}
			slices.Sort(same)
			slices.Reverse(same)
			e.clock.Advance(time.Second)
			br, pending := e.begin(t, e.owner.Key, map[string]any{"filename": "big.pdf", "size_bytes": 1000})
			require.Equal(t, http.StatusCreated, br.Status, string(br.Body))
			e.clock.Advance(time.Second)
			a3 := upload(e.owner.Key, "a3.txt")
			theirs := upload(other.Key, "theirs.txt")
			want := append([]string{a3, pending.AttachmentId.String()}, same...)

			all, _ := list(e.owner.Key, "")
			require.Equal(t, want, ids(all))
			require.False(t, all.HasMore)
			require.Equal(t, gen.AttachmentStatus(store.AttachmentPending), all.Items[1].Status)
			require.False(t, all.Items[1].ExpiresAt.IsNull())
			require.Equal(t, []gen.AttachedFile{{Filename: "a3.txt", SizeBytes: 6, ContentType: "text/plain"}}, all.Items[0].Files)

			// Page by page: the pages add up to the whole list, even with an insert between pages.
			var paged []string
			query := "?limit=3"
			for i := 0; ; i++ {
				p, r := list(e.owner.Key, query)
				require.Equal(t, http.StatusOK, r.Status, string(r.Body))
				paged = append(paged, ids(p)...)
				if i == 0 {
					e.clock.Advance(time.Second)
					upload(e.owner.Key, "later.txt") // newer than the cursor: not on a later page
				}
				if !p.HasMore {
					require.True(t, p.NextCursor.IsNull())
					break
				}
				next, err := p.NextCursor.Get()
				require.NoError(t, err)
				query = "?limit=3&cursor=" + url.QueryEscape(next)
			}
			require.Equal(t, want, paged)

			theirsPage, _ := list(other.Key, "")
			require.Equal(t, []string{theirs}, ids(theirsPage), "another account's attachments are never listed")

			// A deleted attachment and an expired reservation are gone from the list.
			require.Equal(t, http.StatusNoContent, e.Do(t, servertest.Req{Method: "DELETE", Path: "/api/v2/attachments/" + a1, Token: e.owner.Key}).Status)
			e.clock.Advance(2 * time.Hour)
			after, _ := list(e.owner.Key, "")
			got := strings.Join(ids(after), ",")
			require.NotContains(t, got, a1)
			require.NotContains(t, got, pending.AttachmentId.String())
			require.Len(t, after.Items, 3)

			for _, tt := range []struct {
				name, query, code string
			}{
				{"bad cursor", "?cursor=garbage", "invalid_cursor"},
				{"limit zero", "?limit=0", "validation_error"},
				{"limit over 100", "?limit=101", "validation_error"},
			} {
				_, r := list(e.owner.Key, tt.query)
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, tt.name)
				require.Equal(t, tt.code, r.Problem(t).Code, tt.name)
			}
			_, r = list(e.Key(t, e.owner.ID, "research"), "")
			require.Equal(t, http.StatusForbidden, r.Status)
			_, r = list("", "")
			require.Equal(t, http.StatusUnauthorized, r.Status)
		})
	}
}
