#!/usr/bin/env bash
# Installs everything the service and its tests need besides node_modules, idempotently:
#   - a Python virtual environment with the Temporal CLI, pyspark, the runner's and the Spark Connect client's
#     packages, and a second one with the test suite's Python tools (scripts/test-requirements.txt): both in
#     the cache outside the clone (below), linked as $STACK_DIR/venv and $STACK_DIR/tools-venv
#   - the classpath of mongo-java-server (the MongoDB wire-protocol dev server) from Maven Central
#   - the JVM jars of SCALA groups' drivers (Ilum's job interface, the runner's helper classes)
#   - Spark Connect's server jar and the gateway's dev certificate (setup-connect.sh)
#   - a development encryption key for cluster secrets, unless SECRET_KEY is set
#   - Trino 368 for the TRINO SQL engines of local clusters, in a cache outside the clone shared by every
#     clone and worktree: $SPARK_ORCH_CACHE (default $XDG_CACHE_HOME/spark-orchestrator, else
#     ~/.cache/spark-orchestrator)/trino-server-368, where lib/config.ts looks for it (TRINO_HOME).
#     SKIP_TRINO=1 skips it (a ~650 MB download once, ~75 MB kept); TRINO engines then fail to launch.
# A second run only checks stamps and is fast. Everything else lands under $STACK_DIR (default .stack).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STACK_DIR="${STACK_DIR:-$ROOT/.stack}"
mkdir -p "$STACK_DIR"

need() { command -v "$1" >/dev/null 2>&1 || { echo "setup: '$1' is required ($2)" >&2; exit 1; }; }
need python3 "apt-get install python3 python3-venv"
need java "apt-get install openjdk-17-jdk-headless"
need mvn "apt-get install maven"
need flock "apt-get install util-linux"

# Contents only, not paths: worktrees sharing one .stack must agree on the stamps.
hash_of() { cat "$@" | sha256sum | cut -c1-16; }

# The tests' Kubernetes control plane (kube-apiserver, kube-controller-manager, etcd), built from the Go module
# proxy into the cache beside Trino's, once: only when the tests are set up (npm test's pretest sets
# SETUP_K8S=1), in the background, since it takes ~8 min on 2 cores the first time; the k8s tests wait for it.
if [ "${SETUP_K8S:-}" = 1 ]; then
  bash "$ROOT/scripts/setup-k8s.sh" --background
  # The tests' single-node YARN (test/e2e/yarn.test.ts): Hadoop 3.3.4's ResourceManager and NodeManager jars from
  # Maven Central into the same cache (~70 MB, once), also in the background; the YARN test waits for it.
  bash "$ROOT/scripts/setup-yarn.sh" --background
fi

# The cache outside the clone, shared by every clone and worktree (Trino, jars, the Python environments).
CACHE_DIR="${SPARK_ORCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/spark-orchestrator}"
mkdir -p "$CACHE_DIR/venvs"

# cached_venv LINK REQUIREMENTS...: a Python virtual environment with those requirement files installed, built
# once per content of the files in $CACHE_DIR/venvs/<name>-<hash> and linked from LINK. A fresh clone links an
# existing one instead of ~90 s of pip. Built in place under a lock (a venv's scripts hold its path, so it
# cannot be built elsewhere and moved), and its stamp is written last: a half-built one is built again.
cached_venv() {
  local link="$1"
  shift
  local stamp dir
  stamp="$(hash_of "$@")"
  dir="$CACHE_DIR/venvs/$(basename "$link")-$stamp"
  (
    flock 9
    if [ "$(cat "$dir/.stamp" 2>/dev/null)" != "$stamp" ]; then
      echo "setup: installing Python packages into $dir (pip caches the downloads)"
      rm -rf "$dir"
      python3 -m venv "$dir"
      for req in "$@"; do "$dir/bin/pip" install --quiet --disable-pip-version-check -r "$req"; done
      echo "$stamp" >"$dir/.stamp"
    fi
  ) 9>"$CACHE_DIR/venvs/.lock"
  if [ "$(readlink "$link" 2>/dev/null)" != "$dir" ]; then
    rm -rf "$link"
    ln -s "$dir" "$link"
  fi
}

