// Package heapsize estimates how many bytes of Go heap are reachable from a root value, walking
// it with reflection. It exists for the memory guard: goja keeps no account of what a runtime
// allocates, but everything a script's runtime holds is reachable from its *goja.Runtime, so the
// size of that graph is the script's memory, without allocator overhead.
//
// # Contract
//
// Measure reads the graph without writing it and without calling any method of it; the caller
// guarantees that no other goroutine writes the graph during the walk (for a goja runtime: it
// runs between calls, on the goroutine that owns the runtime). Fields a Config names in Skip are
// never read, for fields other goroutines may write (goja's interrupt value).
//
// The walk follows pointers, interfaces, slices and maps only into the types Config.Follow
// accepts; other named types (memory the runtime shares with the rest of the process: informer
// caches, clients, loggers) count only for the pointer to them. Functions, channels and unsafe
// pointers are opaque: a closure's captured variables are not counted.
//
// # Precision
//
// Every allocation reached once counts its type's size (slices their capacity, strings their
// length, maps their entries at twice the key and value size, an estimate of the table's load
// and metadata); size-class rounding and allocator metadata are not counted, so the result is a
// lower bound of what the graph costs, within about 25 % of it. A value boxed in an interface
// and short strings are counted each time they are reached (their address is not tracked), so
// a small value shared by many references is over-counted. The walk stops after
// Config.MaxObjects tracked allocations and reports Truncated: the byte count is then a lower
// bound.
package heapsize
