#!/usr/bin/env bash
# The campaign scale benchmark of BENCHMARKS.md: one campaign of 100,000 records (one stage, the
# offline engine over engine/extractive/testdata/corpus, an output schema) against a real `researchd serve`,
# from POST /campaigns to `completed`, then the CSV deliverable downloaded and counted. Prints the
# wall time, the records per second and the serve process's peak RSS (VmHWM).
#
#   scripts/campaign-bench.sh sqlite
#   scripts/campaign-bench.sh postgres   # a fresh schema in postgres://postgres@127.0.0.1:5432/researchd_test
#
# Environment: RECORDS (100000), EFFORT (medium), RESEARCH_CAMPAIGN_WORKERS (2), RESEARCH_CAMPAIGN_CHUNK (100).
set -euo pipefail
cd "$(dirname "$0")/.."
dialect=${1:-sqlite}
RECORDS=${RECORDS:-100000}
EFFORT=${EFFORT:-medium}

go build -o bin/researchd ./cmd/researchd
data=$(mktemp -d)
export RESEARCH_DATA_DIR=$data RESEARCH_ADDR=127.0.0.1:${PORT:-18791} RESEARCH_LOG_LEVEL=warn
export RESEARCH_CORPUS_DIR=$PWD/engine/extractive/testdata/corpus RESEARCH_RATE_LIMITS=off
# The corpus only, no web search (the default searches Wikipedia).
export RESEARCH_SEARCH_PROVIDER=${RESEARCH_SEARCH_PROVIDER:-none}
case $dialect in
sqlite) export DATABASE_URL="sqlite://$data/research.db" ;;
postgres)
	schema="cbench_$(date +%s)"
	psql -q -h 127.0.0.1 -U postgres -d researchd_test -c "CREATE SCHEMA $schema"
	export DATABASE_URL="postgres://postgres@127.0.0.1:5432/researchd_test?sslmode=disable&search_path=$schema"
	;;
*) echo "usage: $0 sqlite|postgres" >&2; exit 2 ;;
esac
base="http://$RESEARCH_ADDR/api/v2"

bin/researchd migrate 2>/dev/null
key=$(bin/researchd keys create --user bench@example.com --tier enterprise --credits $((RECORDS * 2)) 2>/dev/null)
bin/researchd serve >"$data/serve.out" 2>"$data/serve.log" &
pid=$!
cleanup() {
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	if [ "$dialect" = postgres ]; then psql -q -h 127.0.0.1 -U postgres -d researchd_test -c "DROP SCHEMA $schema CASCADE"; fi
	rm -rf "$data"
}
trap cleanup EXIT
until curl -fs "http://$RESEARCH_ADDR/healthz" >/dev/null; do sleep 0.1; done

python3 - "$RECORDS" "$EFFORT" >"$data/body.json" <<'EOF'
import json, sys
n, effort = int(sys.argv[1]), sys.argv[2]
topics = ["electricity prices", "heat pumps", "solar power", "wind power", "grid storage"]
print(json.dumps({
    "name": f"Scale benchmark ({n} records)",
    "instruction": "What does the evidence say about this topic, and which figure matters most?",
    "records": [{"region": f"Region {i:06d}", "topic": topics[i % len(topics)]} for i in range(1, n + 1)],
    "output_schema": {"type": "object", "properties": {"summary": {"type": "string"}, "figure": {"type": "number"}}},
    "effort": effort, "concurrency": 20, "start": True,
}))
EOF
echo "== $dialect: $RECORDS records, effort $EFFORT, body $(stat -c %s "$data/body.json") bytes"
start=$(date +%s.%N)
id=$(curl -fs -X POST -H "Authorization: Bearer $key" -H 'Content-Type: application/json' --data-binary "@$data/body.json" "$base/campaigns" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["campaign_id"])')
created=$(date +%s.%N)
echo "created $id in $(python3 -c "print(round($created - $start, 1))") s"
while :; do
	status=$(curl -fs -H "Authorization: Bearer $key" "$base/campaigns/$id" |
		python3 -c 'import json,sys; d=json.load(sys.stdin); s=d["stages"][0]; print(d["status"], s["records_done"], s["records_failed"], s["records_total"])')
	case $status in completed*) break ;; needs_attention* | cancelled*) echo "stopped: $status" >&2; exit 1 ;; esac
	sleep 2
done
end=$(date +%s.%N)
echo "completed: $status (done failed total)"
python3 -c "t=$end-$start; print(f'wall time {t:.1f} s, {$RECORDS/t:.0f} records/s')"
curl -fs -H "Authorization: Bearer $key" "$base/campaigns/$id/deliverables/results" -o "$data/results.csv"
echo "results.csv: $(stat -c %s "$data/results.csv") bytes, $(python3 -c "import csv,sys; print(sum(1 for _ in csv.reader(open(sys.argv[1]))) - 1)" "$data/results.csv") rows"
grep -E '^VmHWM' "/proc/$pid/status" | sed 's/^VmHWM:/peak RSS (VmHWM):/'
# CPU the serve process used (user + system), and how loaded the machine was meanwhile.
awk -v hz="$(getconf CLK_TCK)" '{printf "serve CPU time: %.1f s user, %.1f s system\n", $14/hz, $15/hz}' "/proc/$pid/stat"
uptime
