package store

import "github.com/go-gormigrate/gormigrate/v2"

// attachmentMigrations are the schema steps of the attachments area, in order. IDs are YYYYMMDDNNNN_attachments_what.
func attachmentMigrations() []*gormigrate.Migration {
	return nil
}
