package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/jsinformer/jsinformer/debugapi/web"
	"github.com/jsinformer/jsinformer/internal/browsertest"
	"github.com/jsinformer/jsinformer/status"
)

// permSource is a small runner that lacks a permission a script needs and had a call refused.
type permSource struct{ bigSource }

var (
	missingPerm = status.PermissionStatus{Script: "big.js", Verb: "list", Resource: "configmaps", Namespace: "web", Why: "watch",
		Grant: "kubectl create role NAME -n web --verb=list --resource=configmaps"}
	refusedPerm = status.PermissionStatus{Script: "big.js", Verb: "delete", Resource: "jobs.batch", Why: "k8s.delete",
		Grant: "kubectl create clusterrole NAME --verb=delete --resource=jobs.batch", Refused: 4}
)

func (s permSource) Status() status.Status {
	st := s.bigSource.Status()
	st.Permissions = []status.PermissionStatus{missingPerm, refusedPerm}
	return st
}

// TestPageShowsMissingPermissions: the scripts view lists each missing or refused permission
// with its script, verb, resource, namespace, why and the command that grants it.
func TestPageShowsMissingPermissions(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: not run with -short")
	}
	page := web.New(web.Options{Source: permSource{bigSource{objects: 10}}, ScriptsDir: t.TempDir(), Interval: 500 * time.Millisecond})
	mux := http.NewServeMux()
	page.Register(mux.Handle)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	runDone := make(chan error, 1)
	runCtx, stop := context.WithCancel(t.Context())
	go func() { runDone <- page.Run(runCtx) }()
	t.Cleanup(func() {
		srv.CloseClientConnections()
		stop()
		if err := <-runDone; err != nil {
			t.Errorf("page.Run: %v", err)
		}
	})

	b := browsertest.New(t)
	b.Do(t, "open the page", chromedp.Navigate(srv.URL+"/"))
	b.WaitJS(t, "the permissions table", `document.querySelectorAll("#permissions tbody tr").length === 2`, 30*time.Second)
	rows, err := browsertest.Eval[[][]string](b, `[...document.querySelectorAll("#permissions tbody tr")].map((r) => [...r.cells].map((c) => c.textContent))`)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"big.js", "list", "configmaps", "web", "watch", missingPerm.Grant},
		{"big.js", "delete", "jobs.batch", "all namespaces", "k8s.delete refused 4×", refusedPerm.Grant},
	}
	if len(rows) != len(want) {
		t.Fatalf("permission rows %q; want %q", rows, want)
	}
	for i := range want {
		if len(rows[i]) != len(want[i]) {
			t.Fatalf("row %d: %q; want %q", i, rows[i], want[i])
		}
		for j := range want[i] {
			if rows[i][j] != want[i][j] {
				t.Errorf("row %d column %d: %q; want %q", i, j, rows[i][j], want[i][j])
			}
		}
	}
	b.Screenshot(t, "page-permissions")
	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("the page logged errors: %q", errs)
	}
}
