// Command researchd serves the Research Service API v2 and administers its database.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/researchd/researchd/accounts"
	"github.com/researchd/researchd/app"
	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/authoring"
	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/engine/sources"
	"github.com/researchd/researchd/loop"
	"github.com/researchd/researchd/server"
	"github.com/researchd/researchd/store"
)

const usage = `researchd: the Research Service API v2

Usage:
  researchd [serve]                         run the HTTP API, job workers and loop scheduler
  researchd migrate                         apply database migrations and exit
  researchd keys create --user EMAIL [--admin] [--tier free|pro|enterprise] [--credits N] [--label L] [--scopes a,b]
                        [--update-account]  create the account if missing and print a new API key
  researchd token --user EMAIL [--scopes a,b] [--ttl 1h]
                                            print an OAuth access token from the development issuer
  researchd credits grant --user EMAIL --amount N [--description D]
                                            deposit N credits
  researchd version                         print the version (also --version)

Configuration is read from the environment; see docs/configuration.md.
"researchd COMMAND --help" describes one command.
`

func main() {
	if err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "researchd:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 {
		if args[0] == "help" || isHelpFlag(args[0]) {
			fmt.Fprint(stdout, usage)
			return nil
		}
		if args[0] == "version" || args[0] == "--version" || args[0] == "-version" {
			fmt.Fprintln(stdout, "researchd", buildVersion())
			return nil
		}
		cmd, args = args[0], args[1:]
	}
	if help := subcommandHelp(cmd, args); help != "" {
		fmt.Fprint(stdout, help)
		return nil
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	log := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	if (cmd == "serve" || cmd == "migrate") && len(args) > 0 {
		return fmt.Errorf("%s takes no arguments (configuration is read from the environment; see researchd %s --help)", cmd, cmd)
	}
	switch cmd {
	case "serve":
		return serve(ctx, cfg, log, stdout)
	case "migrate":
		return withStore(ctx, cfg, func(st *store.Store) error {
			fmt.Fprintln(stderr, "migrations applied")
			return nil
		})
	case "keys":
		if len(args) == 0 || args[0] != "create" {
			return errors.New("usage: researchd keys create --user EMAIL [flags]")
		}
		return keysCreate(ctx, cfg, args[1:], stdout, stderr)
	case "token":
		return token(cfg, args, stdout, stderr)
	case "credits":
		if len(args) == 0 || args[0] != "grant" {
			return errors.New("usage: researchd credits grant --user EMAIL --amount N")
		}
		return creditsGrant(ctx, cfg, args[1:], stderr)
	default:
		return fmt.Errorf("unknown command %q\n\n%s", cmd, usage)
	}
}

// withStore opens and migrates the database, runs fn and closes it.
func withStore(ctx context.Context, cfg config, fn func(*store.Store) error) error {
	st, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return err
	}
	return fn(st)
}

