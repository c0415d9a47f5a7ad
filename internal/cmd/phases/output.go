package main

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// lineWriter interleaves the output of concurrent phases by whole lines, each prefixed with
// its phase's name padded to the longest name.
type lineWriter struct {
	mu    sync.Mutex
	out   io.Writer
	width int
}

func newLineWriter(out io.Writer, plan []phase) *lineWriter {
	lw := &lineWriter{out: out}
	for _, p := range plan {
		lw.width = max(lw.width, len(p.name))
	}
	return lw
}

func (lw *lineWriter) prefix(name string) string {
	return "[" + name + "]" + strings.Repeat(" ", lw.width-len(name)+1)
}

// note writes one line of this command's own about a phase.
func (lw *lineWriter) note(name, msg string) {
	lw.write([]byte(lw.prefix(name) + "== " + msg + "\n"))
}

func (lw *lineWriter) write(b []byte) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	_, _ = lw.out.Write(b) // nowhere to report a failed write to the terminal
}

// phase returns the writer for one phase's stdout and stderr.
func (lw *lineWriter) phase(name string) *phaseWriter {
	return &phaseWriter{lw: lw, prefix: lw.prefix(name)}
}

// phaseWriter holds a phase's partial last line until its newline (or flush) comes. exec
// copies stdout and stderr from separate goroutines when both are this writer, hence mu.
type phaseWriter struct {
	mu      sync.Mutex
	lw      *lineWriter
	prefix  string
	partial []byte
}

func (w *phaseWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(b)
	var lines []byte
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, w.prefix...)
		lines = append(lines, w.partial...)
		lines = append(lines, b[:i+1]...)
		w.partial, b = w.partial[:0], b[i+1:]
	}
	w.partial = append(w.partial, b...)
	if len(lines) > 0 {
		w.lw.write(lines)
	}
	return n, nil
}

// flush writes a last line that had no newline.
func (w *phaseWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.lw.write([]byte(w.prefix + string(w.partial) + "\n"))
		w.partial = w.partial[:0]
	}
}
