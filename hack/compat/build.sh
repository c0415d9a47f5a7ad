#!/usr/bin/env bash
# Usage: hack/compat/build.sh v1.34 [v1.35 ...]
# Builds kube-apiserver from the Go module proxy at the version pinned in hack/compat/<minor>/
# go.mod into bin/<version>/ (bin/v1.34.4/ for k8s.io/kubernetes v1.34.4), the way
# hack/controlplane/build.sh builds bin/kube-apiserver, and links bin/<version>/etcd to the
# bin/etcd of `make controlplane` (etcd v3.7 serves the v3 API these older API servers use).
# A version is rebuilt only when its go.mod, go.sum or this script change (the checksum is in
# bin/<version>/.controlplane.sum). Builds run one at a time under nice -n 19: a cold one takes
# ~17 CPU-minutes and must not starve the machine's other work. Prints nothing else when every
# version is up to date; the last line of output per version is its bin directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$here/../.." && pwd)/bin
for minor in "$@"; do
  mod="$here/$minor"
  k8s=$(cd "$mod" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
  out="$bin/$k8s"
  mkdir -p "$out"
  ln -sfn ../etcd "$out/etcd"
  want=$(cat "$mod/go.mod" "$mod/go.sum" "$0" | sha256sum | cut -d' ' -f1)
  if [[ -x $out/kube-apiserver && "$(cat "$out/.controlplane.sum" 2>/dev/null)" == "$want" ]]; then
    continue
  fi
  ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$k8s -X $p.gitMajor=1 -X $p.gitMinor=$(echo "$k8s" | cut -d. -f2) -X $p.gitTreeState=clean"
  done
  ld+=" -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z"
  echo "building kube-apiserver $k8s into bin/$k8s/ (a cold build takes ~17 CPU-minutes, run under nice -n 19)"
  start=$SECONDS
  (cd "$mod" && CGO_ENABLED=0 nice -n 19 go build -trimpath -ldflags "$ld" -o "$out/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
  mv "$out/kube-apiserver.tmp" "$out/kube-apiserver"
  echo "$want" > "$out/.controlplane.sum"
  echo "built kube-apiserver $k8s in $((SECONDS - start)) s"
done
