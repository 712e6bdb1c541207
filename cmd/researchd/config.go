package main

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/researchd/researchd/a2aserver"
	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/campaign"
	"github.com/researchd/researchd/engine/extractive"
	"github.com/researchd/researchd/mcptool"
	"github.com/researchd/researchd/ratelimit"
	"github.com/researchd/researchd/server"
)

// config is the process configuration, read from the environment (docs/configuration.md).
type config struct {
	Addr          string
	DatabaseURL   string
	DataDir       string
	BlobURL       string
	Env           string
	Engine        string
	OpenAIBaseURL string
	OpenAIAPIKey  string
	Model         string
	OAuthIssuer   string
	OAuthJWKSURL  string
	OAuthAudience string
	PublicURL     string
	PublicURLSet  bool // RESEARCH_PUBLIC_URL was given (not the bind-address default)
	LogLevel      string
	LogFormat     string // RESEARCH_LOG_FORMAT: auto (text on a terminal, else json), text or json
	MaxBodyBytes  int64
	Billing       billing.Config         // RESEARCH_CENTS_PER_CREDIT and RESEARCH_CREDITS_LOW/MEDIUM/HIGH/BUILD
	Attachments   attachments.Config     // RESEARCH_ATTACHMENT_MAX_BYTES, RESEARCH_ATTACHMENT_MAX_REQUEST_BYTES, RESEARCH_UPLOAD_TTL
	Research      researchSettings       // RESEARCH_WORKERS, RESEARCH_JOB_TIMEOUTS, RESEARCH_SECRET_KEY, ... (research.go)
	MCPServers    []mcptool.ServerConfig // RESEARCH_MCP_SERVERS
	// AuthoringRate (RESEARCH_AUTHORING_RATE) bounds plan-preview and generate-workflow per caller;
	// WorkflowAuthoringOff (RESEARCH_WORKFLOW_AUTHORING=off) makes generate-workflow 404.
	AuthoringRate        ratelimit.Rate
	WorkflowAuthoringOff bool
	DevIssuerOK          bool             // RESEARCH_ALLOW_DEV_ISSUER: production may run on the development issuer
	RateLimits           ratelimit.Limits // RESEARCH_RATE_LIMITS
	Campaigns            campaign.Config  // RESEARCH_CAMPAIGN_WORKERS, RESEARCH_CAMPAIGN_CHUNK (campaigns.go)
	A2ALimits            a2aserver.Limits // RESEARCH_A2A_MAX_TASKS, RESEARCH_A2A_MAX_TASKS_PER_ACCOUNT
	MaxStreamsPerAccount int              // RESEARCH_MAX_STREAMS_PER_ACCOUNT
}

func loadConfig(getenv func(string) string) (config, error) {
	get := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	c := config{
		Addr:          get("RESEARCH_ADDR", "127.0.0.1:8080"),
		DataDir:       get("RESEARCH_DATA_DIR", "./data"),
		Env:           get("RESEARCH_ENV", "development"),
		Engine:        get("RESEARCH_ENGINE", extractive.Name),
		OpenAIBaseURL: getenv("OPENAI_BASE_URL"),
		OpenAIAPIKey:  getenv("OPENAI_API_KEY"),
		Model:         getenv("RESEARCH_MODEL"),
		OAuthIssuer:   getenv("RESEARCH_OAUTH_ISSUER"),
		OAuthJWKSURL:  getenv("RESEARCH_OAUTH_JWKS_URL"),
		OAuthAudience: getenv("RESEARCH_OAUTH_AUDIENCE"),
		LogLevel:      get("RESEARCH_LOG_LEVEL", "info"),
		LogFormat:     strings.ToLower(get("RESEARCH_LOG_FORMAT", logFormatAuto)),
	}
	c.DatabaseURL = get("DATABASE_URL", "sqlite://"+filepath.Join(c.DataDir, "research.db"))
	c.BlobURL = get("RESEARCH_BLOB_URL", "file://"+filepath.Join(absOr(c.DataDir), "blobs"))
	c.PublicURL, c.PublicURLSet = get("RESEARCH_PUBLIC_URL", "http://"+c.Addr), getenv("RESEARCH_PUBLIC_URL") != ""
	var err error
	if c.MaxBodyBytes, err = parseInt(get("RESEARCH_MAX_BODY_BYTES", "10485760"), "RESEARCH_MAX_BODY_BYTES"); err != nil {
		return c, err
	}
	if c.Billing, err = billingConfig(get); err != nil {
		return c, err
	}
	if c.Attachments, err = attachmentsConfig(get); err != nil {
		return c, err
	}
	if c.Research, err = researchConfig(get, c.DataDir, c.Env); err != nil {
		return c, err
	}
	if c.Campaigns, err = campaignConfig(get); err != nil {
		return c, err
	}
	if c.A2ALimits, err = a2aLimits(get); err != nil {
		return c, err
	}
	streams, err := parseInt(get("RESEARCH_MAX_STREAMS_PER_ACCOUNT", strconv.Itoa(server.DefaultMaxStreamsPerAccount)), "RESEARCH_MAX_STREAMS_PER_ACCOUNT")
	if err != nil {
		return c, err
	}
	c.MaxStreamsPerAccount = int(streams)
	if c.RateLimits, err = ratelimit.ParseLimits(getenv("RESEARCH_RATE_LIMITS")); err != nil {
		return c, fmt.Errorf("RESEARCH_RATE_LIMITS: %w", err)
	}
	if c.MCPServers, err = mcptool.ParseServers(getenv("RESEARCH_MCP_SERVERS")); err != nil {
		return c, fmt.Errorf("RESEARCH_MCP_SERVERS: %w", err)
	}
	if c.AuthoringRate, err = ratelimit.ParseRate(get("RESEARCH_AUTHORING_RATE", "30/m")); err != nil {
		return c, fmt.Errorf("RESEARCH_AUTHORING_RATE: %w", err)
	}
	switch v := get("RESEARCH_WORKFLOW_AUTHORING", "on"); v {
	case "on", "off":
		c.WorkflowAuthoringOff = v == "off"
	default:
		return c, fmt.Errorf("RESEARCH_WORKFLOW_AUTHORING=%q: want on or off", v)
	}
	switch c.Env {
	case "development", "production":
	default:
		return c, fmt.Errorf("RESEARCH_ENV=%q: want development or production", c.Env)
	}
	if !validLogFormat(c.LogFormat) {
		return c, fmt.Errorf("RESEARCH_LOG_FORMAT=%q: want auto (text on a terminal, else json), text or json", c.LogFormat)
	}
	switch c.Engine {
	case extractive.Name, "openai":
	case "offline": // the extractive engine's former name, still accepted
		c.Engine = extractive.Name
	default:
		return c, fmt.Errorf("RESEARCH_ENGINE=%q: want extractive (alias offline) or openai", c.Engine)
	}
	if (c.OAuthIssuer == "") != (c.OAuthJWKSURL == "") {
		return c, fmt.Errorf("RESEARCH_OAUTH_ISSUER and RESEARCH_OAUTH_JWKS_URL go together")
	}
	if (c.OAuthIssuer == "") != (c.OAuthAudience == "") {
		return c, fmt.Errorf("RESEARCH_OAUTH_AUDIENCE is required with RESEARCH_OAUTH_ISSUER (tokens must name this service in aud) and means nothing without it")
	}
	if v := getenv("RESEARCH_ALLOW_DEV_ISSUER"); v != "" {
		if c.DevIssuerOK, err = strconv.ParseBool(v); err != nil {
			return c, fmt.Errorf("RESEARCH_ALLOW_DEV_ISSUER=%q: want true or false", v)
		}
	}
	return c, nil
}

