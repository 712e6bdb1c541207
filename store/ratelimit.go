package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"
)

// RateBucket is a token bucket shared by every process over the database.
type RateBucket struct {
	BucketKey string `gorm:"primaryKey"`
	Tokens    float64
	UpdatedAt time.Time
}

// TakeToken refills the bucket key (capacity tokens, perSecond refill) up to now and takes one
// token when there is one. It answers whether a token was taken and the tokens left after it.
// The row is locked for the update, so concurrent takers across processes never share a token.
func (s *Store) TakeToken(ctx context.Context, key string, capacity, perSecond float64, now time.Time) (taken bool, left float64, err error) {
	err = s.InTx(ctx, func(tx *Store) error {
		db := tx.with(ctx)
		if err := db.Clauses(clause.OnConflict{DoNothing: true}).
			Create(&RateBucket{BucketKey: key, Tokens: capacity, UpdatedAt: now}).Error; err != nil {
			return fmt.Errorf("create rate bucket: %w", err)
		}
		q := db
		if tx.dialect == Postgres {
			q = q.Clauses(clause.Locking{Strength: "UPDATE"})
		}
		var b RateBucket
		if err := q.Where("bucket_key = ?", key).Take(&b).Error; err != nil {
			return fmt.Errorf("read rate bucket: %w", err)
		}
		elapsed := max(now.Sub(b.UpdatedAt).Seconds(), 0)
		left = min(capacity, b.Tokens+elapsed*perSecond)
		if taken = left >= 1; taken {
			left--
		}
		return db.Model(&RateBucket{}).Where("bucket_key = ?", key).
			Updates(map[string]any{"tokens": left, "updated_at": now}).Error
	})
	if err != nil {
		return false, 0, fmt.Errorf("rate limit %s: %w", key, err)
	}
	return taken, left, nil
}
