#!/usr/bin/env bash
# Generates a Go client (oapi-codegen types,client) and a TypeScript client (openapi-typescript types
# for openapi-fetch) from openapi/v2.json and compiles each, with a small program that calls the API
# through it, so a document change that breaks client generation fails CI. `make client-check` runs
# it after installing the pinned npm packages under .tools.
set -euo pipefail
cd "$(dirname "$0")/.."
TOOLS=${TOOLS:-.tools}
# Inside .tools, so the TypeScript compiler finds .tools/node_modules by walking up.
work=$(mktemp -d "$TOOLS/client-check.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "-- Go client (oapi-codegen -generate types,client)"
mkdir -p "$work/go"
go tool oapi-codegen -generate types,client -package client -o "$work/go/client.gen.go" openapi/v2.json
# A module of its own, on the server's dependency versions (no download beyond what the server uses).
sed 's#^module .*#module clientcheck#' go.mod >"$work/go/go.mod"
cp go.sum "$work/go/go.sum"
cat >"$work/go/use.go" <<'GO'
package client

import (
	"context"
	"fmt"
)

// use calls the API the way a program would: a typed request and a typed response.
func use(ctx context.Context) error {
	c, err := NewClientWithResponses("http://127.0.0.1:8080")
	if err != nil {
		return err
	}
	created, err := c.CreateResearchJobWithResponse(ctx, &CreateResearchJobParams{}, CreateResearchJobJSONRequestBody{Question: "Why is the sky blue?"})
	if err != nil {
		return err
	}
	if created.JSON202 == nil {
		return fmt.Errorf("create: %s", created.Status())
	}
	job, err := c.GetResearchJobWithResponse(ctx, created.JSON202.Slug, &GetResearchJobParams{})
	if err != nil {
		return err
	}
	if job.JSON200 != nil {
		fmt.Println(job.JSON200.Status)
	}
	return nil
}

var _ = use
GO
(cd "$work/go" && GOFLAGS=-mod=mod go build ./... && GOFLAGS=-mod=mod go vet ./...)

echo "-- TypeScript client (openapi-typescript + openapi-fetch, tsc --strict)"
mkdir -p "$work/ts"
# A field with a default is optional to send: without the flag, openapi-typescript requires it.
"$TOOLS/node_modules/.bin/openapi-typescript" openapi/v2.json -o "$work/ts/schema.d.ts" --silent --default-non-nullable=false
cat >"$work/ts/use.ts" <<'TS'
import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

type Job = components["schemas"]["ResearchJobDetail"];

const client = createClient<paths>({ baseUrl: "http://127.0.0.1:8080", headers: { Authorization: "Bearer rsk-..." } });

export async function research(question: string): Promise<Job> {
  const created = await client.POST("/api/v2/research", { body: { question, effort: "low" } });
  if (created.error) throw new Error(`${created.error.code}: ${created.error.detail ?? ""}`);
  const job = await client.GET("/api/v2/research/{job_id_or_slug}", {
    params: { path: { job_id_or_slug: created.data.slug } },
  });
  if (job.error) throw new Error(job.error.code);
  return job.data;
}
TS
"$TOOLS/node_modules/.bin/tsc" --strict --noEmit --skipLibCheck false --target es2022 --module esnext \
  --moduleResolution bundler --lib es2022,dom "$work/ts/use.ts" "$work/ts/schema.d.ts"
echo "-- clients compile"
