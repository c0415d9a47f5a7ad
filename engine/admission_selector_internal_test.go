package engine

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is a log destination safe for the loader's goroutine and the test's.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAdmissionUnderARunnerWideSelectorWarns: a script whose watch sets no labelSelector
// takes -l, as its webhook entry's objectSelector (documented), and the runner warns once per
// version that starts serving; a script with its own selector is not warned about.
func TestAdmissionUnderARunnerWideSelectorWarns(t *testing.T) {
	t.Parallel()
	e := loaderEngine(t, newFakeSource(1))
	var logs lockedBuffer
	e.logger = slog.New(slog.NewTextHandler(&logs, nil))
	e.cfg.LabelSelector = "tier=web"
	e.loadContent("a.js", cmScript("a", `validate() {}`))
	e.syncUntil(t, pending(e, "a.js"))
	e.loadContent("own.js", `export default { watch: { resource: "v1/configmaps", namespace: "ns", labelSelector: "team" }, validate() {} };`)
	e.syncUntil(t, pending(e, "own.js"))
	entries := e.AdmissionEntries()
	if len(entries) != 2 || entries[0].Watches[0].LabelSelector != "tier=web" || entries[1].Watches[0].LabelSelector != "team" {
		t.Fatalf("entries %+v: want a.js under -l, own.js under its own selector", entries)
	}
	var warnings []string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "the runner-wide -l is this script's objectSelector") {
			warnings = append(warnings, line)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "level=WARN") || !strings.Contains(warnings[0], "script=a.js") {
		t.Errorf("warnings %q, want one, about a.js", warnings)
	}
}
