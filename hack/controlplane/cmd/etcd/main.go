// Command etcd is etcd's own server entry point, built here from the Go module proxy so the
// test control plane needs no prebuilt download.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
