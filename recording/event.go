package recording

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// Event is one line of a recording.
type Event struct {
	// Time is when the recorder received the event.
	Time time.Time `json:"time"`
	// Type is ADDED, MODIFIED or DELETED.
	Type string `json:"type"`
	// Initial marks the adds of the initial list.
	Initial bool `json:"initial,omitempty"`
	// FinalStateUnknown marks a delete the informer inferred rather than saw; Object is then
	// the last state it had.
	FinalStateUnknown bool `json:"finalStateUnknown,omitempty"`
	// Resource is the resource as --gvr spells it canonically: "apps/v1/deployments".
	Resource string         `json:"resource"`
	Object   map[string]any `json:"object"`
}

// Event types.
const (
	Added    = "ADDED"
	Modified = "MODIFIED"
	Deleted  = "DELETED"
)

// Writer writes events as JSON Lines, each line as soon as it is written, so a recorder that
// is killed loses nothing it recorded. Safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	out *bufio.Writer
	err error
}

// NewWriter writes to w; call Flush at the end.
func NewWriter(w io.Writer) *Writer { return &Writer{out: bufio.NewWriter(w)} }

// Write appends one event; after the first error it writes nothing and returns it.
func (w *Writer) Write(ev Event) error {
	line, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		_, w.err = w.out.Write(append(line, '\n'))
	}
	if w.err == nil {
		w.err = w.out.Flush()
	}
	return w.err
}

// Flush writes what is buffered and returns the first error of the writer.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = w.out.Flush()
	}
	return w.err
}

// maxLine bounds one recorded line (one object), as the API server bounds objects.
const maxLine = 16 << 20

// Read reads a recording; errors name the line.
func Read(r io.Reader) ([]Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var out []Event
	for n := 1; sc.Scan(); n++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var ev Event
		if err := utiljson.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, fmt.Errorf("read recording, line %d: %w", n, err)
		}
		if err := ev.check(); err != nil {
			return nil, fmt.Errorf("read recording, line %d: %w", n, err)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read recording: %w", err)
	}
	return out, nil
}

func (ev Event) check() error {
	switch {
	case ev.Type != Added && ev.Type != Modified && ev.Type != Deleted:
		return fmt.Errorf("type %q is not ADDED, MODIFIED or DELETED", ev.Type)
	case ev.Object == nil:
		return errors.New("no object")
	case ev.Time.IsZero():
		return errors.New("no time")
	}
	return nil
}

// ReadFile reads the recording at path.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read recording: %w", err)
	}
	defer f.Close()
	return Read(f)
}
