// Package health is package engine's readiness and the operator's view of informer failures:
// Ready says whether the runner serves its scripts (the initial scripts loaded, no informer a
// live script needs failing, no version syncing, for longer than UnhealthyAfter), and Report
// logs each informer's failure and recovery with the scripts it affects. A hung API server
// (a connection silent past dynamicinformer.ConnectionHealth) reaches it as an informer
// failure like any other.
//
// It plugs into package engine, which hands it, as funcs of Config, what it needs of the
// live versions: which scripts use an informer, which informers are in use, which versions
// are still syncing and since when (all read from the engine's record of live versions,
// under that record's own mutex), whether the initial scripts have loaded, and the
// informers' health. It knows nothing of versions, queues or the loader, and keeps no state
// of its own: every answer is computed from those funcs when asked.
//
// Goroutines: none are started here. Ready is called from any goroutine (the /readyz probe,
// the metrics scrape, the state API); Report on the informers' goroutines (through
// dynamicinformer.Options.OnHealth), for each transition in the order the informer reports
// them. Both only read through Config's funcs, which must be safe for concurrent use.
//
// The WARN and INFO lines of Report are an operator contract (docs/scripts.md shows them): their
// messages and keys do not change. A Forbidden is reported apart (docs/permissions.md): one
// WARN with the refused verb and the rule to add, then reminders at DEBUG only, since only a
// grant changes the answer.
package health