// checkServe refuses configurations that must not serve. The development issuer's key sits in the
// data folder and `researchd token` mints any identity with it, so production runs on it only when
// the operator says so.
//
// Production also needs RESEARCH_PUBLIC_URL: the default is the bind address, which the agent card,
// upload_url, report_link and the other absolute links would then advertise (often 0.0.0.0 or a
// private address that clients cannot reach). Development keeps the default.
func checkServe(c config) error {
	if c.Env == "production" && c.OAuthIssuer == "" && !c.DevIssuerOK {
		return errors.New("RESEARCH_ENV=production needs an external OAuth issuer: set RESEARCH_OAUTH_ISSUER, RESEARCH_OAUTH_JWKS_URL and RESEARCH_OAUTH_AUDIENCE, or RESEARCH_ALLOW_DEV_ISSUER=true to run on the development issuer")
	}
	if c.Env == "production" && !c.PublicURLSet {
		return fmt.Errorf("RESEARCH_ENV=production needs RESEARCH_PUBLIC_URL, the base URL clients reach this service at (e.g. https://research.example.com): the agent card, upload_url, report_link and other links name it; without it they would name the bind address (RESEARCH_ADDR=%s)", c.Addr)
	}
	if c.PublicURLSet {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("RESEARCH_PUBLIC_URL=%q: want an absolute http or https URL without query or fragment, such as https://research.example.com", c.PublicURL)
		}
	}
	return nil
}

// a2aLimits bounds the A2A tasks one process follows at once, in all and per account.
func a2aLimits(get func(name, def string) string) (a2aserver.Limits, error) {
	total, err := parseInt(get("RESEARCH_A2A_MAX_TASKS", strconv.Itoa(a2aserver.DefaultMaxTasks)), "RESEARCH_A2A_MAX_TASKS")
	if err != nil {
		return a2aserver.Limits{}, err
	}
	perAccount, err := parseInt(get("RESEARCH_A2A_MAX_TASKS_PER_ACCOUNT", strconv.Itoa(a2aserver.DefaultMaxTasksPerAccount)), "RESEARCH_A2A_MAX_TASKS_PER_ACCOUNT")
	if err != nil {
		return a2aserver.Limits{}, err
	}
	return a2aserver.Limits{MaxTasks: int(total), MaxTasksPerAccount: int(perAccount)}, nil
}

func parseInt(v, name string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive integer", name, v)
	}
	return n, nil
}

// billingConfig is the default price list with the credit price and the credits per effort the
// environment overrides.
func billingConfig(get func(name, def string) string) (billing.Config, error) {
	cfg := billing.DefaultConfig()
	var err error
	if cfg.CentsPerCredit, err = parseInt(get("RESEARCH_CENTS_PER_CREDIT", strconv.FormatInt(cfg.CentsPerCredit, 10)), "RESEARCH_CENTS_PER_CREDIT"); err != nil {
		return cfg, err
	}
	for _, effort := range billing.Efforts() {
		name := "RESEARCH_CREDITS_" + strings.ToUpper(effort)
		v := get(name, strconv.FormatInt(cfg.CreditsPerEffort[effort], 10))
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return cfg, fmt.Errorf("%s=%q: want a whole number of credits, 0 or more", name, v)
		}
		cfg.CreditsPerEffort[effort] = n
	}
	return cfg, cfg.Validate()
}

func absOr(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
