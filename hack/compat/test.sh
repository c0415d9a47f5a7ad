#!/usr/bin/env bash
# Usage: hack/compat/test.sh v1.34 [v1.35 ...]
# Runs the tests listed in hack/compat/tests against kube-apiserver of each minor given, as
# built by hack/compat/build.sh into bin/<version>/ (JSINFORMER_BIN_DIR points there, so
# internal/controlplane starts that version). Every package runs even when one fails; the log of
# a version is bin/test-compat-<version>.log, and a summary (package, result, seconds) ends
# the output. Exits 1 when any test failed. GO_TEST_FLAGS as in the Makefile.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=$root/bin
flags=${GO_TEST_FLAGS:--race -count=1 -timeout 25m}
summary=()
failed=0
for minor in "$@"; do
  k8s=$(cd "$here/$minor" && go list -m -f '{{.Version}}' k8s.io/kubernetes) || exit 2
  dir=$bin/$k8s
  if ! got=$("$dir/kube-apiserver" --version 2>/dev/null) || [[ $got != "Kubernetes $k8s" ]]; then
    echo "test-compat: $dir/kube-apiserver is not $k8s (${got:-missing}): run hack/compat/build.sh $minor" >&2
    exit 2
  fi
  log=$bin/test-compat-$k8s.log
  : > "$log"
  while read -r -u 3 pkg run skip _; do
    [[ -z $pkg || $pkg == \#* ]] && continue
    args=(-run "$run")
    [[ $skip != - ]] && args+=(-skip "$skip")
    echo "== $k8s: go test ${args[*]} $pkg" | tee -a "$log"
    start=$SECONDS
    # shellcheck disable=SC2086 # flags is a list of flags
    if (cd "$root" && JSINFORMER_BIN_DIR=$dir go test $flags "${args[@]}" "$pkg") 2>&1 | tee -a "$log"; then
      result=ok
    else
      result=FAIL failed=1
    fi
    summary+=("$(printf '%-8s %-22s %-4s %4ds' "$k8s" "$pkg" "$result" $((SECONDS - start)))")
  done 3< "$here/tests"
done
echo "== test-compat summary (logs: bin/test-compat-<version>.log)"
printf '%s\n' "${summary[@]}"
exit $failed
