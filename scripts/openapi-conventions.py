#!/usr/bin/env python3
"""Declares the document-wide HTTP conventions on every operation of openapi/v2.json.

- Every operation that takes a request body documents 415 `unsupported_media_type` (a body in a
  media type the operation does not list), except those whose body may be any type (`*/*`) and the
  JSON-RPC endpoint, which answers in JSON-RPC.
- Every response of every operation, and every shared response, declares the `X-Request-Id` header
  (server/observe.go sets it on all of them).

Idempotent: `make generate` runs it (after scripts/openapi-ratelimit.py), so operations added later
get both. Usage: scripts/openapi-conventions.py [openapi/v2.json]
"""
import json
import sys

PATH = sys.argv[1] if len(sys.argv) > 1 else "openapi/v2.json"
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
# Operations whose bodies are not refused by media type (the JSON-RPC endpoint answers a bad body
# with a JSON-RPC error, never a problem).
NO_415 = {"a2aJsonRpc"}

with open(PATH, encoding="utf-8") as f:
    original = f.read()
doc = json.loads(original)
comps = doc["components"]

comps.setdefault("headers", {})["XRequestId"] = {
    "description": "The request's id: the client's own `X-Request-Id` when it sent one of 1-128 visible "
                   "ASCII characters, otherwise a generated UUID. Repeated as `request_id` in problem "
                   "bodies and in the server's logs.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 128},
}
comps["responses"]["UnsupportedMediaType"] = {
    "description": "The body's `Content-Type` is not one this operation accepts (media types match "
                   "case-insensitively: `application/JSON` is JSON). The problem's `detail` lists "
                   "the accepted types.",
    "content": {
        "application/problem+json": {
            "schema": {"$ref": "#/components/schemas/Problem"},
            "example": {
                "type": "https://researchd.dev/problems/unsupported-media-type",
                "title": "Unsupported Media Type",
                "status": 415,
                "detail": "Content-Type \"text/plain\" is not accepted here; send application/json",
                "code": "unsupported_media_type",
            },
        }
    },
}


def with_code(responses, code, value):
    """responses with code inserted in numeric order (before `default`), unless already there."""
    if code in responses:
        return responses
    out, placed = {}, False
    for k, v in responses.items():
        if not placed and (k == "default" or (k[:3].isdigit() and int(k[:3]) > int(code))):
            out[code] = value
            placed = True
        out[k] = v
    if not placed:
        out[code] = value
    return out


def add_request_id(resp):
    resp.setdefault("headers", {})["X-Request-Id"] = {"$ref": "#/components/headers/XRequestId"}


for resp in comps["responses"].values():
    add_request_id(resp)

for item in doc["paths"].values():
    for method in METHODS:
        op = item.get(method)
        if op is None:
            continue
        body = op.get("requestBody")
        ref415 = {"$ref": "#/components/responses/UnsupportedMediaType"}
        if body is not None and "$ref" not in body and op.get("operationId") not in NO_415 \
                and "*/*" not in body.get("content", {}):
            op["responses"] = with_code(op["responses"], "415", ref415)
        elif op["responses"].get("415") == ref415:
            del op["responses"]["415"]  # the operation no longer refuses any media type
        for resp in op["responses"].values():
            if "$ref" not in resp:
                add_request_id(resp)

NOTE = ("**Request ids and media types:** every response carries `X-Request-Id` (the caller's own, "
        "when it sent a usable one). Media types match case-insensitively (`application/JSON` is "
        "JSON); a body in a type the operation does not accept is 415 `unsupported_media_type`.")
info = doc["info"]
if "**Request ids and media types:**" not in info["description"]:
    info["description"] += "\n\n" + NOTE

# Keep the document's own formatting (2-space indent, literal UTF-8 except characters it escapes,
# the final newline as it was) so the diff shows only what changed.
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
