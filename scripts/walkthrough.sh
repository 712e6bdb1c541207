#!/usr/bin/env bash
# The walk-through with curl (docs/walkthrough.md), as a script: every `$ ` line of that walk-through is
# a command this script runs, in order, and so is every `$ ` line of the README's first job
# (scripts/walkthrough-ci.sh checks they agree, and CI runs it against a freshly started server, so
# neither can go stale).
#
# Usage, against a running server (`make run` in another terminal):
#   KEY=rsk-... scripts/walkthrough.sh              run it, printing each command and its output
#   KEY=rsk-... scripts/walkthrough.sh --markdown   the same, as docs/walkthrough.md's section (prose and fences)
#   scripts/walkthrough.sh --commands               only list the commands (runs nothing)
# B (default http://127.0.0.1:8080) is the server; ./bin/researchd (which `make run` builds) mints
# the OAuth token, from the same RESEARCH_DATA_DIR as the server.
# Needs curl and jq. Exits non-zero when a step does not answer as the walk-through says.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-run}
case $mode in run | --markdown | --commands) ;; *) echo "usage: $0 [--markdown|--commands]" >&2; exit 2 ;; esac
if [ "$mode" != --commands ]; then
  : "${KEY:?set KEY to the API key make run printed: export KEY=rsk-...}"
  command -v jq >/dev/null || { echo "the walk-through needs jq" >&2; exit 1; }
