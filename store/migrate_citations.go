package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// citationMigrations record what citation verification found in a job's last completed report:
// citations_total and citations_verified (job detail citations), and structured_output_basis, the
// JSON per-field support of the structured output (citations and confidence).
func citationMigrations() []*gormigrate.Migration {
	type ResearchJob struct {
		CitationsTotal        *int
		CitationsVerified     *int
		StructuredOutputBasis *string `gorm:"type:text"`
	}
	cols := []string{"CitationsTotal", "CitationsVerified", "StructuredOutputBasis"}
	return []*gormigrate.Migration{{
		ID: "202612010101_jobs_citations",
		Migrate: func(tx *gorm.DB) error {
			for _, col := range cols {
				if err := tx.Migrator().AddColumn(&ResearchJob{}, col); err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			for _, col := range cols {
				if err := tx.Migrator().DropColumn(&ResearchJob{}, col); err != nil {
					return err
				}
			}
			return nil
		},
	}}
}
