#!/usr/bin/env bash
# Builds bin/kube-apiserver and bin/etcd from the Go module proxy at the versions pinned in
# this folder's go.mod. Does nothing when bin/ already holds binaries built from the same
# go.mod and go.sum (recorded in bin/.controlplane.sum).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$here/../.." && pwd)/bin
mkdir -p "$bin"
want=$(cat "$here/go.mod" "$here/go.sum" "$0" | sha256sum | cut -d' ' -f1)
if [[ -x $bin/kube-apiserver && -x $bin/etcd && "$(cat "$bin/.controlplane.sum" 2>/dev/null)" == "$want" ]]; then
  exit 0
fi
cd "$here"
k8s=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
minor=$(echo "$k8s" | cut -d. -f2)
pkgs=(k8s.io/component-base/version k8s.io/client-go/pkg/version)
ld="-s -w"
for p in "${pkgs[@]}"; do
  ld+=" -X $p.gitVersion=$k8s -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
done
ld+=" -X k8s.io/component-base/version.buildDate=1970-01-01T00:00:00Z"
echo "building kube-apiserver $k8s and etcd $(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3) into bin/ (a cold build takes a few minutes)"
# Static and trimmed, as `make prebuild` compiles the runner: with the versions this go.mod
# shares with the runner's (aligned; TestControlPlaneSharesDependencyVersions keeps them so),
# the two builds compile their common packages once.
export CGO_ENABLED=0
go build -trimpath -ldflags "$ld" -o "$bin/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
go build -trimpath -ldflags "-s -w" -o "$bin/etcd" ./cmd/etcd
echo "$want" > "$bin/.controlplane.sum"
