#!/usr/bin/env bash
# CI for the walk-through: checks that the `$ ` lines of docs/walkthrough.md are exactly the commands
# of scripts/walkthrough.sh, and that the README's first job (its `$ ` lines between the firstjob
# markers) is made of that script's commands, in order; then runs the script against a freshly
# started server (a new data folder, so the development key is printed), failing when any step does
# not answer as the walk-through says. `make walkthrough` runs it (after building bin/researchd).
#
# `scripts/walkthrough-ci.sh --markdown` prints the docs/walkthrough.md section instead (from a real
# run, on a free port: replace the port by 8080 before pasting it between the walkthrough markers).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}

# commands FILE START END: the `$ ` lines between two markers of FILE.
commands() {
  sed -n "/<!-- $2 -->/,/<!-- $3 -->/p" "$1" | sed -n 's/^\$ //p'
}
if [ "$mode" = check ]; then
  echo "-- docs/walkthrough.md commands = scripts/walkthrough.sh --commands"
  if ! diff -u <(scripts/walkthrough.sh --commands) <(commands docs/walkthrough.md walkthrough:start walkthrough:end); then
    echo "docs/walkthrough.md differs from scripts/walkthrough.sh: regenerate the section with" >&2
    echo "  scripts/walkthrough-ci.sh --markdown" >&2
    exit 1
  fi
  echo "-- README first job = commands of scripts/walkthrough.sh, in order"
  first=$(commands README.md firstjob:start firstjob:end)
  [ -n "$first" ] || { echo "README.md has no first job between the firstjob markers" >&2; exit 1; }
  # Each README command must be a later line of the script's commands than the one before it.
  if ! awk 'NR == FNR { script[++n] = $0; next }
            { while (i < n && script[++i] != $0) {} if (script[i] != $0) { print "not in scripts/walkthrough.sh (in order): " $0; bad = 1; exit } }
            END { exit bad }' <(scripts/walkthrough.sh --commands) <(printf '%s\n' "$first") >&2; then
    echo "README.md's first job must use scripts/walkthrough.sh's commands, in order" >&2
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
