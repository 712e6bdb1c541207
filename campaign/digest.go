package campaign

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/gowebpki/jcs"
)

// Digest is the review digest (approveCampaign in openapi/v2.json): the lowercase hex SHA-256 of the RFC 8785 canonical
// JSON of {"budget": max_credits or null, "plan": the normalized plan, "revision": revision}.
// Approving with it proves the caller reviewed exactly what will run.
func Digest(plan Plan, revision int, budget *int64) (string, error) {
	b, err := json.Marshal(struct {
		Budget   *int64 `json:"budget"`
		Plan     Plan   `json:"plan"`
		Revision int    `json:"revision"`
	}{budget, plan, revision})
	if err != nil {
		return "", fmt.Errorf("digest: encode: %w", err)
	}
	canon, err := jcs.Transform(b)
	if err != nil {
		return "", fmt.Errorf("digest: canonicalize: %w", err)
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}
