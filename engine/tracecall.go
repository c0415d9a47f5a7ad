package engine

import (
	"github.com/jsinformer/jsinformer/engine/internal/trace"
	"github.com/jsinformer/jsinformer/k8sclient"
	"github.com/jsinformer/jsinformer/scripting"
)

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
