#!/usr/bin/env bash
# Type-checks the generated TypeScript declarations (ts/*.gen.ts) and ts/fixtures.ts, which assigns
# conformance fixtures to the declared types (issue 3, cross-check b). TypeScript is the exact
# version pinned in package.json / package-lock.json. Needs node and npm; CI calls this script.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
npx tsc --noEmit -p .
