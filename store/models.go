package store

import "time"

// Account is a customer identity: who owns jobs, keys and credits.
type Account struct {
	ID        string    `gorm:"type:varchar(36);primaryKey"`
	Email     string    `gorm:"type:varchar(320);uniqueIndex;not null"`
	Tier      string    `gorm:"type:varchar(16);not null;default:free"`
	IsAdmin   bool      `gorm:"not null;default:false"`
	CreatedAt time.Time `gorm:"not null"`
	UpdatedAt time.Time `gorm:"not null"`
}

// APIKey is an issued key. Only the SHA-256 of the secret is kept.
type APIKey struct {
	ID         string    `gorm:"type:varchar(36);primaryKey"`
	AccountID  string    `gorm:"type:varchar(36);not null;index:idx_api_keys_account_created,priority:1"`
	Label      *string   `gorm:"type:varchar(100)"`
	Prefix     string    `gorm:"type:varchar(8);not null;index"`
	Last4      string    `gorm:"type:varchar(4);not null"`
	Hash       string    `gorm:"type:char(64);not null;uniqueIndex"`
	Scopes     string    `gorm:"type:varchar(200);not null"` // space-separated
	CreatedAt  time.Time `gorm:"not null;index:idx_api_keys_account_created,priority:2"`
	LastUsedAt *time.Time
	RevokedAt  *time.Time
}

// LedgerEntry is one wallet transaction; an account's balance is its newest entry's BalanceAfterCents.
type LedgerEntry struct {
	ID                string    `gorm:"type:varchar(36);primaryKey"`
	AccountID         string    `gorm:"type:varchar(36);not null;index:idx_ledger_account_created,priority:1"`
	Seq               int64     `gorm:"not null"` // per-account sequence; unique with AccountID so two writers cannot both append
	Type              string    `gorm:"type:varchar(16);not null"`
	AmountCents       int64     `gorm:"not null"`
	BalanceAfterCents int64     `gorm:"not null"`
	DepthType         *string   `gorm:"type:varchar(16)"`
	Description       *string   `gorm:"type:varchar(500)"`
	JobID             *string   `gorm:"type:varchar(36);index"`
	CreatedAt         time.Time `gorm:"not null;index:idx_ledger_account_created,priority:2"`
	// Billing (migrate_billing.go): the metered run, and the bonus-credit part of the wallet, which is
	// drawn first. BonusCents is this entry's change to it (callers set it only on refunds: the part of
	// the refunded charge that came from bonus credits); BonusAfterCents is the bonus part of the balance.
	RunID           *string `gorm:"type:varchar(64)"`
	BonusCents      int64   `gorm:"not null;default:0"`
	BonusAfterCents int64   `gorm:"not null;default:0"`
}
