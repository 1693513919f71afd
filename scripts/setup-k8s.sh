#!/usr/bin/env bash
# Builds the real Kubernetes control plane the k8s tests run against (testkit/kube): kube-apiserver and
# kube-controller-manager 1.34.3 and etcd 3.6.6, from the Go module proxy, once, into a cache outside the
# clone shared by every clone and worktree:
#   ${SPARK_ORCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/spark-orchestrator}/k8s-v1.34.3/{kube-apiserver,...}
# The folder is installed whole or not at all (built beside it, then renamed into place). No kube-scheduler:
# the tests' kubelet stand-in binds pods to its node itself (pods/binding), as a scheduler would.
# Go's module and build caches stay Go's own (GOMODCACHE, GOCACHE), outside the clone. The build's output
# goes to a log file, printed only when it fails. ~8 min on 2 cores when the Go caches are cold.
# Usage: scripts/setup-k8s.sh               build if missing (a second run only checks the folder); a build
#                                          already running (another clone's) is waited for, not repeated
#        scripts/setup-k8s.sh --background  the same, detached: returns at once. The tests that need the
#                                          binaries wait for the build (testkit/kube/control-plane.ts reads
#                                          its lock), so it overlaps the rest of setup, the type check, lint
#                                          and pytest, and the vitest files that need no Kubernetes
#        scripts/setup-k8s.sh --path        print the folder and exit
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
K8S_VERSION=1.34.3
STAGING_VERSION=0.34.3
ETCD_VERSION=3.6.6
CACHE_DIR="${SPARK_ORCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/spark-orchestrator}"
K8S_DIR="$CACHE_DIR/k8s-v$K8S_VERSION"
BINARIES=(kube-apiserver kube-controller-manager etcd)

# Held by the running build: a folder with its pid.
LOCK="$CACHE_DIR/k8s-build.lock"
log="$CACHE_DIR/k8s-build.log"

if [ "${1:-}" = --path ]; then
  echo "$K8S_DIR"
  exit 0
fi
complete() { for b in "${BINARIES[@]}"; do [ -x "$K8S_DIR/$b" ] || return 1; done; }
complete && exit 0
if [ "${1:-}" = --background ]; then
  if ! command -v go >/dev/null 2>&1; then
    echo "setup: no 'go': the tests that need a Kubernetes control plane are skipped (https://go.dev/dl)" >&2
    exit 0
  fi
  mkdir -p "$CACHE_DIR"
  nohup bash "${BASH_SOURCE[0]}" >"$CACHE_DIR/k8s-build.out" 2>&1 </dev/null &
  echo "setup: building the tests' Kubernetes control plane in the background into $K8S_DIR (~8 min; log: $log)"
  exit 0
fi

command -v go >/dev/null 2>&1 || {
  echo "setup-k8s: 'go' is required to build the tests' Kubernetes control plane (https://go.dev/dl)" >&2
  exit 1
}
mkdir -p "$CACHE_DIR"
# Go's caches must not land in the clone (a GOPATH or GOCACHE pointing into it would be swept by git clean
# and slow every editor): refuse rather than fill it.
for v in GOMODCACHE GOCACHE; do
  case "$(go env "$v")/" in "$ROOT"/*)
    echo "setup-k8s: $v=$(go env "$v") is inside the clone; point it elsewhere" >&2
    exit 1
    ;;
  esac
done

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
until mkdir "$LOCK" 2>/dev/null; do
  pid="$(cat "$LOCK/pid" 2>/dev/null || true)"
  if alive "$pid"; then
    echo "setup-k8s: waiting for the build already running (pid $pid; log: $log)"
    while alive "$pid"; do sleep 5; done
    complete && exit 0
    echo "setup-k8s: that build failed; its output ($log):" >&2
    tail -n 60 "$log" >&2
    exit 1
  fi
  sleep 1
  # Still no pid a second later: left by a build that was killed.
  alive "$(cat "$LOCK/pid" 2>/dev/null || true)" || rm -rf "$LOCK"
done
echo $$ >"$LOCK/pid"
tmp="$(mktemp -d "$CACHE_DIR/k8s.tmp.XXXXXX")" && chmod 755 "$tmp"
trap 'rm -rf "$tmp" "$LOCK"' EXIT
: >"$log"
fail() {
  echo "setup-k8s: $1 failed; its output ($log):" >&2
  tail -n 60 "$log" >&2
  exit 1
}
start=$(date +%s)
export GOFLAGS="-mod=mod -buildvcs=false" GOTOOLCHAIN=local CGO_ENABLED=0

# kube-apiserver and kube-controller-manager: k8s.io/kubernetes is not meant to be required as a module, its
# go.mod replaces its 31 staging modules with ./staging/src/k8s.io/X. A scratch module replaces each with
# its published version instead (the list is read from that go.mod, so it follows the release).
mkdir -p "$tmp/kube" "$tmp/bin"
(
  # set -e does not hold inside a subshell on the left of ||: every step is chained with &&.
  cd "$tmp/kube" &&
    go mod init example.invalid/kube &&
    gomod="$(go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')" &&
    [ -s "$gomod" ] &&
    {
      echo "require k8s.io/kubernetes v$K8S_VERSION"
      sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\) => \./staging/src/k8s\.io/.*#replace \1 => \1 v'"$STAGING_VERSION"'#p' "$gomod"
    } >>go.mod &&
    printf '//go:build tools\n\npackage tools\n\nimport (\n\t_ "k8s.io/kubernetes/cmd/kube-apiserver"\n\t_ "k8s.io/kubernetes/cmd/kube-controller-manager"\n)\n' >tools.go &&
    go mod tidy &&
    go build -trimpath -ldflags "-s -w" -o "$tmp/bin/" k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager
) >>"$log" 2>&1 || fail "building kube-apiserver and kube-controller-manager"
kube_done=$(date +%s)

# etcd: its server module's main package, with its sibling modules at the same version.
mkdir -p "$tmp/etcd"
(
  cd "$tmp/etcd" &&
    go mod init example.invalid/etcd &&
    {
      echo "require go.etcd.io/etcd/server/v3 v$ETCD_VERSION"
      for m in api/v3 client/pkg/v3 client/v3 pkg/v3; do echo "replace go.etcd.io/etcd/$m => go.etcd.io/etcd/$m v$ETCD_VERSION"; done
    } >>go.mod &&
    printf '//go:build tools\n\npackage tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >tools.go &&
    go mod tidy &&
    go build -trimpath -ldflags "-s -w" -o "$tmp/bin/etcd" go.etcd.io/etcd/server/v3
) >>"$log" 2>&1 || fail "building etcd"
end=$(date +%s)

for b in "${BINARIES[@]}"; do [ -x "$tmp/bin/$b" ] || fail "building $b"; done
echo "kube-apiserver+kube-controller-manager $((kube_done - start))s, etcd $((end - kube_done))s" >"$tmp/bin/.build-times"
# -T: never into an existing folder; a concurrent setup that got there first has installed the same.
mv -T "$tmp/bin" "$K8S_DIR" 2>/dev/null || complete
echo "setup-k8s: built the Kubernetes control plane into $K8S_DIR in $((end - start))s"
