#!/usr/bin/env bash
# Swagger UI render check (`make docs-check`, which builds bin/researchd first).
#
# Starts bin/researchd on a free loopback port over a throwaway SQLite database, renders /docs in
# headless Chromium (Debian's chromium package) and checks that the rendered page lists every
# operation of openapi/v2.json by its operationId (the UI is configured with displayOperationId) and
# never shows "Failed to load API definition". Needs no internet: the UI assets are embedded in the
# binary (github.com/swaggest/swgui), and Chromium resolves no host but 127.0.0.1, so a page that
# needed a CDN would fail here.
#
# Environment: RESEARCHD (default bin/researchd), CHROMIUM (default: chromium on PATH),
# DOCS_SCREENSHOT=path.png to also save a screenshot of the page.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${RESEARCHD:-bin/researchd}
doc=openapi/v2.json
[ -x "$bin" ] || { echo "docs-check: $bin not found; run make docs-check (it builds it)" >&2; exit 1; }

chromium=${CHROMIUM:-$(command -v chromium || true)}
if [ -z "$chromium" ]; then
  echo "docs-check: installing Debian's chromium" >&2
  apt-get update -qq && apt-get install -y -qq chromium >/dev/null
  chromium=$(command -v chromium)
fi

work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
base="http://127.0.0.1:$port"

# A clean environment for the server: its own SQLite database and data folder, the dev OAuth issuer.
env -u DATABASE_URL -u RESEARCH_OAUTH_ISSUER -u RESEARCH_OAUTH_JWKS_URL -u RESEARCH_BLOB_URL -u RESEARCH_PUBLIC_URL \
  RESEARCH_ADDR="127.0.0.1:$port" RESEARCH_DATA_DIR="$work/data" RESEARCH_ENV=development RESEARCH_LOG_LEVEL=warn RESEARCH_SEARCH_PROVIDER=none \
  "$bin" serve >"$work/server.out" 2>"$work/server.err" &
server_pid=$!

ready=
for _ in $(seq 100); do
  if ! kill -0 "$server_pid" 2>/dev/null; then break; fi
  if curl -fsS "$base/healthz" >/dev/null 2>&1; then ready=1; break; fi
  sleep 0.2
done
if [ -z "$ready" ]; then
  echo "docs-check: researchd did not become healthy at $base" >&2
  cat "$work/server.err" >&2
  exit 1
fi

chrome() {
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --disable-quic \
    --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" \
    --user-data-dir="$(mktemp -d -p "$work")" --virtual-time-budget=5000 "$@" 2>>"$work/chromium.err"
}

if ! chrome --dump-dom "$base/docs" >"$work/dom.html"; then
  echo "docs-check: chromium failed" >&2
  tail -20 "$work/chromium.err" >&2
  exit 1
fi
if [ -n "${DOCS_SCREENSHOT:-}" ]; then
  chrome --screenshot="$DOCS_SCREENSHOT" --window-size=1400,3000 "$base/docs" >/dev/null
  echo "docs-check: screenshot saved to $DOCS_SCREENSHOT"
fi

python3 - "$doc" "$work/dom.html" <<'EOF'
import html, json, re, sys

doc_path, dom_path = sys.argv[1], sys.argv[2]
doc = json.load(open(doc_path))
methods = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
expected = {op["operationId"]: f"{m.upper()} {path}"
            for path, item in doc["paths"].items()
            for m, op in item.items() if m in methods}
dom = open(dom_path, encoding="utf-8").read()

problems = []
if "Failed to load API definition" in dom:
    problems.append('the page says "Failed to load API definition"')
title = doc["info"]["title"]
if html.escape(title, quote=False) not in dom and title not in dom:
    problems.append(f"the document title {title!r} is not on the page")
shown = {html.unescape(m) for m in re.findall(r'opblock-summary-operation-id"[^>]*>([^<]*)<', dom)}
missing = sorted(set(expected) - shown)
for op_id in missing:
    problems.append(f"operation {op_id} ({expected[op_id]}) is not rendered")

found = len(set(expected) & shown)
print(f"docs-check: Swagger UI rendered {found} of {len(expected)} operations of {doc_path}")
if problems:
    for p in problems:
        print("docs-check: FAIL:", p, file=sys.stderr)
    sys.exit(1)
print("docs-check: OK")
EOF
