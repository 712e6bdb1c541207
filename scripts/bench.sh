#!/usr/bin/env bash
# HTTP benchmarks of BENCHMARKS.md: POST /research and GET /research/{id} throughput and latency on
# loopback with hey (github.com/rakyll/hey, run through `go run`), against a real `researchd serve`.
#
#   scripts/bench.sh sqlite
#   scripts/bench.sh postgres   # uses a fresh schema in postgres://postgres@127.0.0.1:5432/test
#
# Environment: N_POST (2000), N_GET (5000), CONCURRENCY (16), RESEARCH_WORKERS (4).
set -euo pipefail
cd "$(dirname "$0")/.."
dialect=${1:-sqlite}
N_POST=${N_POST:-2000}
N_GET=${N_GET:-5000}
CONCURRENCY=${CONCURRENCY:-16}
HEY="go run github.com/rakyll/hey@v0.1.4"

go build -o bin/researchd ./cmd/researchd
data=$(mktemp -d)
export RESEARCH_DATA_DIR=$data RESEARCH_ADDR=127.0.0.1:${PORT:-18790} RESEARCH_LOG_LEVEL=warn
# The server is measured, not the network: no web search (the default searches Wikipedia).
export RESEARCH_SEARCH_PROVIDER=${RESEARCH_SEARCH_PROVIDER:-none}
# One client hammering one key: rate limiting stays on (its cost is part of every request) at a
# rate the load never reaches, and the one account may use every worker.
export RESEARCH_RATE_LIMITS=${RESEARCH_RATE_LIMITS:-pro=1000000/m} RESEARCH_ACCOUNT_MAX_RUNS=${RESEARCH_ACCOUNT_MAX_RUNS:-0}
case $dialect in
sqlite) export DATABASE_URL="sqlite://$data/research.db" ;;
postgres)
	schema="bench_$(date +%s)"
	psql -q -h 127.0.0.1 -U postgres -d test -c "CREATE SCHEMA $schema"
	export DATABASE_URL="postgres://postgres@127.0.0.1:5432/test?sslmode=disable&search_path=$schema"
	;;
*) echo "usage: $0 sqlite|postgres" >&2; exit 2 ;;
esac
base="http://$RESEARCH_ADDR/api/v2"

bin/researchd migrate 2>/dev/null
key=$(bin/researchd keys create --user bench@example.com --tier pro --credits 100000 2>/dev/null)
bin/researchd serve >"$data/serve.out" 2>"$data/serve.log" &
pid=$!
cleanup() {
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	if [ "$dialect" = postgres ]; then psql -q -h 127.0.0.1 -U postgres -d test -c "DROP SCHEMA $schema CASCADE"; fi
	rm -rf "$data"
}
trap cleanup EXIT
until curl -fs "http://$RESEARCH_ADDR/healthz" >/dev/null; do sleep 0.1; done

# Waits until no job is queued or in progress (the workers drained what the POSTs enqueued).
drain() {
	for status in queued in_progress; do
		until curl -fs -H "Authorization: Bearer $key" "$base/research?status=$status&limit=1" | grep -q '"items":\[\]'; do sleep 0.5; done
	done
}

echo "== $dialect: POST /research ($N_POST requests, $CONCURRENCY concurrent, effort low; the workers run the jobs meanwhile)"
$HEY -n "$N_POST" -c "$CONCURRENCY" -m POST -T application/json -H "Authorization: Bearer $key" \
	-d '{"question":"What drove the 2024 rise in EU electricity prices?","effort":"low"}' "$base/research"
drain

job=$(curl -fs -X POST -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
	-d '{"question":"Benchmark detail job","effort":"low"}' "$base/research" | sed -E 's/.*"job_id":"([^"]+)".*/\1/')
drain
echo "== $dialect: GET /research/{job_id} ($N_GET requests, $CONCURRENCY concurrent, a completed job)"
$HEY -n "$N_GET" -c "$CONCURRENCY" -H "Authorization: Bearer $key" "$base/research/$job"
