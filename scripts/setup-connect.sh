#!/usr/bin/env bash
# Spark Connect, called by scripts/setup.sh; idempotent, a second run only checks stamps:
#   - org.apache.spark:spark-connect_2.12:3.5.7 (the server, a 14 MB shaded jar; pyspark's wheel has no copy)
#     from Maven Central into the cache outside the clone: $CACHE_DIR/spark-connect-3.5.7/, where lib/config.ts
#     looks for it (SPARK_CONNECT_JAR)
#   - the servers' gRPC interceptor (scripts/connect/*.java: only the gateway may call a server) compiled against
#     that jar into $STACK_DIR/jvm/connect-interceptor.jar
#   - the tests' JVM Connect client (testkit/connect-jvm): spark-connect-client-jvm_2.13:4.0.0 with its
#     dependencies into $CACHE_DIR/spark-connect-client-jvm-4.0.0/, its class into $STACK_DIR/jvm
#   - a self-signed TLS certificate for the dev stack's gateway (localhost, 127.0.0.1), unless one exists
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STACK_DIR="${STACK_DIR:-$ROOT/.stack}"
CACHE_DIR="${SPARK_ORCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/spark-orchestrator}"
hash_of() { cat "$@" | sha256sum | cut -c1-16; }

CONNECT_DIR="$CACHE_DIR/spark-connect-3.5.7"
CONNECT_JAR="$CONNECT_DIR/spark-connect_2.12-3.5.7.jar"
if [ ! -s "$CONNECT_JAR" ]; then
  echo "setup: fetching org.apache.spark:spark-connect_2.12:3.5.7 from Maven Central into $CONNECT_DIR"
  mkdir -p "$CACHE_DIR"
  tmp="$(mktemp -d "$CACHE_DIR/spark-connect.tmp.XXXXXX")" && chmod 755 "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  mvn -q dependency:copy -Dartifact=org.apache.spark:spark-connect_2.12:3.5.7 -DoutputDirectory="$tmp" >/dev/null
  mv -T "$tmp" "$CONNECT_DIR" 2>/dev/null || [ -s "$CONNECT_JAR" ]
  rm -rf "$tmp"
  trap - EXIT
fi

JVM_DIR="$STACK_DIR/jvm"
INTERCEPTOR="$JVM_DIR/connect-interceptor.jar"
stamp="$(hash_of "$ROOT"/scripts/connect/*.java "$CONNECT_JAR")"
if [ "$(cat "$INTERCEPTOR.stamp" 2>/dev/null)" != "$stamp" ] || [ ! -s "$INTERCEPTOR" ]; then
  echo "setup: compiling the Connect servers' interceptor (scripts/connect)"
  mkdir -p "$JVM_DIR"
  build="$(mktemp -d)"
  javac -nowarn --release 8 -cp "$CONNECT_JAR" -d "$build" "$ROOT"/scripts/connect/*.java 2>/dev/null ||
    javac --release 8 -cp "$CONNECT_JAR" -d "$build" "$ROOT"/scripts/connect/*.java
  jar cf "$INTERCEPTOR.tmp" -C "$build" . && mv -f "$INTERCEPTOR.tmp" "$INTERCEPTOR"
  rm -rf "$build"
  echo "$stamp" > "$INTERCEPTOR.stamp"
fi

# The JVM Connect client of the e2e test (testkit/connect-jvm): spark-connect-client-jvm_2.13:4.0.0 and its
# dependencies (~75 MB) into the cache, its one class compiled against them into $STACK_DIR/jvm.
CLIENT_DIR="$CACHE_DIR/spark-connect-client-jvm-4.0.0"
if [ ! -s "$CLIENT_DIR/spark-connect-client-jvm_2.13-4.0.0.jar" ]; then
  echo "setup: fetching org.apache.spark:spark-connect-client-jvm_2.13:4.0.0 from Maven Central into $CLIENT_DIR"
  mkdir -p "$CACHE_DIR"
  tmp="$(mktemp -d "$CACHE_DIR/spark-connect-client.tmp.XXXXXX")" && chmod 755 "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  mvn -q -f "$ROOT/testkit/connect-jvm/pom.xml" dependency:copy-dependencies -DoutputDirectory="$tmp" >/dev/null
  mv -T "$tmp" "$CLIENT_DIR" 2>/dev/null || [ -s "$CLIENT_DIR/spark-connect-client-jvm_2.13-4.0.0.jar" ]
  rm -rf "$tmp"
  trap - EXIT
fi
CLIENT_JAR="$JVM_DIR/connect-jvm-client.jar"
stamp="$(hash_of "$ROOT"/testkit/connect-jvm/*.java "$CLIENT_DIR/spark-connect-client-jvm_2.13-4.0.0.jar")"
if [ "$(cat "$CLIENT_JAR.stamp" 2>/dev/null)" != "$stamp" ] || [ ! -s "$CLIENT_JAR" ]; then
  echo "setup: compiling the JVM Connect client of the tests (testkit/connect-jvm)"
  build="$(mktemp -d)"
  javac -nowarn -cp "$CLIENT_DIR/*" -d "$build" "$ROOT"/testkit/connect-jvm/*.java
  jar cf "$CLIENT_JAR.tmp" -C "$build" . && mv -f "$CLIENT_JAR.tmp" "$CLIENT_JAR"
  rm -rf "$build"
  echo "$stamp" > "$CLIENT_JAR.stamp"
fi

TLS_DIR="$STACK_DIR/connect-tls"
if [ ! -s "$TLS_DIR/cert.pem" ] || [ ! -s "$TLS_DIR/key.pem" ]; then
  echo "setup: making a self-signed TLS certificate for the dev stack's Spark Connect gateway ($TLS_DIR)"
  mkdir -p "$TLS_DIR"
  (umask 077; openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=localhost" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1" \
    -keyout "$TLS_DIR/key.pem.tmp" -out "$TLS_DIR/cert.pem.tmp" 2>/dev/null)
  mv -f "$TLS_DIR/key.pem.tmp" "$TLS_DIR/key.pem" && mv -f "$TLS_DIR/cert.pem.tmp" "$TLS_DIR/cert.pem"
fi
