package store

import "github.com/go-gormigrate/gormigrate/v2"

// billingMigrations are the schema steps of the billing area, in order. IDs are YYYYMMDDNNNN_billing_what.
func billingMigrations() []*gormigrate.Migration {
	return nil
}
