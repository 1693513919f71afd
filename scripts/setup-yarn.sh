#!/usr/bin/env bash
# Fetches the jars of the tests' single-node YARN (testkit/yarn): Apache Hadoop 3.3.4's ResourceManager,
# NodeManager and their dependencies (scripts/yarn/pom.xml) from Maven Central, once, into a cache outside the
# clone shared by every clone and worktree (~150 jars, ~70 MB):
#   ${SPARK_ORCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/spark-orchestrator}/hadoop-yarn-3.3.4/*.jar
# Installed whole or not at all (copied beside it, then renamed into place); Maven's output goes to a log file.
# Usage: scripts/setup-yarn.sh               fetch if missing
#        scripts/setup-yarn.sh --background  the same, detached; the YARN tests wait for its lock
#        scripts/setup-yarn.sh --path        print the folder and exit
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="${SPARK_ORCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/spark-orchestrator}"
YARN_DIR="$CACHE_DIR/hadoop-yarn-3.3.4"
LOCK="$CACHE_DIR/hadoop-yarn.lock"
log="$CACHE_DIR/hadoop-yarn.log"

if [ "${1:-}" = --path ]; then
  echo "$YARN_DIR"
  exit 0
fi
[ -s "$YARN_DIR/.complete" ] && exit 0
if [ "${1:-}" = --background ]; then
  command -v mvn >/dev/null 2>&1 || { echo "setup: no 'mvn': the YARN tests are skipped" >&2; exit 0; }
  mkdir -p "$CACHE_DIR"
  nohup bash "$0" >/dev/null 2>&1 &
  exit 0
fi
mkdir -p "$CACHE_DIR"
# One fetch at a time: a second caller waits for the first.
while ! mkdir "$LOCK" 2>/dev/null; do
  pid="$(cat "$LOCK/pid" 2>/dev/null || true)"
  if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then rm -rf "$LOCK"; continue; fi
  sleep 2
  [ -s "$YARN_DIR/.complete" ] && exit 0
done
echo $$ > "$LOCK/pid"
tmp="$(mktemp -d "$CACHE_DIR/hadoop-yarn.tmp.XXXXXX")"
trap 'rm -rf "$tmp" "$LOCK"' EXIT
echo "setup: fetching Hadoop 3.3.4's ResourceManager and NodeManager jars from Maven Central into $YARN_DIR (log: $log)"
if ! mvn -B -f "$ROOT/scripts/yarn/pom.xml" dependency:copy-dependencies -DincludeScope=runtime \
  -DoutputDirectory="$tmp" >"$log" 2>&1; then
  echo "setup: fetching the YARN jars failed; see $log" >&2
  exit 1
fi
date -u +%FT%TZ > "$tmp/.complete"
rm -rf "$YARN_DIR"
mv -T "$tmp" "$YARN_DIR"
