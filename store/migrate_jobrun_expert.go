package store

import (
	"github.com/go-gormigrate/gormigrate/v2"
	"gorm.io/gorm"
)

// jobRunExpertMigrations are the schema steps that record which expert a job ran as, in order.
// IDs are YYYYMMDDNNNN_jobs_what.
func jobRunExpertMigrations() []*gormigrate.Migration {
	return []*gormigrate.Migration{{
		ID: "202611250101_jobs_expert_run",
		Migrate: func(tx *gorm.DB) error {
			// expert_ref is the canonical id (registry id or UUID) expert_id resolved to at create;
			// expert_version the version the last run used (NULL for unversioned registry experts);
			// required_tool_calls the JSON outcome of the last run's required-tool monitor.
			type ResearchJob struct {
				ExpertRef         *string `gorm:"type:varchar(255)"`
				ExpertVersion     *int
				RequiredToolCalls *string `gorm:"type:text"`
			}
			for _, col := range []string{"ExpertRef", "ExpertVersion", "RequiredToolCalls"} {
				if err := tx.Migrator().AddColumn(&ResearchJob{}, col); err != nil {
					return err
				}
			}
			return nil
		},
		Rollback: func(tx *gorm.DB) error {
			type ResearchJob struct {
				ExpertRef         *string
				ExpertVersion     *int
				RequiredToolCalls *string
			}
			for _, col := range []string{"RequiredToolCalls", "ExpertVersion", "ExpertRef"} {
				if err := tx.Migrator().DropColumn(&ResearchJob{}, col); err != nil {
					return err
				}
			}
			return nil
		},
	}}
}
