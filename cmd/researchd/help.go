package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/mail"
	"os"
	"regexp"
	"strings"
)

// Help is answered before the configuration is read or the database opened, so `researchd CMD --help`
// works on a broken setup and never migrates, listens or writes.

const serveHelp = `Usage: researchd [serve]

Runs the HTTP API, the job workers and the loop scheduler until SIGINT or SIGTERM.
With RESEARCH_ENV=development (the default) a fresh database gets an account
dev@localhost whose API key is printed once, after the port is bound.

Main settings (environment; see docs/configuration.md for all):
  RESEARCH_ADDR        listen address (default 127.0.0.1:8080)
  RESEARCH_DATA_DIR    data folder: SQLite database, blobs, keys (default ./data)
  DATABASE_URL         sqlite://PATH or postgres://... (default SQLite in the data folder)
  RESEARCH_ENV         development or production
  RESEARCH_PUBLIC_URL  the base URL clients reach the service at (agent card, links); required
                       in production, default http://RESEARCH_ADDR in development
  RESEARCH_ENGINE      extractive (default; offline is an alias): answers by quoting the sources, no model;
                       or openai (with RESEARCH_MODEL, OPENAI_BASE_URL, OPENAI_API_KEY; for a local
                       model server also RESEARCH_MODEL_CONTEXT and RESEARCH_MODEL_TOOLS)
  RESEARCH_CORPUS_DIR  a local folder of documents every run searches besides its own files
  RESEARCH_LOG_LEVEL   debug, info (default), warn or error; on a terminal the access log and
                       the job queue's statistics show at debug only
  RESEARCH_LOG_FORMAT  auto (default: short text lines on a terminal, else JSON), text or json
  RESEARCH_SEARCH_PROVIDER
                       wikipedia (default: no key, RESEARCH_SEARCH_LANG picks the edition),
                       none (no web search), searxng, brave or tavily: both engines search
                       the web (with RESEARCH_SEARCH_URL, RESEARCH_SEARCH_API_KEY)
`

const migrateHelp = `Usage: researchd migrate

Applies the database migrations (DATABASE_URL) and exits.
`

// subcommandHelp is the help of args[0] (and its subcommand), or "" when the arguments do not ask
// for help. Any -h, -help or --help before "--" asks for it.
func subcommandHelp(cmd string, args []string) string {
	asked := false
	for _, a := range args {
		if a == "--" {
			break
		}
		if isHelpFlag(a) {
			asked = true
			break
		}
	}
	if !asked {
		return ""
	}
	switch cmd {
	case "serve":
		return serveHelp
	case "migrate":
		return migrateHelp
	case "keys":
		fs, _ := keysCreateFlags()
		return flagHelp(fs, "researchd keys create --user EMAIL [flags]",
			"Creates the account when missing and prints a new API key on stdout.\n"+
				"An existing account keeps its tier and admin flag: --tier or --admin that would change\n"+
				"them is refused unless --update-account is given.")
	case "token":
		fs, _ := tokenFlags()
		return flagHelp(fs, "researchd token --user EMAIL [flags]", "Prints an OAuth access token from the development issuer.")
	case "credits":
		fs, _ := creditsGrantFlags()
		return flagHelp(fs, "researchd credits grant --user EMAIL --amount N [flags]", "Deposits credits to an existing account.")
	}
	return ""
}

func isHelpFlag(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

func flagHelp(fs *flag.FlagSet, usage, about string) string {
	return fmt.Sprintf("Usage: %s\n\n%s\n\nFlags:\n%s", usage, about, flagDefaults(fs))
}

// flagDefaults lists a command's flags as they are written on its command line, --flag (Go's flag
// package accepts one dash or two, but prints one).
func flagDefaults(fs *flag.FlagSet) string {
	var b strings.Builder
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(&b, "  --%s", f.Name)
		if kind != "" {
			fmt.Fprintf(&b, " %s", strings.ToUpper(kind))
		}
		fmt.Fprintf(&b, "\n        %s", usage)
		switch f.DefValue {
		case "", "0", "false":
		default:
			fmt.Fprintf(&b, " (default %s)", f.DefValue)
		}
		b.WriteByte('\n')
	})
	return b.String()
}

// singleDash is a flag named with one dash in the flag package's messages ("-admin").
var singleDash = regexp.MustCompile(`(^|[\s"])-([A-Za-z][A-Za-z0-9-]*)`)

// parseFlags parses a command's flags. The flag package prints nothing: a bad flag is one error,
// flags spelled --flag, pointing to the command's --help.
func parseFlags(fs *flag.FlagSet, cmd string, args []string) error {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if err == nil {
		return nil
	}
	if errors.Is(err, flag.ErrHelp) {
		return fmt.Errorf("%s: see researchd %s --help", fs.Name(), cmd)
	}
	return fmt.Errorf("%s: %s (see researchd %s --help)", fs.Name(), singleDash.ReplaceAllString(err.Error(), "$1--$2"), cmd)
}

// checkEmail refuses a --user that is not a bare email address ("Ada <ada@example.com>" is refused too:
// the account is keyed by the address).
func checkEmail(cmd, user string) error {
	if user == "" {
		return fmt.Errorf("%s: --user EMAIL is required", cmd)
	}
	a, err := mail.ParseAddress(user)
	if err != nil || a.Address != user || a.Name != "" {
		return fmt.Errorf("%s: --user %q is not an email address (want e.g. ada@example.com)", cmd, user)
	}
	return nil
}

// checkDataDir makes sure the data folder exists and is writable, so a bad RESEARCH_DATA_DIR fails
// at start with its path rather than later with a driver's message.
func checkDataDir(dir string) error {
	abs := absOr(dir)
	if err := os.MkdirAll(abs, 0o750); err != nil {
		return fmt.Errorf("RESEARCH_DATA_DIR=%s: cannot create the data folder %s: %w", dir, abs, err)
	}
	f, err := os.CreateTemp(abs, ".write-check-*")
	if err != nil {
		return fmt.Errorf("RESEARCH_DATA_DIR=%s: the data folder %s is not writable: %w", dir, abs, err)
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}
