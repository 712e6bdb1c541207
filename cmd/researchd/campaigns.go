package main

import (
	"log/slog"
	"path/filepath"
	"strconv"

	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/campaign"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/expert"
	"github.com/researchd/researchd/store"
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

// openCampaigns builds the campaign service: workers answer in-process with the engine, built
// deliverables go to the attachments' bucket.
func openCampaigns(cfg config, eng engine.Engine, st *store.Store, bill *billing.Service, att *attachments.Service, experts *expert.Service, log *slog.Logger) (*campaign.Service, error) {
	cc := cfg.Campaigns
	if cfg.Engine == "openai" {
		cc.Capabilities = []string{"file_search", "fetch_url"}
	}
	return campaign.New(campaign.Deps{Store: st, Billing: bill, Experts: experts.Runner(),
		Answerer: engine.Answers(eng, filepath.Join(cfg.DataDir, "campaign-answers")), Bucket: att.Bucket(),
		Logger: log.With("component", "campaigns")}, cc)
}
