package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"gocloud.dev/blob"

	"github.com/researchd/researchd/app"
	"github.com/researchd/researchd/batch"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/engine/llm"
	"github.com/researchd/researchd/engine/sources"
	"github.com/researchd/researchd/expertbuild"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/mcptool"
	"github.com/researchd/researchd/netguard"
	"github.com/researchd/researchd/store"
)

// researchSettings are the job queue's environment settings.
type researchSettings struct {
	Jobs      jobs.Config
	SecretKey string // RESEARCH_SECRET_KEY: seals the API keys that sign webhooks and the webhook secrets
	// SecretKeyFile (RESEARCH_SECRET_KEY_FILE) holds that key in a file outside the data folder.
	SecretKeyFile string
	CorpusDir     string // RESEARCH_CORPUS_DIR: a local folder the engines search besides each job's files
	// Prices (RESEARCH_MODEL_PRICES="input=0.15,output=0.60", USD per million tokens) let the openai
	// engine estimate a run's spend and enforce an expert's max_cost_usd; unset, it is not enforced.
	Prices *llm.TokenPrices
	// ModelContext (RESEARCH_MODEL_CONTEXT) is the model's context window in tokens when its server
	// does not report it (the smaller of the two when it does); 0: not set.
	ModelContext int
	// ModelTools (RESEARCH_MODEL_TOOLS) is how the openai engine gives the model its tools: auto
	// (default: learned per model), native, text or retrieve.
	ModelTools string
	// Searcher is the web search provider (RESEARCH_SEARCH_PROVIDER, default wikipedia;
	// RESEARCH_SEARCH_URL, RESEARCH_SEARCH_LANG, RESEARCH_SEARCH_API_KEY); nil for none.
	Searcher sources.Searcher
}

// researchConfig reads RESEARCH_WORKERS, RESEARCH_BACKGROUND_WORKERS, RESEARCH_ACCOUNT_MAX_RUNS, RESEARCH_JOB_TIMEOUTS, RESEARCH_RESCUE_MARGIN,
// RESEARCH_POLL_INTERVAL, RESEARCH_MAX_ATTEMPTS, RESEARCH_SHUTDOWN_GRACE, RESEARCH_SECRET_KEY(_FILE),
// RESEARCH_WEBHOOK_SECRET_GRACE, RESEARCH_CORPUS_DIR, RESEARCH_MODEL_PRICES, RESEARCH_MODEL_CONTEXT, RESEARCH_MODEL_TOOLS
// and the web search provider (RESEARCH_SEARCH_*).
func researchConfig(get func(name, def string) string, dataDir, env string) (researchSettings, error) {
	jc := jobs.DefaultConfig()
	jc.DataDir = dataDir
	jc.Production = env == "production"
	var err error
	if jc.Workers, err = positiveInt(get("RESEARCH_WORKERS", strconv.Itoa(jc.Workers)), "RESEARCH_WORKERS"); err != nil {
		return researchSettings{}, err
	}
	if jc.BackgroundWorkers, err = positiveInt(get("RESEARCH_BACKGROUND_WORKERS", strconv.Itoa(jc.BackgroundWorkers)), "RESEARCH_BACKGROUND_WORKERS"); err != nil {
		return researchSettings{}, err
	}
	if jc.AccountShare, err = strconv.Atoi(get("RESEARCH_ACCOUNT_MAX_RUNS", strconv.Itoa(jc.AccountShare))); err != nil || jc.AccountShare < 0 {
		return researchSettings{}, fmt.Errorf("RESEARCH_ACCOUNT_MAX_RUNS: want 0 (no cap) or a positive number of runs")
	}
	if jc.MaxAttempts, err = positiveInt(get("RESEARCH_MAX_ATTEMPTS", strconv.Itoa(jc.MaxAttempts)), "RESEARCH_MAX_ATTEMPTS"); err != nil {
		return researchSettings{}, err
	}
	if jc.JobTimeouts, err = jobs.ParseTimeouts(get("RESEARCH_JOB_TIMEOUTS", ""), jc.JobTimeouts); err != nil {
		return researchSettings{}, fmt.Errorf("RESEARCH_JOB_TIMEOUTS: %w", err)
	}
	// A killed run resumes after its effort's timeout plus this margin (jobs.Config.RescueDelay).
	if get("RESEARCH_RESCUE_AFTER", "") != "" {
		return researchSettings{}, errors.New("RESEARCH_RESCUE_AFTER is gone: a killed run now resumes after its effort's timeout (RESEARCH_JOB_TIMEOUTS) plus RESEARCH_RESCUE_MARGIN (default 2m)")
	}
	if v := get("RESEARCH_WEBHOOK_SECRET_GRACE", ""); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return researchSettings{}, fmt.Errorf("RESEARCH_WEBHOOK_SECRET_GRACE=%q: want a duration such as 24h (0: a rotated-out secret stops at once)", v)
		}
		jc.WebhookSecretGrace = d
	}
	for name, dst := range map[string]*time.Duration{
		"RESEARCH_RESCUE_MARGIN": &jc.RescueMargin, "RESEARCH_POLL_INTERVAL": &jc.PollInterval, "RESEARCH_SHUTDOWN_GRACE": &jc.ShutdownGrace,
	} {
		if v := get(name, ""); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return researchSettings{}, fmt.Errorf("%s=%q: want a positive duration such as 90s", name, v)
			}
			*dst = d
		}
	}
	if err := jc.Validate(); err != nil {
		return researchSettings{}, fmt.Errorf("job queue settings: %w", err)
	}
	prices, err := llm.ParseTokenPrices(get("RESEARCH_MODEL_PRICES", ""))
	if err != nil {
		return researchSettings{}, fmt.Errorf("RESEARCH_MODEL_PRICES: %w", err)
	}
	modelContext := 0
	if v := get("RESEARCH_MODEL_CONTEXT", ""); v != "" {
		if modelContext, err = strconv.Atoi(v); err != nil || modelContext < 1024 {
			return researchSettings{}, fmt.Errorf("RESEARCH_MODEL_CONTEXT=%q: want the model's context window in tokens, at least 1024 (e.g. 8192)", v)
		}
	}
	modelTools, err := llm.ParseToolMode(get("RESEARCH_MODEL_TOOLS", llm.ToolsAuto))
	if err != nil {
		return researchSettings{}, fmt.Errorf("RESEARCH_MODEL_TOOLS: %w", err)
	}
	// Wikipedia unless told otherwise: a fresh server answers from somewhere (none turns it off).
	searcher, err := sources.NewSearcher(sources.SearchConfig{Provider: get("RESEARCH_SEARCH_PROVIDER", sources.SearchWikipedia),
		URL: get("RESEARCH_SEARCH_URL", ""), Lang: get("RESEARCH_SEARCH_LANG", ""), APIKey: get("RESEARCH_SEARCH_API_KEY", ""), UserAgent: userAgent()})
	if err != nil {
		return researchSettings{}, fmt.Errorf("RESEARCH_SEARCH_PROVIDER: %w", err)
	}
	return researchSettings{Jobs: jc, SecretKey: get("RESEARCH_SECRET_KEY", ""), SecretKeyFile: get("RESEARCH_SECRET_KEY_FILE", ""), CorpusDir: get("RESEARCH_CORPUS_DIR", ""), Prices: prices,
		ModelContext: modelContext, ModelTools: modelTools, Searcher: searcher}, nil
}

