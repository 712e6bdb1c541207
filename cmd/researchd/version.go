package main

import (
	"runtime/debug"
	"strings"
)

// version is the release, set when linking: go build -ldflags "-X main.version=v2.1.0". Unset, the
// module version or the commit the binary was built from stands in.
var version string

// buildVersion is what `researchd version` prints and the User-Agent of outgoing requests carries.
func buildVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return "devel"
	}
	return "devel-" + rev[:min(len(rev), 12)] + dirty
}

// userAgent names this build to the services it calls (Wikimedia asks for a name and a contact).
func userAgent() string {
	return "researchd/" + strings.ReplaceAll(buildVersion(), " ", "_") + " (https://github.com/researchd/researchd; self-hosted research service)"
}
