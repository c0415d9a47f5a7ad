// Package settle is the engine loader's record of scripts that did not load (Failures). A
// load of content read moments after it changed (plugins.Source.Settling) that fails is held,
// not reported: it may be a save in progress read half-written, and the error is reported
// only when the watcher says that content has stayed unchanged for its grace period
// (plugins.Settled, then Settled here hands the failure back). Newer content or a removal
// supersedes it. A successful load is never held. The content whose failure was last reported
// is remembered per script until content of that script loads, so that the same failure is
// not reported as news twice.
//
// Goroutines: a Failures is owned by the engine's loader goroutine and is not safe for
// concurrent use; it starts no goroutine and keeps nothing but sources and errors.
package settle
