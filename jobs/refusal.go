package jobs

import (
	"strconv"

	"github.com/researchd/researchd/fault"
)

// ErrExpertNotFound: no expert with that id that the account may run.
var ErrExpertNotFound = fault.Missing("expert")

// quotaHint is where a create or continue refused for credits points the caller.
const quotaHint = "check GET /api/v2/quota/check"

// NoCredits refuses work at effort that needs more credits than the balance holds: a
// fault.PaymentRequired made of a *CreditsError. The caller reads the shortfall, then hint (where
// to look).
func NoCredits(effort string, needs int64, hint string) error {
	ce := &CreditsError{Effort: effort, Needs: needs}
	return &fault.Error{Kind: fault.PaymentRequired, Msg: ce.Error(), Detail: ce.Error() + "; " + hint, Err: ce}
}

// TierRefusal refuses the expert expertID (as the caller named it) to an account of tier: a
// fault.Forbidden made of an *ExpertTierError. Every path that names an expert (research, batches,
// loops, campaigns) answers it the same way.
func TierRefusal(expertID, tier string) error {
	te := &ExpertTierError{ExpertID: expertID, Tier: tier}
	return &fault.Error{Kind: fault.Forbidden, Code: CodeForbidden, Msg: te.Error(),
		Detail: te.Error() + "; upgrade the account's tier or choose another expert", Err: te}
}

// unusable refuses a create for an attachment id it cannot use: a fault.Invalid naming
// attachment_ids/<Index>, made of the *UnusableAttachmentError.
func unusable(ue *UnusableAttachmentError) error {
	f := fault.InvalidInput(fault.Field{Field: "attachment_ids/" + strconv.Itoa(ue.Index), Message: ue.Reason})
	f.Msg, f.Err = ue.Error(), ue
	return f
}
