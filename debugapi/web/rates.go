package web

import (
	"slices"
	"sync"
	"time"

	"github.com/jsinformer/jsinformer/inspection"
)

const (
	// rateWindow is the span, in seconds, the error rate and p95 cover; calls per second are
	// over the last callsWindow seconds.
	rateWindow  = 60
	callsWindow = 10
	// durationSamples is how many recent call durations per script the p95 is taken from.
	durationSamples = 512
)

// Rates are one script's recent handler calls.
type Rates struct {
	CallsPerSec float64 `json:"callsPerSec"`
	Calls       int     `json:"calls"`     // in the last rateWindow seconds
	ErrorRate   float64 `json:"errorRate"` // errors and timeouts / calls, last rateWindow seconds
	P95Ms       float64 `json:"p95Ms"`
}

type bucket struct {
	sec           int64
	calls, errors int
}

type sample struct {
	at int64 // unix second
	ms float64
}

// scriptRates counts one script's calls in one-second buckets (ring by second) and keeps its
// last durationSamples durations.
type scriptRates struct {
	buckets [rateWindow]bucket
	samples [durationSamples]sample
	next    int
}

// rates is the per-script counts; fed by Run's goroutine, read by the snapshot builder.
type rates struct {
	mu       sync.Mutex
	byScript map[string]*scriptRates
}

func newRates() *rates { return &rates{byScript: map[string]*scriptRates{}} }

// add counts one record; records of no handler call (an event the script has no handler
// for, a paused or standby version) are not calls, and admission decisions are not handler
// calls (their rates are the admission metrics').
func (r *rates) add(rec inspection.TraceRecord) {
	if rec.Handler == "" || rec.Result == "not called" || rec.Result == "paused" || rec.Admission != nil {
		return
	}
	sec := rec.Time.Unix()
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.byScript[rec.Script]
	if s == nil {
		s = &scriptRates{}
		r.byScript[rec.Script] = s
	}
	b := &s.buckets[sec%rateWindow]
	if b.sec != sec {
		*b = bucket{sec: sec}
	}
	b.calls++
	if rec.Result == "error" || rec.Result == "timeout" {
		b.errors++
	}
	s.samples[s.next] = sample{at: sec, ms: rec.DurationMs}
	s.next = (s.next + 1) % durationSamples
}

// snapshot computes every script's rates at now.
func (r *rates) snapshot(now time.Time) map[string]Rates {
	sec := now.Unix()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]Rates, len(r.byScript))
	for name, s := range r.byScript {
		var recent, calls, errs int
		for _, b := range s.buckets {
			age := sec - b.sec
			if age < 0 || age >= rateWindow {
				continue
			}
			calls += b.calls
			errs += b.errors
			if age < callsWindow {
				recent += b.calls
			}
		}
		var ds []float64
		for _, x := range s.samples {
			if x.at != 0 && sec-x.at < rateWindow {
				ds = append(ds, x.ms)
			}
		}
		rt := Rates{CallsPerSec: float64(recent) / callsWindow, Calls: calls}
		if calls > 0 {
			rt.ErrorRate = float64(errs) / float64(calls)
		}
		if len(ds) > 0 {
			slices.Sort(ds)
			rt.P95Ms = ds[(len(ds)*95+99)/100-1]
		}
		out[name] = rt
	}
	return out
}
