package web

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/jsinformer/jsinformer/status"
)

const (
	// frameContext is how many lines before and after the failing line a frame shows.
	frameContext = 3
	// frameLineChars bounds one line of a frame (a minified source has very long lines).
	frameLineChars = 240
	// maxSourceBytes bounds the file read for a frame.
	maxSourceBytes = 4 << 20
)

// Frame is a failed load's error with the source lines around its place.
type Frame struct {
	Message string      `json:"message"`
	File    string      `json:"file"`
	Line    int         `json:"line"`
	Column  int         `json:"column,omitempty"`
	Lines   []FrameLine `json:"lines,omitempty"`
	// Stale: the file has changed since the load failed; the lines are today's.
	Stale bool `json:"stale,omitempty"`
}

// FrameLine is one source line.
type FrameLine struct {
	Line int    `json:"line"`
	Text string `json:"text"`
}

// frames builds code frames from the files in the scripts folder, keeping the last one per
// script so the file is read once per failed load. Used only by Run's goroutine.
type frames struct {
	dir  string
	last map[string]cachedFrame
}

type cachedFrame struct {
	key   status.LoadStatus
	frame *Frame
}

// of returns the frame of the script's latest load when it failed with a place in a file;
// nil otherwise.
func (f *frames) of(sc status.ScriptStatus) *Frame {
	if len(sc.Loads) == 0 {
		return nil
	}
	last := sc.Loads[len(sc.Loads)-1]
	if last.Error == nil || (last.Result != status.LoadFailed && last.Result != status.LoadWaiting) {
		delete(f.last, sc.Name)
		return nil
	}
	if c, ok := f.last[sc.Name]; ok && c.key.Hash == last.Hash && c.key.At.Equal(last.At) {
		return c.frame
	}
	fr := &Frame{Message: last.Error.Message, File: last.Error.File, Line: last.Error.Line, Column: last.Error.Column}
	if fr.File == "" {
		fr.File = sc.Name
	}
	if fr.Line > 0 && f.dir != "" {
		fr.Lines, fr.Stale = f.read(fr.File, fr.Line, sc.Name, last.Hash)
	}
	if f.last == nil {
		f.last = map[string]cachedFrame{}
	}
	f.last[sc.Name] = cachedFrame{key: last, frame: fr}
	return fr
}

// read returns the lines around line of file (a path in the scripts folder; nothing outside
// it is read) and whether the script's file no longer has the content that failed.
func (f *frames) read(file string, line int, script, hash string) ([]FrameLine, bool) {
	rel := filepath.FromSlash(file)
	if !filepath.IsLocal(rel) {
		return nil, false
	}
	path := filepath.Join(f.dir, rel)
	if st, err := os.Stat(path); err != nil || st.Size() > maxSourceBytes {
		return nil, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	stale := false
	if file == script { // the hash covers the script alone unless it imports modules
		sum := sha256.Sum256(data)
		stale = !strings.HasPrefix(hex.EncodeToString(sum[:]), hash)
	}
	return codeFrame(string(data), line), stale
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
