package main

import (
	"strconv"

	"github.com/researchd/researchd/campaign"
)

// campaignConfig reads RESEARCH_CAMPAIGN_WORKERS (chunks of records one process answers at once)
// and RESEARCH_CAMPAIGN_CHUNK (records per chunk).
func campaignConfig(get func(name, def string) string) (campaign.Config, error) {
	cc := campaign.DefaultConfig()
	var err error
	if cc.Workers, err = positiveInt(get("RESEARCH_CAMPAIGN_WORKERS", strconv.Itoa(cc.Workers)), "RESEARCH_CAMPAIGN_WORKERS"); err != nil {
		return cc, err
	}
	if cc.ChunkSize, err = positiveInt(get("RESEARCH_CAMPAIGN_CHUNK", strconv.Itoa(cc.ChunkSize)), "RESEARCH_CAMPAIGN_CHUNK"); err != nil {
		return cc, err
	}
	return cc, nil
}
