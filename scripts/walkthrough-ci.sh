#!/usr/bin/env bash
# CI for the README's walk-through: checks that its `$ ` lines are exactly the commands of
# scripts/walkthrough.sh, then runs that script against a freshly started server (a new data folder,
# so the development key is printed), failing when any step does not answer as the walk-through
# says. `make walkthrough` runs it (after building bin/researchd).
#
# `scripts/walkthrough-ci.sh --markdown` prints the README section instead (from a real run, on a
# free port: replace the port by 8080 before pasting it between the walkthrough markers).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}

readme_commands() {
  sed -n '/<!-- walkthrough:start -->/,/<!-- walkthrough:end -->/p' README.md | sed -n 's/^\$ //p'
}
if [ "$mode" = check ]; then
  echo "-- README walk-through commands = scripts/walkthrough.sh --commands"
  if ! diff -u <(scripts/walkthrough.sh --commands) <(readme_commands); then
    echo "README.md's walk-through differs from scripts/walkthrough.sh: regenerate the section with" >&2
    echo "  scripts/walkthrough-ci.sh --markdown" >&2
    exit 1
  fi
fi

data=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# No web search (the default searches Wikipedia): the walk-through's answers come from its own files
# and must not depend on the network.
RESEARCH_SEARCH_PROVIDER=none RESEARCH_ADDR=127.0.0.1:$port RESEARCH_DATA_DIR=$data ./bin/researchd serve >"$data/stdout" 2>"$data/stderr" &
pid=$!
cleanup() {
  kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$data"
}
trap cleanup EXIT
for _ in $(seq 120); do
  curl -sf "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || { echo "the server did not start:" >&2; cat "$data/stderr" >&2; exit 1; }
  sleep 0.5
done
key=$(grep -oE 'rsk-[A-Za-z0-9_-]{43}' "$data/stdout" | head -1)
[ -n "$key" ] || { echo "the server printed no development key:" >&2; cat "$data/stdout" "$data/stderr" >&2; exit 1; }

if [ "$mode" = --markdown ]; then
  B=http://127.0.0.1:$port KEY=$key RESEARCH_DATA_DIR=$data timeout 600 scripts/walkthrough.sh --markdown
  exit
fi
echo "-- scripts/walkthrough.sh against a fresh server on port $port"
B=http://127.0.0.1:$port KEY=$key RESEARCH_DATA_DIR=$data timeout 600 scripts/walkthrough.sh
echo "-- walk-through ok"