# Python: Temporal CLI, pyspark and the runner's packages, and the Spark Connect client's extras (the e2e test
# and the bench run the real client from it; the Connect servers' Python UDF workers need the same packages).
VENV="$STACK_DIR/venv"
cached_venv "$VENV" "$ROOT/runner/requirements.txt" "$ROOT/scripts/connect-requirements.txt"

# Python tools of the tests only (S3-compatible server, Livy client, schemathesis), apart from the runner's.
TOOLS_VENV="$STACK_DIR/tools-venv"
cached_venv "$TOOLS_VENV" "$ROOT/scripts/test-requirements.txt"

# MongoDB wire-protocol server: resolve its jars once.
CP="$STACK_DIR/mongo-classpath.txt"
stamp="$(hash_of "$ROOT/scripts/mongo/pom.xml")"
if [ "$(cat "$CP.stamp" 2>/dev/null)" != "$stamp" ] || [ ! -s "$CP" ]; then
  echo "setup: resolving mongo-java-server from Maven Central"
  mvn -q -f "$ROOT/scripts/mongo/pom.xml" dependency:build-classpath -Dmdep.outputFile="$CP" >/dev/null
  echo "$stamp" > "$CP.stamp"
fi

# JVM side of SCALA groups, put on their drivers' classpath by the local adapter:
#   - Ilum's job interface cloud.ilum.job.Job, from Maven Central (its licence is Ilum's: never committed)
#   - the runner's helper classes (runner/jvm), compiled by the Scala compiler among pyspark's jars
JVM_DIR="$STACK_DIR/jvm"
JOB_API="ilum-job-api-6.0.0"
mkdir -p "$JVM_DIR"
if [ ! -s "$JVM_DIR/$JOB_API.jar" ]; then
  echo "setup: fetching cloud.ilum:ilum-job-api:6.0.0 from Maven Central"
  mvn -q dependency:copy -Dartifact=cloud.ilum:ilum-job-api:6.0.0 -DoutputDirectory="$JVM_DIR" >/dev/null
