package gcpace

import "runtime/metrics"

// reading is what the decision needs from runtime/metrics, in bytes.
type reading struct {
	allocs uint64 // allocated since the process started
	goal   uint64 // heap size at which the runtime will want the current cycle finished
	inUse  uint64 // live and not yet swept objects
	live   uint64 // what the last collection left live (the memory guard's reading)
	off    bool   // GOGC=off: the user wants no collection before a memory limit, if any
	gogc   uint64 // the GC percent in force
	cycles uint64 // collections completed: live changes only when this does
}

var heapMetrics = [...]string{"/gc/heap/allocs:bytes", "/gc/heap/goal:bytes", "/memory/classes/heap/objects:bytes", "/gc/gogc:percent", "/gc/heap/live:bytes", "/gc/cycles/total:gc-cycles"}

// gogcOff is /gc/gogc:percent with GOGC=off: -1 as a uint64.
const gogcOff = ^uint64(0)

func readHeap() reading {
	var s [len(heapMetrics)]metrics.Sample
	for i, name := range heapMetrics {
		s[i].Name = name
	}
	metrics.Read(s[:])
	return reading{
		allocs: s[0].Value.Uint64(), goal: s[1].Value.Uint64(), inUse: s[2].Value.Uint64(),
		off: s[3].Value.Uint64() == gogcOff, gogc: s[3].Value.Uint64(), live: s[4].Value.Uint64(),
		cycles: s[5].Value.Uint64(),
	}
}
