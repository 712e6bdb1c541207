#!/usr/bin/env bash
# Durability check: start `researchd serve` as a real process, create 50 jobs, kill -9 it while
# they run, start it again and wait: 50 terminal jobs, no run charged twice. The logic is the Go test
# TestKillNineWhileJobsRun (cmd/researchd/crash_test.go); this runs it verbosely on SQLite, and on
# Postgres too when TEST_DATABASE_URL is set, e.g.
#   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable scripts/crash-test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
exec go test -count=1 -v -run 'TestKillNineWhileJobsRun' ./cmd/researchd/
