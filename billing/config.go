// Package billing meters research runs against an account's wallet: the credit price of each effort,
// the highest effort each tier may run, charging a run when it is dispatched and refunding it when it
// fails (each exactly once per run), and the quota, transaction and usage views of the ledger.
//
// The wallet is the store's ledger (store.AppendLedger keeps the balance the sum of its entries and
// never negative, also under concurrent spends); this package decides what to book.
package billing

import (
	"fmt"
	"slices"

	"github.com/researchd/researchd/store"
)

// Efforts, cheapest first.
const (
	EffortLow    = "low"
	EffortMedium = "medium"
	EffortHigh   = "high"
	EffortBuild  = "build"
)

// Efforts lists every effort, cheapest first.
var efforts = []string{EffortLow, EffortMedium, EffortHigh, EffortBuild}

// Efforts returns every effort, cheapest first.
func Efforts() []string { return slices.Clone(efforts) }

// Config holds the prices and tier limits (docs/configuration.md).
type Config struct {
	CreditsPerEffort map[string]int64  // low 0, medium 1, high 5, build 20
	CentsPerCredit   int64             // 10
	MaxEffortByTier  map[string]string // free: medium, pro: high, enterprise: build
}

// DefaultConfig is the contract's price list.
func DefaultConfig() Config {
	return Config{
		CreditsPerEffort: map[string]int64{EffortLow: 0, EffortMedium: 1, EffortHigh: 5, EffortBuild: 20},
		CentsPerCredit:   10,
		MaxEffortByTier: map[string]string{
			store.TierFree: EffortMedium, store.TierPro: EffortHigh, store.TierEnterprise: EffortBuild,
		},
	}
}

// Validate reports a configuration that cannot price every effort or clamp every tier.
func (c Config) Validate() error {
	if c.CentsPerCredit <= 0 {
		return fmt.Errorf("billing: cents per credit must be positive, got %d", c.CentsPerCredit)
	}
	for _, e := range efforts {
		n, ok := c.CreditsPerEffort[e]
		if !ok || n < 0 {
			return fmt.Errorf("billing: credits for effort %s must be set and not negative", e)
		}
	}
	for _, t := range []string{store.TierFree, store.TierPro, store.TierEnterprise} {
		if !slices.Contains(efforts, c.MaxEffortByTier[t]) {
			return fmt.Errorf("billing: tier %s has no valid highest effort (%q)", t, c.MaxEffortByTier[t])
		}
	}
	return nil
}

// MaxEffort is the highest effort the tier may run; an unknown tier gets the lowest tier's.
func (c Config) MaxEffort(tier string) string {
	if m, ok := c.MaxEffortByTier[tier]; ok {
		return m
	}
	return c.MaxEffortByTier[store.TierFree]
}

// Clamp returns the effort a run of the tier actually gets: the requested one, or the tier's highest
// when the request is above it. It never refuses.
func (c Config) Clamp(tier, effort string) string {
	top := c.MaxEffort(tier)
	if rank(effort) > rank(top) {
		return top
	}
	return effort
}

// Credits is what one run at effort costs (0 for an unknown effort, which ChargeRun refuses).
func (c Config) Credits(effort string) int64 { return c.CreditsPerEffort[effort] }

// Cents is what one run at effort costs, in the ledger's unit.
func (c Config) Cents(effort string) int64 { return c.Credits(effort) * c.CentsPerCredit }

func rank(effort string) int { return slices.Index(efforts, effort) }

// KnownEffort reports whether effort is one of low, medium, high, build.
func KnownEffort(effort string) bool { return rank(effort) >= 0 }
