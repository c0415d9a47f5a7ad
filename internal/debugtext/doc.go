// Package debugtext renders the engine's inspection views (status.Status, inspection.QueueView,
// CacheView, IndexesView, Explanation, TraceRecord) as the text `runner status|queue|cache|
// indexes|explain|tail|replay` print, in kubectl's table style, and h.explain shows in
// `runner test`. It only writes to the io.Writer it is given.
package debugtext
