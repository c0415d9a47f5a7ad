// Package gcpace paces the garbage collector around package engine's reloads: it starts a
// collection itself when the runner is idle and the next reload would otherwise meet one
// midway (Settle, InitialSynced), and lifts the GC percent while a load replays the cache so
// that one load's allocation fits below the goal (Lift). Collections are process-wide; a
// disabled Pacer (Config.PaceGC off) never collects nor changes the percent. It knows nothing
// of versions: the engine tells it when a load starts (Mark, Lift), when it synced (Loaded),
// and when a retired version has drained (Settle).
//
// Who calls what, and ordering:
//   - The engine's loader calls Mark and Lift when it starts building a version, and Loaded
//     when a reload's version takes over; Mark and Loaded bracket the load's allocation.
//   - The end func Lift returns is called by whoever ends the load: the loader when a first
//     load takes over, the retiring goroutine once a reload's predecessor has drained, or the
//     version's close; it is idempotent, and the user's percent is back when no lift is left.
//   - Settle and InitialSynced run on the engine's retiring goroutines (Run joins them) and
//     block their caller for the collection they start; at most one collection started here
//     runs at a time, a second call meanwhile starts none.
//
// Everything here is safe for concurrent use. Nothing here starts a goroutine.
package gcpace