func positiveInt(v, name string) (int, error) {
	n, err := parseInt(v, name)
	return int(n), err
}

// newEngine builds the configured research engine (RESEARCH_ENGINE). With a search provider
// (RESEARCH_SEARCH_PROVIDER) either engine searches the web, and fetches pages through the SSRF guard.
// log receives what the openai engine learns about its model server.
func newEngine(cfg config, log *slog.Logger) (engine.Engine, error) {
	switch cfg.Engine {
	case "openai":
		if cfg.Model == "" {
			return nil, errors.New("RESEARCH_ENGINE=openai needs RESEARCH_MODEL")
		}
		return llm.New(llm.Options{BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey, Model: cfg.Model, FetchClient: webFetchClient(),
			Prices: cfg.Research.Prices, Searcher: cfg.Research.Searcher, CorpusDir: cfg.Research.CorpusDir,
			ContextTokens: cfg.Research.ModelContext, ToolMode: cfg.Research.ModelTools, Logger: log})
	}
	opts := extractive.Options{CorpusDir: cfg.Research.CorpusDir}
	if cfg.Research.Searcher != nil {
		opts.Web = sources.NewWebSearcher(cfg.Research.Searcher, webFetchClient(), nil)
	}
	return extractive.New(opts), nil
}

// webFetchClient fetches web pages for the engines: the public internet only, every address
// re-checked at dial time and on each redirect.
func webFetchClient() *http.Client {
	return netguard.NewClient(netguard.Policy{}, 30*time.Second, netguard.WithMaxBodyBytes(5<<20))
}

// loadSealer reads the server secret that seals webhook signing keys (RESEARCH_SECRET_KEY,
// RESEARCH_SECRET_KEY_FILE, else a file in the data folder, created on first start).
func loadSealer(cfg config, log *slog.Logger) (*jobs.Sealer, error) {
	rs := cfg.Research
	sealer, err := jobs.LoadSealer(rs.SecretKey, rs.SecretKeyFile, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	if rs.SecretKey == "" && rs.SecretKeyFile == "" && rs.Jobs.Production {
		log.Warn("the server secret that seals webhook signing keys is a file in the data folder; set RESEARCH_SECRET_KEY_FILE (or RESEARCH_SECRET_KEY) to keep it elsewhere",
			"file", filepath.Join(cfg.DataDir, jobs.SecretFileName))
	}
	return sealer, nil
}

// appConfig is the services' configuration for serve.
func appConfig(cfg config, st *store.Store, log *slog.Logger, eng engine.Engine, bucket *blob.Bucket, sealer *jobs.Sealer) app.Config {
	// The openai engine offers fetch_url; the tool list says so only when it runs.
	builtin := mcptool.BuiltinTools(cfg.Engine == "openai")
	if cfg.Engine == "openai" && cfg.Research.Searcher != nil {
		builtin = mcptool.WithWebSearch(builtin)
	}
	cc := cfg.Campaigns
	if cfg.Engine == "openai" {
		cc.Capabilities = []string{"file_search", "fetch_url"}
	}
	return app.Config{Store: st, Logger: log, Engine: eng, Bucket: bucket, Sealer: sealer,
		Tools: mcptool.Config{Builtin: builtin, Servers: cfg.MCPServers}, ExpertFilesDir: filepath.Join(cfg.DataDir, "experts"),
		Billing: cfg.Billing, Attachments: cfg.Attachments, Jobs: cfg.Research.Jobs, Batches: batch.DefaultConfig(), Campaigns: cc,
		Builds: expertbuild.DefaultConfig()}
}

// stopServices stops the workers gracefully (running jobs get RESEARCH_SHUTDOWN_GRACE to finish,
// then they are cancelled and resume on the next start).
func stopServices(svcs *app.Services, log *slog.Logger) {
	if err := svcs.Stop(context.Background()); err != nil {
		log.Error("stop job workers", "error", err)
	}
}
