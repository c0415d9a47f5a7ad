package engine

import (
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/k8sclient"
	"github.com/jsinformer/jsinformer/scripting"
)

// What a version keeps for inspection is package engine/internal/version's Inspect: the
// recording side of its worker, the engine's pauses, its subscriptions for readers off the
// loader. This file decides what a version's worker records and when.

// recorder is the recording side of v's worker; nil (recording nothing) in unit tests.
func (v *version) recorder() *trace.Worker { return v.insp.Recorder() }

// waitUnpaused holds the worker while the script is paused; false when the version stops.
func (v *version) waitUnpaused() bool { return v.insp.WaitUnpaused(v.name, v.abort) }

// traceStart begins the record of ev; nil when recording is off.
func (v *version) traceStart(ev event) *inspection.TraceRecord {
	return v.insp.TraceStart(v.name, v.hash, ev)
}

// traceDone stores rec; nil-safe.
func (v *version) traceDone(rec *inspection.TraceRecord) { v.recorder().Done(rec) }

// tapped returns opts whose logger and client feed a new tap, and the recording side of the
// Script made with them; with recording off, opts unchanged and a Worker that records
// nothing (it still shows the call in flight).
func (e *Engine) tapped(opts scripting.Options) (scripting.Options, *trace.Worker) {
	if e.trace == nil {
		return opts, trace.NewWorker(nil, nil)
	}
	opts, tap := trace.Tapped(opts, e.cfg.DryRun, k8sclient.WithForcedDryRun)
	return opts, trace.NewWorker(e.trace, tap)
}
