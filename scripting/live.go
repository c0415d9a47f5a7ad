package scripting

import "sync/atomic"

// liveRuntimes counts the executor goroutines running in this process, each with its goja
// runtime: from Script.start until the goroutine returns (after Close or Interrupt, or, for an
// abandoned runtime, when its stuck call finally ends).
var liveRuntimes atomic.Int64

// LiveRuntimes is the number of script runtimes whose goroutine is still running, in the whole
// process. A runtime nobody closed or interrupted stays counted: the engine's tests and the
// jsinformer_script_runtimes metric use it to show that every version releases its runtimes.
func LiveRuntimes() int64 { return liveRuntimes.Load() }
