package recording_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/recording"
)

func TestWriteThenRead(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	w := recording.NewWriter(&buf)
	at := time.Date(2026, 3, 1, 10, 0, 0, 123, time.UTC)
	in := []recording.Event{
		{Time: at, Type: recording.Added, Initial: true, Resource: "v1/configmaps", Object: map[string]any{"metadata": map[string]any{"name": "a"}, "n": int64(7)}},
		{Time: at.Add(time.Second), Type: recording.Deleted, FinalStateUnknown: true, Resource: "v1/configmaps", Object: map[string]any{"metadata": map[string]any{"name": "a"}}},
	}
	for _, ev := range in {
		if err := w.Write(ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 2 {
		t.Fatalf("%d lines, want one per event:\n%s", n, buf.String())
	}
	out, err := recording.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || !out[0].Time.Equal(at) || !out[0].Initial || out[0].Object["n"] != int64(7) || !out[1].FinalStateUnknown {
		t.Fatalf("read back %+v", out)
	}
}

func TestReadErrorsNameTheLine(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		`{"time":"2026-03-01T10:00:00Z","type":"ADDED","resource":"v1/configmaps","object":{}}` + "\n{": "line 2",
		`{"time":"2026-03-01T10:00:00Z","type":"CHANGED","resource":"v1/configmaps","object":{}}`:       `line 1: type "CHANGED"`,
		`{"type":"ADDED","resource":"v1/configmaps","object":{}}`:                                       "line 1: no time",
	} {
		if _, err := recording.Read(strings.NewReader(src)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Read(%q) = %v, want an error with %q", src, err, want)
		}
	}
}