fi
RUNNER_JAR="$JVM_DIR/spark-runner.jar"
stamp="$(hash_of "$ROOT"/runner/jvm/sparkrunner/*.scala "$JVM_DIR/$JOB_API.jar" "$VENV/.stamp")"
if [ "$(cat "$RUNNER_JAR.stamp" 2>/dev/null)" != "$stamp" ] || [ ! -s "$RUNNER_JAR" ]; then
  echo "setup: compiling the runner's JVM classes (runner/jvm)"
  SPARK_JARS="$("$VENV/bin/python" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
  build="$(mktemp -d)"
  java -cp "$SPARK_JARS/*" scala.tools.nsc.Main -usejavacp -nowarn -classpath "$JVM_DIR/$JOB_API.jar" \
    -d "$build" "$ROOT"/runner/jvm/sparkrunner/*.scala
  jar cf "$RUNNER_JAR.tmp" -C "$build" . && mv -f "$RUNNER_JAR.tmp" "$RUNNER_JAR"
  rm -rf "$build"
  echo "$stamp" > "$RUNNER_JAR.stamp"
fi

# Spark Connect: the server's jar (cache), its interceptor, the dev gateway's TLS certificate
# (scripts/setup-connect.sh).
bash "$ROOT/scripts/setup-connect.sh"

# Trino, the TRINO SQL engine of local clusters. 368 is the last release that runs on Java 17. The
# tarball holds every connector (and hard links between them): it is unpacked whole beside the target,
# pruned to the catalogs engines configure (memory, tpch), then renamed into place, so TRINO_HOME is
# either complete or absent. Maven's copy of the tarball is deleted afterwards: it is 650 MB.
TRINO_VERSION=368
TRINO_HOME="$CACHE_DIR/trino-server-$TRINO_VERSION"
if [ "${SKIP_TRINO:-}" = 1 ]; then
  echo "setup: skipping Trino (SKIP_TRINO=1): local clusters cannot launch TRINO engines"
elif [ ! -x "$TRINO_HOME/bin/launcher" ]; then
  echo "setup: fetching io.trino:trino-server:$TRINO_VERSION from Maven Central into $TRINO_HOME (~650 MB, ~75 MB kept)"
  mkdir -p "$CACHE_DIR"
  tmp="$(mktemp -d "$CACHE_DIR/trino.tmp.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  mvn -q dependency:copy -Dartifact="io.trino:trino-server:$TRINO_VERSION:tar.gz" -DoutputDirectory="$tmp" >/dev/null
  rm -rf "$HOME/.m2/repository/io/trino/trino-server/$TRINO_VERSION"
  tar -xzf "$tmp/trino-server-$TRINO_VERSION.tar.gz" -C "$tmp"
  rm -f "$tmp/trino-server-$TRINO_VERSION.tar.gz"
  find "$tmp/trino-server-$TRINO_VERSION/plugin" -mindepth 1 -maxdepth 1 ! -name memory ! -name tpch -exec rm -rf {} +
  # -T: never into an existing folder; a concurrent setup that got there first has installed the same.
  mv -T "$tmp/trino-server-$TRINO_VERSION" "$TRINO_HOME" 2>/dev/null || [ -x "$TRINO_HOME/bin/launcher" ]
  rm -rf "$tmp"
  trap - EXIT
fi

# s3a for the tests that read artifacts like a k8s driver does (test/integration/k8s-s3a.test.ts): hadoop-aws
# at the Hadoop version inside pyspark 3.5.7 (3.3.4) and the AWS SDK bundle it was built against, in the
# cache outside the clone ($CACHE_DIR/hadoop-aws-3.3.4/*.jar). The driver image bakes the same two jars in.
S3A_DIR="$CACHE_DIR/hadoop-aws-3.3.4"
if [ ! -s "$S3A_DIR/hadoop-aws-3.3.4.jar" ] || [ ! -s "$S3A_DIR/aws-java-sdk-bundle-1.12.262.jar" ]; then
  echo "setup: fetching hadoop-aws 3.3.4 and aws-java-sdk-bundle 1.12.262 from Maven Central into $S3A_DIR (~280 MB)"
  mkdir -p "$CACHE_DIR"
  tmp="$(mktemp -d "$CACHE_DIR/hadoop-aws.tmp.XXXXXX")" && chmod 755 "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  for a in org.apache.hadoop:hadoop-aws:3.3.4 com.amazonaws:aws-java-sdk-bundle:1.12.262; do
    mvn -q dependency:copy -Dartifact="$a" -DoutputDirectory="$tmp" >/dev/null
  done
  mv -T "$tmp" "$S3A_DIR" 2>/dev/null || [ -s "$S3A_DIR/hadoop-aws-3.3.4.jar" ]
  rm -rf "$tmp"
  trap - EXIT
fi

# Development key for secrets at rest. Production sets SECRET_KEY instead.
if [ -z "${SECRET_KEY:-}" ] && [ ! -s "$STACK_DIR/secret.key" ]; then
  (umask 077; python3 -c 'import secrets; print(secrets.token_hex(32))' > "$STACK_DIR/secret.key")
fi

# Helm's chart engine, for test/unit/helm-chart.test.ts (render, lint, then validate every manifest):
# Helm 4's Go SDK as a shared library in the helm-python-sdk wheel, since no helm binary comes from the
# package registries. Kept apart from the venv (its own folder on PYTHONPATH), installed whole or not at all.
HELM_SDK_VERSION=0.2.2
HELM_SDK="$STACK_DIR/helm-sdk"
if [ "$(cat "$HELM_SDK/.stamp" 2>/dev/null)" != "$HELM_SDK_VERSION" ]; then
  echo "setup: installing helm-python-sdk $HELM_SDK_VERSION into $HELM_SDK (Helm's chart engine, ~75 MB)"
  tmp="$(mktemp -d "$STACK_DIR/helm-sdk.tmp.XXXXXX")"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps --target "$tmp" "helm-python-sdk==$HELM_SDK_VERSION"
  echo "$HELM_SDK_VERSION" > "$tmp/.stamp"
  rm -rf "$HELM_SDK" && mv "$tmp" "$HELM_SDK"
fi

# Headless Chromium for the web console's browser tests (test/e2e/console.test.ts), from Debian's packages:
# only when the tests are set up (npm test's pretest sets SETUP_BROWSER=1), and only where it is missing.
if [ "${SETUP_BROWSER:-}" = 1 ] && [ ! -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian's chromium for the console's browser tests (apt-get)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "setup: no Chromium at ${CHROMIUM_PATH:-/usr/bin/chromium}: install Debian's chromium (apt-get install chromium) or set CHROMIUM_PATH; the console's browser tests need it" >&2
  fi
fi

echo "setup: ready ($STACK_DIR)"
