#!/usr/bin/env bash
# scripts/stack.sh up|down — see scripts/stack.ts. After `npm run build` (npm start builds first) the
# compiled launcher runs; without a build, the launcher runs from the sources (and `up` asks for a build).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -f "$ROOT/dist/stack.js" ]; then
  exec node --enable-source-maps "$ROOT/dist/stack.js" "$@"
fi
exec "$ROOT/node_modules/.bin/tsx" "$ROOT/scripts/stack.ts" "$@"
