#!/usr/bin/env python3
"""Declares request rate limiting on every rate-limited operation of openapi/v2.json.

Every operation except the Operations-tagged ones (health, readiness, metrics, docs, key sets) gets
the shared 429 `RateLimited` response, and every response the RateLimit-Limit, RateLimit-Remaining
and RateLimit-Reset headers (shared header components). Idempotent: run it again after adding
operations. Usage: scripts/openapi-ratelimit.py [openapi/v2.json]
"""
import json
import sys

PATH = sys.argv[1] if len(sys.argv) > 1 else "openapi/v2.json"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
HEADERS = {
    "RateLimitLimit": ("RateLimit-Limit", "Requests the caller's tightest bucket holds when full (the tier's rate per API key and per account; per client IP for anonymous calls)."),
    "RateLimitRemaining": ("RateLimit-Remaining", "Requests left in that bucket now."),
    "RateLimitReset": ("RateLimit-Reset", "Seconds until that bucket is full again."),
}

with open(PATH, encoding="utf-8") as f:
    original = f.read()
doc = json.loads(original)
comps = doc["components"]
for comp, (_, desc) in HEADERS.items():
    comps.setdefault("headers", {})[comp] = {"description": desc, "schema": {"type": "integer", "minimum": 0}}


def add_headers(resp):
    headers = resp.setdefault("headers", {})
    for comp, (name, _) in HEADERS.items():
        headers[name] = {"$ref": "#/components/headers/" + comp}


NOTE = ("**Rate limits:** every request to an operation other than the Operations ones (health, "
        "metrics, docs) draws a token from its API key's bucket and from its account's bucket, at the "
        "account tier's rate (defaults: free 60, pro 600, enterprise 3000 a minute; the operator sets "
        "`RESEARCH_RATE_LIMITS`); the tighter bucket decides. Anonymous requests draw from their client "
        "IP's bucket (default 60 a minute). Every response carries `RateLimit-Limit`, `RateLimit-Remaining` "
        "and `RateLimit-Reset` (seconds until the bucket is full); over the limit the answer is 429 "
        "`rate_limited` with `Retry-After` (seconds).")
info = doc["info"]
if "**Rate limits:**" not in info["description"]:
    info["description"] += "\n\n" + NOTE

# Shared responses carry the headers wherever they are used (they are absent, not wrong, on the
# unlimited Operations endpoints: no header is required).
for resp in comps["responses"].values():
    add_headers(resp)

for item in doc["paths"].values():
    for method in METHODS:
        op = item.get(method)
        if op is None or "Operations" in op.get("tags", []):
            continue
        responses = op["responses"]
        if "429" not in responses:
            out = {}
            for code, resp in responses.items():
                if code in ("500", "501", "default") and "429" not in out:
                    out["429"] = {"$ref": "#/components/responses/RateLimited"}
                out[code] = resp
            out.setdefault("429", {"$ref": "#/components/responses/RateLimited"})
            op["responses"] = responses = out
        for resp in responses.values():
            if "$ref" not in resp:
                add_headers(resp)

# Keep the document's own formatting (2-space indent, literal UTF-8 except characters it escapes, the
# final newline as it was) so the diff shows only what changed.
text = json.dumps(doc, indent=2, ensure_ascii=False)
for ch in {c for c in text if ord(c) > 127}:
    escaped = "\\u%04x" % ord(ch)
    if escaped in original:
        text = text.replace(ch, escaped)
if original.endswith("\n"):
    text += "\n"
if text != original:
    with open(PATH, "w", encoding="utf-8") as f:
        f.write(text)
