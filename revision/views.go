package revision

import "github.com/researchd/researchd/store"

type (
	// Revision is one published checkpoint of a job: what a read at a revision resolves to.
	Revision = store.ResearchRevision
	// File is one entry of a revision's manifest.
	File = store.ResearchRevisionFile
)
