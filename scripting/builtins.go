package scripting

import "strings"

// nodeBuiltins are the top-level names of Node.js's built-in modules (Node 20's
// require("module").builtinModules, subpaths such as "fs/promises" folded into their parent;
// those reachable only as "node:test" and the like are covered by the prefix).
// A script importing one gets a load error saying why, rather than esbuild's advice to bundle
// for Node.
var nodeBuiltins = map[string]bool{
	"assert": true, "async_hooks": true, "buffer": true, "child_process": true, "cluster": true,
	"console": true, "constants": true, "crypto": true, "dgram": true, "diagnostics_channel": true,
	"dns": true, "domain": true, "events": true, "fs": true, "http": true, "http2": true,
	"https": true, "inspector": true, "module": true, "net": true, "os": true, "path": true,
	"perf_hooks": true, "process": true, "punycode": true, "querystring": true, "readline": true,
	"repl": true, "stream": true, "string_decoder": true, "sys": true, "timers": true, "tls": true,
	"trace_events": true, "tty": true, "url": true, "util": true, "v8": true, "vm": true,
	"wasi": true, "worker_threads": true, "zlib": true,
	"_http_agent": true, "_http_client": true, "_http_common": true, "_http_incoming": true,
	"_http_outgoing": true, "_http_server": true, "_stream_duplex": true,
	"_stream_passthrough": true, "_stream_readable": true, "_stream_transform": true,
	"_stream_wrap": true, "_stream_writable": true, "_tls_common": true, "_tls_wrap": true,
}

// isNodeBuiltin reports whether an import path names a Node.js built-in module: "node:"
// anything, or a built-in's name or subpath ("fs", "fs/promises").
func isNodeBuiltin(p string) bool {
	if strings.HasPrefix(p, "node:") {
		return true
	}
	top, _, _ := strings.Cut(p, "/")
	return nodeBuiltins[top]
}
