#!/usr/bin/env bash
# Runs `make test` as a new user's first run on a fresh machine would: a fresh clone of COMMIT
# (default HEAD) with empty Go module, Go build, golangci-lint and npm caches, so every module is
# downloaded and everything (kube-apiserver, etcd, golangci-lint, the tree) is compiled.
# Usage: hack/coldtest/run.sh [COMMIT [DIR]]. DIR (default a new temp folder) holds the clone
# and the caches (several GB) and is deleted at the end unless KEEP=1. It runs under
# `nice -n 10` and prints make test's phase table; docs/benchmarks.md has the figures.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
commit=$(git -C "$repo" rev-parse "${1:-HEAD}")
dir=${2:-$(mktemp -d "${TMPDIR:-/tmp}/jsinformer-cold.XXXXXX")}
if [[ ${KEEP:-0} != 1 ]]; then
  trap 'chmod -R u+w "$dir" 2>/dev/null; rm -rf "$dir"' EXIT # module cache files are read-only
fi
git clone -q "$repo" "$dir/clone"
git -C "$dir/clone" checkout -q "$commit"
export GOMODCACHE=$dir/gomod GOCACHE=$dir/gocache GOLANGCI_LINT_CACHE=$dir/golangci-lint \
  npm_config_cache=$dir/npm XDG_CACHE_HOME=$dir/xdg
echo "cold make test of $commit in $dir; load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)"
cd "$dir/clone"
start=$(date +%s)
status=0
nice -n 10 make test || status=$?
echo "cold make test: exit status $status after $(( $(date +%s) - start )) s; load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo ?)"
exit $status
