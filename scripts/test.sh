#!/usr/bin/env bash
# npm test after its setup: the type check, lint and the runner's pytest side by side (each mostly one core;
# together they take about as long as the slowest), then vitest, whose integration and e2e files need the
# machine to themselves. Every part runs to its end; the exit code is the first failure's. Each part's output
# is printed whole, in order, once it is done; the last line adds up the tests: "tests: N passed, N failed".
# Every part is printed through scripts/log-guard.mjs: a line shaped like a test runner's closing summary is
# kept only where it is that part's own runner's (the runner's pytest, vitest), since CI log readers take
# such lines for the run's verdict.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# The tests' Spark JVMs start lighter (test/spark-conf/spark-defaults.conf says how and why).
export SPARK_CONF_DIR="${SPARK_CONF_DIR:-$ROOT/test/spark-conf}"

run() { # name command...: runs in the background, output and exit code into $out/<name>.{log,rc}
  local name="$1"
  shift
  ( "$@" >"$out/$name.log" 2>&1; echo $? >"$out/$name.rc" ) &
}
run typecheck npm run typecheck
run lint npm run lint
run runner npm run test:runner
wait

rc=0
for name in typecheck lint runner; do
  echo "── $name ──"
  allow=""; [ "$name" = runner ] && allow="--allow pytest"
  # shellcheck disable=SC2086
  node scripts/log-guard.mjs $allow <"$out/$name.log"
  part="$(cat "$out/$name.rc")"
  [ "$part" = 0 ] || { echo "✗ $name failed (exit $part)"; [ "$rc" != 0 ] || rc="$part"; }
done
[ "$rc" = 0 ] || exit "$rc"

# Under CI, plain text: picocolors turns colours on when CI is set, and the escape codes then sit inside the
# summary lines ("Tests  612 passed") that tools reading the log look for.
if [ -n "${CI:-}" ]; then export NO_COLOR=1; fi
# The AWS SDK (pinned, S3 for artifacts) warns once per process that its releases after January 2027 need
# Node.js 22; every test process that loads it printed that block into the log.
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
npx vitest run --reporter=default --reporter=json --outputFile.json="$out/vitest.json" 2>&1 |
  node scripts/log-guard.mjs --allow vitest
rc=${PIPESTATUS[0]}
# Kept after the run (the temp folder goes): each file's duration, to compare the suite's time between runs.
mkdir -p test-output && cp "$out/vitest.json" test-output/vitest.json 2>/dev/null || true
# Last, one plain line with both runners' counts (scripts/test-summary.mjs says why).
node scripts/test-summary.mjs "$out/runner.log" "$out/vitest.json"
exit "$rc"
