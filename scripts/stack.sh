#!/usr/bin/env bash
# scripts/stack.sh up|down — see scripts/stack.ts.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
exec "$ROOT/node_modules/.bin/tsx" "$ROOT/scripts/stack.ts" "$@"
