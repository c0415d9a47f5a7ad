package engine

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/jsinformer/jsinformer/scripting"
)

// Reload history: the last loads of each script with their result and, for a failure that
// points into the source, the lines around it (a code frame for the web page and `runner
// status`). Written by the loader's goroutine, read by the debug API's; one mutex.

const (
	// ReloadsPerScript is how many loads of each script Reloads keeps, newest last.
	ReloadsPerScript = 5
	// frameContext is how many lines before and after the failing line a frame shows.
	frameContext = 3
	// frameLineChars bounds one line of a frame (minified sources have very long lines).
	frameLineChars = 240
)

// ReloadRecord is one load of a script: loaded, reloaded, or failed with the error.
type ReloadRecord struct {
	Time    time.Time `json:"time"`
	Version string    `json:"version"`
	// Result is loaded, reloaded, failed or waiting (its resource is not served yet).
	Result string  `json:"result"`
	TookMs float64 `json:"tookMs,omitempty"`
	Error  string  `json:"error,omitempty"`
	// File, Line and Column locate the error in the source, when it has a place.
	File   string      `json:"file,omitempty"`
	Line   int         `json:"line,omitempty"`
	Column int         `json:"column,omitempty"`
	Frame  []FrameLine `json:"frame,omitempty"`
}

// FrameLine is one source line of a code frame.
type FrameLine struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// reloadLog keeps the last ReloadsPerScript loads of each script.
type reloadLog struct {
	mu       sync.Mutex
	byScript map[string][]ReloadRecord
}

func (l *reloadLog) add(script string, r ReloadRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byScript == nil {
		l.byScript = map[string][]ReloadRecord{}
	}
	rs := l.byScript[script]
	if len(rs) == ReloadsPerScript {
		rs = append(rs[:0], rs[1:]...)
	}
	l.byScript[script] = append(rs, r)
}

func (l *reloadLog) forget(script string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.byScript, script)
}

// Reloads returns the last loads of every script that has been loaded or failed, newest
// last; a script removed from the folder is forgotten. Safe for concurrent use.
func (e *Engine) Reloads() map[string][]ReloadRecord {
	e.reloads.mu.Lock()
	defer e.reloads.mu.Unlock()
	out := make(map[string][]ReloadRecord, len(e.reloads.byScript))
	for k, v := range e.reloads.byScript {
		out[k] = append([]ReloadRecord(nil), v...)
	}
	return out
}

// failedLoad builds the record of a failed load of content, with a frame when err has a place
// in the script's own file.
func failedLoad(name, hash string, content []byte, err error, result string) ReloadRecord {
	r := ReloadRecord{Time: time.Now(), Version: hash, Result: result, Error: err.Error()}
	var se *scripting.ScriptError
	if !errors.As(err, &se) || se.Line <= 0 {
		return r
	}
	r.File, r.Line, r.Column = se.File, se.Line, se.Column
	if se.File == "" || strings.HasSuffix(name, se.File) || strings.HasSuffix(se.File, name) {
		r.Frame = codeFrame(string(content), se.Line)
	}
	return r
}

// codeFrame returns the lines around line (1-based) of src.
func codeFrame(src string, line int) []FrameLine {
	lines := strings.Split(src, "\n")
	if line > len(lines) {
		return nil
	}
	var out []FrameLine
	for n := max(1, line-frameContext); n <= min(len(lines), line+frameContext); n++ {
		text := strings.TrimRight(lines[n-1], "\r")
		if len(text) > frameLineChars {
			text = text[:frameLineChars] + "…"
		}
		out = append(out, FrameLine{Line: n, Text: text})
	}
	return out
}
