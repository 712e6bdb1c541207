package store

import "github.com/go-gormigrate/gormigrate/v2"

// jobMigrations are the schema steps of the jobs area, in order. IDs are YYYYMMDDNNNN_jobs_what.
func jobMigrations() []*gormigrate.Migration {
	return nil
}
