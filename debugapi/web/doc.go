// Package web serves the runner's live debug page on the debug listener: one HTML page at /
// (and at its deep links /scripts/FILE, /explain/RESOURCE/NS/NAME, /queues, /informers,
// /tail, /indexes, /policies), its script and style under /ui/assets/, and /ui/events, a server-sent
// event stream of snapshots. Everything is embedded (go:embed); the page loads nothing from
// elsewhere and needs no build step.
//
// What moves: /ui/events sends one "snapshot" event on connect and another whenever the
// snapshot changes, checked once per Options.Interval on the server — the page never polls.
// A snapshot is the engine's state API (status.Status: scripts, versions, loads, informers,
// leader) with, per script, its queues (at most KeysPerScript keys per version), the code
// frame of a failed load (the lines around the error, read from Options.ScriptsDir — never a
// file outside it), its memory and its call rates; the index digests; and the audit scripts'
// summaries (counts, initial pass progress, at most FailingPerScript failing objects each,
// chosen in memory proportional to that bound however many fail). Never an object.
// Run rebuilds it at once when engine.StatusChanged fires (a save shows within a few hundred
// milliseconds), and every Interval otherwise, only while a page is connected. The page reads objects, traces and index keys from the debug API (/debug/...)
// when the user asks, and the tail from /debug/tail.
//
// Rates come from the engine's trace stream (Source.Subscribe): Run subscribes once and
// counts calls per script in one-second buckets over a minute, with the last
// durationSamples durations per script for the p95. With recording off (--trace-records 0)
// the rates are absent.
//
// Permission: the buttons (retry, pause, resume) are shown when Options.CanAct says the
// request may act; nil means yes (a loopback listener, where debugapi does not authenticate).
// The actions themselves are checked by debugapi whatever the page shows.
//
// Goroutines: Run owns the subscription and the snapshot ticker, and returns when ctx is
// done; each /ui/events request runs on net/http's goroutine and ends when the client goes or
// ctx (Run's) is done.
package web