func serve(ctx context.Context, cfg config, log *slog.Logger, stdout io.Writer) error {
	if err := checkServe(cfg); err != nil {
		return err
	}
	if err := checkDataDir(cfg.DataDir); err != nil {
		return err
	}
	// Bind first: a busy port fails before any migration or write, and the log can name the bound
	// address (RESEARCH_ADDR may say port 0).
	ln, err := listen(cfg.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if _, port, _ := net.SplitHostPort(cfg.Addr); port == "0" && cfg.PublicURL == "http://"+cfg.Addr {
		cfg.PublicURL = "http://" + ln.Addr().String() // the default public URL names the port bound
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logEngine(log, cfg)
	return withStore(ctx, cfg, func(st *store.Store) error {
		verifier, dev, err := oauthVerifier(ctx, cfg)
		if err != nil {
			return err
		}
		bucket, err := attachments.OpenBucket(ctx, cfg.BlobURL)
		if err != nil {
			return err
		}
		defer func() { _ = bucket.Close() }()
		eng, err := newEngine(cfg, log.With("component", "engine"))
		if err != nil {
			return err
		}
		sealer, err := loadSealer(cfg, log)
		if err != nil {
			return err
		}
		svcs, err := app.Build(appConfig(cfg, st, log, eng, bucket, sealer))
		if err != nil {
			return err
		}
		// With a chat model, the expert authoring endpoints draft with it (the openai engine).
		model, _ := eng.(authoring.Model)
		handler, err := server.New(server.Config{Database: st, Logger: log, OAuth: verifier, DevIssuer: dev, MaxBodyBytes: cfg.MaxBodyBytes,
			PublicURL: cfg.PublicURL, AuthoringRate: cfg.AuthoringRate, WorkflowAuthoringOff: cfg.WorkflowAuthoringOff,
			RateLimits: &cfg.RateLimits, AuthoringModel: model, A2ALimits: cfg.A2ALimits, MaxStreamsPerAccount: cfg.MaxStreamsPerAccount,
			Accounts: svcs.Accounts, Limiter: svcs.Limiter, A2ATasks: svcs.A2ATasks,
			Billing: svcs.Billing, Attachments: svcs.Attachments, Research: svcs.Research, Experts: svcs.Experts, Skills: svcs.Skills,
			Tools: svcs.Tools, Batches: svcs.Batches, Builds: svcs.Builds, Campaigns: svcs.Campaigns, Loops: svcs.Loops})
		if err != nil {
			return err
		}
		// Workers start with serve and stop after the HTTP server on SIGTERM (see below).
		if err := svcs.Start(context.WithoutCancel(ctx)); err != nil {
			return err
		}
		defer stopServices(svcs, log)
		// Loops fire from every process; the claim on next_run_at makes each firing happen once.
		timer, err := loop.NewTimer(svcs.Loops)
		if err != nil {
			return err
		}
		if err := timer.Start(context.WithoutCancel(ctx)); err != nil {
			return err
		}
		defer func() {
			if err := timer.Stop(); err != nil {
				log.Warn("stop loop timer", "err", err)
			}
		}()
		srv := &http.Server{
			Addr: cfg.Addr, Handler: handler,
			ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 5 * time.Minute, WriteTimeout: 20 * time.Minute, IdleTimeout: 2 * time.Minute,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		}
		// Last before serving: the key is printed once, so only a start that gets this far may create it.
		if cfg.Env == "development" {
			if err := bootstrapDevAccount(ctx, st, cfg, stdout); err != nil {
				return err
			}
		}
		errc := make(chan error, 1)
		go func() { errc <- srv.Serve(ln) }()
		log.Info("researchd listening", "addr", ln.Addr().String(), "database", string(st.Dialect()), "docs", cfg.PublicURL+"/docs")
		warnIfExposed(log, cfg.Env, ln.Addr())
		select {
		case err := <-errc:
			return fmt.Errorf("listen: %w", err)
		case <-ctx.Done():
		}
		log.Info("shutting down")
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Shutdown(shutdownCtx); err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
		return nil
	})
}

// listen binds RESEARCH_ADDR, naming the setting when the port is taken.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("RESEARCH_ADDR=%s: the port is already in use (another researchd?); stop that process or set RESEARCH_ADDR to a free address, e.g. 127.0.0.1:8081", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("RESEARCH_ADDR=%s: listen: %w", addr, err)
	}
	return ln, nil
}

// openAIDefaultEndpoint is where the OpenAI SDK sends requests when no base URL is set.
const openAIDefaultEndpoint = "https://api.openai.com/v1"

// logEngine says which engine runs and whether it searches the web, and which model endpoint the
// openai engine will send questions to, since an unset OPENAI_BASE_URL means the public OpenAI API.
func logEngine(log *slog.Logger, cfg config) {
	search := sources.SearchNone
	if s := cfg.Research.Searcher; s != nil {
		search = s.Provider()
	}
	if cfg.Engine != "openai" {
		log.Info("RESEARCH_ENGINE="+cfg.Engine, "web_search", search, "corpus_dir", cfg.Research.CorpusDir)
		return
	}
	if cfg.OpenAIBaseURL == "" {
		log.Warn("RESEARCH_ENGINE=openai without OPENAI_BASE_URL: questions go to the OpenAI API at "+openAIDefaultEndpoint+
			"; set OPENAI_BASE_URL for another OpenAI-compatible endpoint (e.g. http://127.0.0.1:11434/v1)", "endpoint", openAIDefaultEndpoint, "model", cfg.Model)
		return
	}
	log.Info("RESEARCH_ENGINE=openai", "endpoint", cfg.OpenAIBaseURL, "model", cfg.Model, "web_search", search)
}

// warnIfExposed warns when development settings listen beyond this machine: development prints an
// admin key at first start, runs the development issuer whose key sits in the data folder, and allows
// http and private webhook targets.
func warnIfExposed(log *slog.Logger, env string, addr net.Addr) {
	tcp, ok := addr.(*net.TCPAddr)
	if env != "development" || (ok && tcp.IP.IsLoopback()) {
		return
	}
	log.Warn("RESEARCH_ENV=development listens on a non-loopback address: development settings (the development OAuth issuer, "+
		"a bootstrap admin key, http and private webhook targets) are reachable from other machines; "+
		"set RESEARCH_ADDR=127.0.0.1:PORT, or RESEARCH_ENV=production for a deployment", "addr", addr.String())
}

