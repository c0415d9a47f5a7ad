package debugapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Action request bodies.
type (
	// RetryRequest is the body of /debug/actions/retry.
	RetryRequest struct {
		Script string `json:"script"`
		Key    string `json:"key"`
	}
	// ScriptRequest is the body of /debug/actions/pause and /resume.
	ScriptRequest struct {
		Script string `json:"script"`
	}
	// LogLevelRequest is the body of /debug/actions/log-level; For is a Go duration.
	LogLevelRequest struct {
		Level string `json:"level"`
		For   string `json:"for"`
	}
	// ReplayRequest is the body of /debug/actions/replay.
	ReplayRequest struct {
		Script   string `json:"script"`
		Resource string `json:"resource"`
		Object   string `json:"object"`
		DryRun   bool   `json:"dryRun"`
	}
	// ActionResult is the answer of the actions that return no view.
	ActionResult struct {
		Message string `json:"message"`
		Changed bool   `json:"changed"`
	}
)

// maxBody bounds an action's request body.
const maxBody = 64 << 10

// decode reads the JSON body into v.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "read request body: "+err.Error())
		return false
	}
	return true
}

func (s *Server) retry(w http.ResponseWriter, r *http.Request) {
	var req RetryRequest
	if !decode(w, r, &req) || !present(w, map[string]string{"script": req.Script, "key": req.Key}) {
		return
	}
	err := s.opts.Source.Retry(req.Script, req.Key)
	reply(w, ActionResult{Message: fmt.Sprintf("%s: key %s queued for reconcile now", req.Script, req.Key), Changed: true}, err)
}

func (s *Server) pause(w http.ResponseWriter, r *http.Request) {
	var req ScriptRequest
	if !decode(w, r, &req) || !present(w, map[string]string{"script": req.Script}) {
		return
	}
	changed, err := s.opts.Source.Pause(req.Script)
	msg := req.Script + " paused: its events and keys wait until `runner resume " + req.Script + "`"
	if !changed {
		msg = req.Script + " was paused already"
	}
	reply(w, ActionResult{Message: msg, Changed: changed}, err)
}

func (s *Server) resume(w http.ResponseWriter, r *http.Request) {
	var req ScriptRequest
	if !decode(w, r, &req) || !present(w, map[string]string{"script": req.Script}) {
		return
	}
	changed, err := s.opts.Source.Resume(req.Script)
	msg := req.Script + " resumed"
	if !changed {
		msg = req.Script + " was not paused"
	}
	reply(w, ActionResult{Message: msg, Changed: changed}, err)
}

func (s *Server) replay(w http.ResponseWriter, r *http.Request) {
	var req ReplayRequest
	if !decode(w, r, &req) || !present(w, map[string]string{"script": req.Script, "resource": req.Resource, "object": req.Object}) {
		return
	}
	rec, err := s.opts.Source.Replay(r.Context(), req.Script, req.Resource, req.Object, req.DryRun)
	reply(w, rec, err)
}

func (s *Server) logLevel(w http.ResponseWriter, r *http.Request) {
	var req LogLevelRequest
	if !decode(w, r, &req) || !present(w, map[string]string{"level": req.Level}) {
		return
	}
	d := DefaultLogLevelFor
	if req.For != "" {
		var err error
		if d, err = time.ParseDuration(req.For); err != nil || d <= 0 || d > MaxLogLevelFor {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("for must be a duration between 1s and %s, e.g. 10m, not %q", MaxLogLevelFor, req.For))
			return
		}
	}
	msg, err := s.level.set(req.Level, d)
	if err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, errStopped) {
			code = http.StatusServiceUnavailable
		}
		writeError(w, code, err.Error())
		return
	}
	writeJSON(w, ActionResult{Message: msg, Changed: true})
}

// present reports a missing required field.
func present(w http.ResponseWriter, fields map[string]string) bool {
	for _, name := range []string{"script", "key", "resource", "object", "level"} {
		if v, ok := fields[name]; ok && v == "" {
			writeError(w, http.StatusBadRequest, "missing field "+name)
			return false
		}
	}
	return true
}