fi
export KEY=${KEY:-} B=${B:-http://127.0.0.1:8080}
out=""
in_block=false
capture=$(mktemp)
trap 'rm -f "$capture"' EXIT

# say prints a paragraph of prose (markdown mode only).
say() {
  [ "$mode" = --markdown ] || return 0
  end_block
  printf '%s\n\n' "$1"
}

end_block() {
  if $in_block; then
    echo '```'
    echo
    in_block=false
  fi
}

# run prints `$ command`, runs it in this shell (exports persist) and prints its output.
run() {
  local cmd=$1
  if [ "$mode" = --commands ]; then
    printf '%s\n' "$cmd"
    return 0
  fi
  if [ "$mode" = --markdown ] && ! $in_block; then
    echo '```'
    in_block=true
  fi
  printf '$ %s\n' "$cmd"
  # In this shell, not a subshell, so its exports reach the next commands.
  local ok=true
  eval "$cmd" >"$capture" 2>&1 || ok=false
  out=$(cat "$capture")
  [ -z "$out" ] || printf '%s\n' "$out"
  $ok || { echo "walk-through: the command above failed" >&2; exit 1; }
}

# expect fails the walk-through when the last command's output does not match the pattern
# (an extended regular expression): the walk-through's claims are checked, not just run.
expect() {
  [ "$mode" != --commands ] || return 0
  grep -Eq -- "$1" <<<"$out" || { echo "walk-through: expected output matching /$1/" >&2; exit 1; }
}

say "Paste the key \`make run\` printed (\`export KEY=rsk-...\`); the commands below use it and the server's base URL:"
run 'export B=${B:-http://127.0.0.1:8080} W=$(mktemp -d)'

say "**Health.** \`/healthz\` says the process is up; \`/readyz\` also pings the database. \`HEAD\` works on every \`GET\` route, and \`/\` points to the console (\`/console\`, a browser UI on this API; Swagger UI is at \`/docs\`)."
run 'curl -s $B/healthz'
expect '"status":"ok"'
run 'curl -s $B/readyz'
expect '"database":"ok"'
run 'curl -sI $B/api/v2/quota -H "Authorization: Bearer $KEY" | head -1'
expect '200'
run 'curl -s -o /dev/null -w "%{http_code} %{redirect_url}\n" $B/'
expect '^302 .*/console$'

say "**List your API keys.** Only metadata is ever listed: the secret is shown once, at creation."
run 'curl -s $B/api/v2/keys -H "Authorization: Bearer $KEY" | jq -c ".items[] | {label: .label, prefix, scopes}"'
expect '"prefix":"rsk-'

say "**Mint a key with an OAuth token.** \`POST /api/v2/keys\` accepts only an OAuth access token (JWT). \`researchd token\` prints one from the built-in development issuer (it shares the issuer key in the data folder with the running server). The account of the token's identity is created on first use. Omit \`scopes\` and the key inherits the token's scopes exactly."
run 'export TOKEN=$(./bin/researchd token --user you@example.com --scopes research,billing,keys)'
run 'curl -s -X POST $B/api/v2/keys -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" -d '"'"'{"label": "laptop", "scopes": ["research", "keys"]}'"'"' | tee $W/laptop.json | jq "{key_id, label: .label, prefix, scopes}"'
expect '"laptop"'
run 'export LAPTOP_KEY=$(jq -r .key $W/laptop.json) LAPTOP_ID=$(jq -r .key_id $W/laptop.json)'
run 'curl -s -X POST $B/api/v2/keys -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" -d '"'"'{"label": "ci"}'"'"' | tee $W/ci.json | jq -c "{label: .label, scopes}"'
expect '"scopes":\["research","billing","keys"\]'
run 'export CI_KEY=$(jq -r .key $W/ci.json)'

say "A scope the token does not carry is refused, and an API key cannot mint keys:"
run 'curl -s -X POST $B/api/v2/keys -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" -d '"'"'{"scopes": ["admin"]}'"'"' | jq -c "{status, code, detail}"'
expect '"code":"forbidden"'
run 'curl -s -X POST $B/api/v2/keys -H "Authorization: Bearer $KEY" -H "Content-Type: application/json" -d "{}" | jq .code'
expect 'oauth_required'

say "**Page through keys.** Lists are keyset-paged, newest first: pass \`next_cursor\` back as \`cursor\`."
run 'curl -s "$B/api/v2/keys?limit=1" -H "Authorization: Bearer $CI_KEY" | tee $W/page1.json | jq -c "{labels: [.items[].label], has_more}"'
expect '"has_more":true'
run 'curl -s "$B/api/v2/keys?limit=1&cursor=$(jq -r .next_cursor $W/page1.json)" -H "Authorization: Bearer $CI_KEY" | jq -c "{labels: [.items[].label], has_more}"'
expect '"laptop"'

say "**Revoke.** \`DELETE\` is idempotent; a revoked key then gets 401."
run 'curl -s -o /dev/null -w "%{http_code}\n" -X DELETE $B/api/v2/keys/$LAPTOP_ID -H "Authorization: Bearer $CI_KEY"'
expect '^204$'
run 'curl -s -o /dev/null -w "%{http_code}\n" -X DELETE $B/api/v2/keys/$LAPTOP_ID -H "Authorization: Bearer $CI_KEY"'
expect '^204$'
run 'curl -s -i $B/api/v2/keys -H "Authorization: Bearer $LAPTOP_KEY" | grep -Ei "^(HTTP|content-type|www-authenticate)|code"'
expect '401'
expect 'this API key was revoked'

say "**Errors are problem+json.** Every error, from validation to an unknown route, is an RFC 9457 problem with a stable \`code\`; invalid input is 422 with \`errors[]\` naming each bad field. Unknown query parameters and unknown body fields are refused, and a body in a media type the operation does not take is 415:"
run 'curl -s "$B/api/v2/keys?limit=500&sort=asc" -H "Authorization: Bearer $KEY" | jq -c "{status, code, errors}"'
expect 'query.sort'
run 'curl -s -X POST $B/api/v2/keys -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" -d '"'"'{"label": "x", "colour": "blue"}'"'"' | jq -c "{status, code, errors}"'
expect '"colour"'
run 'curl -s -X POST $B/api/v2/research -H "Authorization: Bearer $KEY" -H "Content-Type: text/plain" -d "Why?" | jq -c "{status, code, detail}"'
expect '"unsupported_media_type"'
run 'curl -s $B/api/v2/nope | jq -c "{status, code, detail}"'
expect '"not_found"'

say "**Research jobs: the typical flow.** Upload an input file, start a job with an \`Idempotency-Key\`, wait for it, read the report, its revisions (git commits of the job's workspace), the workspace files and the timeline; cancel and continue:"
run 'printf "Grid operator notes, winter 2024. Wholesale electricity prices in the EU rose in early 2024 because gas-fired plants set the marginal price on most days.\nLow wind output in January raised the share of gas generation.\nCarbon permit prices fell during the same period, which limited the increase.\n" > $W/notes.txt'
run 'curl -s -X POST $B/api/v2/attachments -H "Authorization: Bearer $KEY" -F files=@$W/notes.txt | tee $W/attachment.json | jq -c "{attachment_id, status}"'
expect '"status":"ready"'
run 'curl -s -X POST $B/api/v2/research -H "Authorization: Bearer $KEY" -H "Idempotency-Key: demo-$(date +%s)" -H "Content-Type: application/json" -d "{\"question\": \"Why did EU electricity prices rise in 2024?\", \"effort\": \"medium\", \"attachment_ids\": [$(jq .attachment_id $W/attachment.json)]}" | tee $W/job.json | jq -c "{slug, status, effort}"'
expect '"status":"queued"'
run 'export JOB=$(jq -r .slug $W/job.json)'
run 'while curl -s $B/api/v2/research/$JOB -H "Authorization: Bearer $KEY" | jq -e '"'"'.status == "queued" or .status == "in_progress"'"'"' >/dev/null; do sleep 1; done'
run 'curl -s $B/api/v2/research/$JOB -H "Authorization: Bearer $KEY" | jq -c "{status, credits_charged, runs: [.runs[] | {kind, status}], revisions: [.revisions[].checkpoint_type]}"'
expect '"status":"completed"'
run 'curl -s $B/api/v2/research/$JOB -H "Authorization: Bearer $KEY" | jq -r .report.markdown | head -12'
expect 'EU electricity prices'
run 'curl -s $B/api/v2/research/$JOB/files -H "Authorization: Bearer $KEY" | jq -c ".files[] | {path, size_bytes, content_type}"'
expect 'input_files/notes.txt'
run 'curl -si $B/api/v2/research/$JOB/files/input_files/notes.txt -H "Authorization: Bearer $KEY" | head -4'
expect '200 OK'
run 'curl -s "$B/api/v2/research/$JOB/timeline?limit=3" -H "Authorization: Bearer $KEY" | jq -c ".items[] | {seq, kind, title}"'
expect '"kind":"status"'

say "Cancelling a completed job changes nothing and answers its status; a continuation keeps the id and slug, adds a run and revisions, and is charged as a new run:"
run 'curl -s -X POST $B/api/v2/research/$JOB/cancel -H "Authorization: Bearer $KEY" | jq -c "{slug, status}"'
expect '"status":"completed"'
run 'curl -s -X POST $B/api/v2/research/$JOB/continue -H "Authorization: Bearer $KEY" | jq -c "{status, completed_at}"'
expect '"status":"queued"'
run 'while curl -s $B/api/v2/research/$JOB -H "Authorization: Bearer $KEY" | jq -e '"'"'.status == "queued" or .status == "in_progress"'"'"' >/dev/null; do sleep 1; done'
run 'curl -s $B/api/v2/research/$JOB -H "Authorization: Bearer $KEY" | jq -c "{status, credits_charged, runs: [.runs[] | {kind, status}]}"'
expect '"continuation"'

say "A private job is invisible without the owner's key, and an \`Idempotency-Key\` reused with a different body is refused:"
run 'curl -s $B/api/v2/research/$JOB | jq -c "{status, code}"'
expect '"code":"not_found"'
run 'curl -s -X POST $B/api/v2/research -H "Authorization: Bearer $KEY" -H "Idempotency-Key: reuse-$JOB" -H "Content-Type: application/json" -d "{\"question\": \"First question\"}" | jq -c "{status}"'
run 'curl -s -X POST $B/api/v2/research -H "Authorization: Bearer $KEY" -H "Idempotency-Key: reuse-$JOB" -H "Content-Type: application/json" -d "{\"question\": \"Something else\"}" | jq -c "{status, code}"'
expect 'idempotency_key_reused'

say "**Documentation and metrics.** Swagger UI is at \`\$B/docs\` (its assets are embedded in the binary: it works offline); the document itself at \`/openapi/v2.json\` (and \`/api/v2/openapi.json\`); Prometheus metrics by operation at \`/metrics\`."
run 'curl -s $B/openapi/v2.json | jq -c "{openapi, title: .info.title}"'
expect '"openapi":"3.0.3"'
run 'curl -s -o /dev/null -w "%{http_code} %{content_type}\n" $B/docs'
expect '^200 text/html'
run 'curl -s $B/metrics | grep "^researchd_http_requests_total{.*operation=\"createApiKey\""'
expect 'status="201"'
end_block