// oauthVerifier picks the external issuer when configured, else the development issuer.
func oauthVerifier(ctx context.Context, cfg config) (auth.Verifier, *auth.DevIssuer, error) {
	if cfg.OAuthJWKSURL != "" {
		v, err := auth.NewJWKSVerifier(ctx, cfg.OAuthIssuer, cfg.OAuthAudience, cfg.OAuthJWKSURL)
		return v, nil, err
	}
	dev, err := auth.LoadDevIssuer(cfg.DataDir)
	if err != nil {
		return nil, nil, err
	}
	return dev, dev, nil
}

// bootstrapDevAccount gives a fresh development database one account and prints its key once.
func bootstrapDevAccount(ctx context.Context, st *store.Store, cfg config, stdout io.Writer) error {
	n, err := st.CountAccounts(ctx)
	if err != nil || n > 0 {
		return err
	}
	const email = "dev@localhost"
	// One transaction: an account without its key would never be bootstrapped again.
	var secret string
	err = st.InTx(ctx, func(tx *store.Store) error {
		acct, err := createAccount(ctx, tx, email, store.TierEnterprise, true, 1000, cfg.Billing)
		if err != nil {
			return err
		}
		_, secret, err = accounts.New(tx, accounts.Options{}).CreateKey(ctx, acct.ID, ptr("development"), auth.AllScopes)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\nCreated development account %s (enterprise, admin, 1000 credits).\nIts API key, shown this once:\n\n    %s\n\nTry: curl -H 'Authorization: Bearer %s' %s/api/v2/keys\nConsole: %s/console (sign in with the key)\nDocs: %s/docs\n\n",
		email, secret, secret, cfg.PublicURL, cfg.PublicURL, cfg.PublicURL)
	return nil
}

func createAccount(ctx context.Context, st *store.Store, email, tier string, admin bool, credits int64, prices billing.Config) (store.Account, error) {
	acct, created, err := st.EnsureAccount(ctx, email, tier, admin)
	if err != nil {
		return acct, err
	}
	if !created && (acct.Tier != tier || acct.IsAdmin != admin) {
		if err := st.UpdateAccount(ctx, acct.ID, tier, admin); err != nil {
			return acct, err
		}
		acct.Tier, acct.IsAdmin = tier, admin
	}
	if credits > 0 {
		if _, err := billing.New(st, prices).Grant(ctx, st, acct.ID, credits, ""); err != nil {
			return acct, err
		}
	}
	return acct, nil
}

type keysCreateOpts struct {
	user, tier, label, scopes string
	admin, updateAccount      bool
	credits                   int64
}

func keysCreateFlags() (*flag.FlagSet, *keysCreateOpts) {
	o := &keysCreateOpts{}
	fs := flag.NewFlagSet("keys create", flag.ContinueOnError)
	fs.StringVar(&o.user, "user", "", "account `EMAIL` (created when missing)")
	fs.BoolVar(&o.admin, "admin", false, "make a new account a service administrator")
	fs.StringVar(&o.tier, "tier", store.TierFree, "a new account's `TIER`: free, pro or enterprise")
	fs.Int64Var(&o.credits, "credits", 0, "`N` credits to deposit")
	fs.StringVar(&o.label, "label", "", "a `LABEL` for the key")
	fs.StringVar(&o.scopes, "scopes", strings.Join(auth.AllScopes, ","), "comma-separated `SCOPES`")
	fs.BoolVar(&o.updateAccount, "update-account", false, "let --tier and --admin change an existing account")
	return fs, o
}

func keysCreate(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	fs, o := keysCreateFlags()
	if err := parseFlags(fs, "keys", args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	user, admin, tier, credits, label, scopes := &o.user, &o.admin, &o.tier, &o.credits, &o.label, &o.scopes
	if err := checkEmail("keys create", *user); err != nil {
		return err
	}
	if *tier != store.TierFree && *tier != store.TierPro && *tier != store.TierEnterprise {
		return fmt.Errorf("keys create: --tier %q: want free, pro or enterprise", *tier)
	}
	if *credits < 0 {
		return errors.New("keys create: --credits must not be negative")
	}
	if utf8.RuneCountInString(*label) > 100 {
		return errors.New("keys create: --label must be at most 100 characters (as POST /keys allows)")
	}
	sc, err := parseScopes(*scopes)
	if err != nil {
		return err
	}
	var lbl *string
	if *label != "" {
		lbl = label
	}
	return withStore(ctx, cfg, func(st *store.Store) error {
		// One transaction: a failed key must not leave the credits deposited, or a retry grants twice.
		var acct store.Account
		var k accounts.Key
		var secret string
		err := st.InTx(ctx, func(tx *store.Store) error {
			tier, admin := *tier, *admin
			existing, err := tx.AccountByEmail(ctx, *user)
			switch {
			case errors.Is(err, store.ErrNotFound):
			case err != nil:
				return err
			default:
				if tier, admin, err = keepAccount(existing, tier, admin, set["tier"], set["admin"], o.updateAccount); err != nil {
					return err
				}
			}
			if acct, err = createAccount(ctx, tx, *user, tier, admin, *credits, cfg.Billing); err != nil {
				return err
			}
			k, secret, err = accounts.New(tx, accounts.Options{}).CreateKey(ctx, acct.ID, lbl, sc)
			return err
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "key %s for %s (tier %s, scopes %s)\n", k.ID, acct.Email, acct.Tier, strings.Join(sc, ","))
		fmt.Fprintln(stdout, secret)
		return nil
	})
}

// keepAccount is the tier and admin flag an existing account ends with: its own, unless --tier or
// --admin asks for a change and --update-account allows it. A key for an existing user must not
// quietly demote a pro account to the --tier default.
func keepAccount(a store.Account, tier string, admin, tierSet, adminSet, update bool) (string, bool, error) {
	if !tierSet {
		tier = a.Tier
	}
	if !adminSet {
		admin = a.IsAdmin
	}
	if (tier != a.Tier || admin != a.IsAdmin) && !update {
		return "", false, fmt.Errorf("keys create: account %s exists (tier %s, admin %t); --tier/--admin would change it to tier %s, admin %t: "+
			"add --update-account to change it, or leave those flags out to keep it", a.Email, a.Tier, a.IsAdmin, tier, admin)
	}
	return tier, admin, nil
}

type tokenOpts struct {
	user, scopes string
	ttl          time.Duration
}

func tokenFlags() (*flag.FlagSet, *tokenOpts) {
	o := &tokenOpts{}
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	fs.StringVar(&o.user, "user", "", "the token's identity (`EMAIL`)")
	fs.StringVar(&o.scopes, "scopes", strings.Join(auth.AllScopes, ","), "comma-separated `SCOPES`")
	fs.DurationVar(&o.ttl, "ttl", time.Hour, "how long the token is valid (a `DURATION` such as 30m)")
	return fs, o
}

func token(cfg config, args []string, stdout, stderr io.Writer) error {
	fs, o := tokenFlags()
	if err := parseFlags(fs, "token", args); err != nil {
		return err
	}
	user, scopes, ttl := &o.user, &o.scopes, &o.ttl
	if err := checkEmail("token", *user); err != nil {
		return err
	}
	if cfg.OAuthJWKSURL != "" {
		return errors.New("token: an external OAuth issuer is configured; get tokens from it")
	}
	sc, err := parseScopes(*scopes)
	if err != nil {
		return err
	}
	dev, err := auth.LoadDevIssuer(cfg.DataDir)
	if err != nil {
		return err
	}
	t, err := dev.Mint(*user, sc, *ttl)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, t)
	return nil
}

type creditsGrantOpts struct {
	user, desc string
	amount     int64
}

func creditsGrantFlags() (*flag.FlagSet, *creditsGrantOpts) {
	o := &creditsGrantOpts{}
	fs := flag.NewFlagSet("credits grant", flag.ContinueOnError)
	fs.StringVar(&o.user, "user", "", "account `EMAIL`")
	fs.Int64Var(&o.amount, "amount", 0, "`N` credits to deposit")
	fs.StringVar(&o.desc, "description", "", "`TEXT` describing the transaction")
	return fs, o
}

func creditsGrant(ctx context.Context, cfg config, args []string, stderr io.Writer) error {
	fs, o := creditsGrantFlags()
	if err := parseFlags(fs, "credits", args); err != nil {
		return err
	}
	user, amount, desc := &o.user, &o.amount, &o.desc
	if *user != "" {
		if err := checkEmail("credits grant", *user); err != nil {
			return err
		}
	}
	if *user == "" || *amount <= 0 {
		return errors.New("credits grant: --user EMAIL and a positive --amount N are required")
	}
	return withStore(ctx, cfg, func(st *store.Store) error {
		acct, err := st.AccountByEmail(ctx, *user)
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("credits grant: no account %s (create it with keys create)", *user)
		}
		if err != nil {
			return err
		}
		e, err := billing.New(st, cfg.Billing).Grant(ctx, nil, acct.ID, *amount, *desc)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "deposited %d credits to %s; balance %d cents\n", *amount, acct.Email, e.BalanceAfterCents)
		return nil
	})
}

func parseScopes(csv string) ([]string, error) {
	var out []string
	for _, s := range strings.Split(csv, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(auth.AllScopes, s) {
			return nil, fmt.Errorf("unknown scope %q (known: %s)", s, strings.Join(auth.AllScopes, ", "))
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, errors.New("at least one scope is required")
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }
