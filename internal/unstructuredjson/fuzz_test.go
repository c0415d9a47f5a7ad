package unstructuredjson_test

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"

	"github.com/jsinformer/jsinformer/internal/deployments"
	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
)

// FuzzDecode holds the decoder to its contract on any input, read as an object, a list and
// a watch frame: whenever the fast path succeeds apimachinery succeeds with an equal result,
// and when the fast path reports invalid JSON (not ErrUnusual) apimachinery rejects it too.
// The seed corpus (the differential corpus in every form) runs with every `go test`.
//
//	go test -run '^$' -fuzz FuzzDecode -fuzztime 5m ./internal/unstructuredjson/
func FuzzDecode(f *testing.F) {
	for _, c := range corpus {
		f.Add([]byte(c.doc))
		f.Add(listOf(c.doc))
		f.Add(frameOf(c.doc))
	}
	f.Add(deployments.ListJSON(2))
	f.Add(frameOf(string(deployments.JSON(4))))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, strip := range []bool{false, true} {
			fuzzObject(t, data, strip)
			fuzzList(t, data, strip)
		}
		fuzzWatchEvent(t, data)
	})
}

// mustAgreeOnError fails when the fast path called data invalid JSON and apimachinery
// accepted it.
func mustAgreeOnError(t *testing.T, err, refErr error) {
	t.Helper()
	if err != nil && !errors.Is(err, unstructuredjson.ErrUnusual) && refErr == nil {
		t.Fatalf("fast path rejects what apimachinery accepts: %v", err)
	}
}

func fuzzObject(t *testing.T, data []byte, strip bool) {
	got, gvk, err := unstructuredjson.Object(data, unstructuredjson.Options{DropManagedFields: strip})
	want, refErr := refObject(data, strip)
	mustAgreeOnError(t, err, refErr)
	if err != nil {
		return
	}
	if refErr != nil {
		t.Fatalf("fast path accepts an object apimachinery rejects: %v", refErr)
	}
	mustNotDiff(t, diff("object", got.Object, want.Object))
	if wantGVK, err := kjson.DefaultMetaFactory.Interpret(data); err != nil || gvk != *wantGVK {
		t.Fatalf("type %v, apimachinery %v (%v)", gvk, wantGVK, err)
	}
}

func fuzzList(t *testing.T, data []byte, strip bool) {
	checkReadList(t, data, strip)
	got, err := unstructuredjson.List(data, unstructuredjson.Options{DropManagedFields: strip})
	want, refErr := refList(data, strip)
	mustAgreeOnError(t, err, refErr)
	if err != nil {
		return
	}
	if refErr != nil {
		t.Fatalf("fast path accepts a list apimachinery rejects: %v", refErr)
	}
	mustNotDiff(t, diffList(got, want))
}

func fuzzWatchEvent(t *testing.T, data []byte) {
	typ, raw, err := unstructuredjson.WatchEvent(data)
	wantTyp, wantRaw, refErr := refWatchEvent(data)
	if err != nil && !errors.Is(err, unstructuredjson.ErrUnusual) && refErr == nil {
		// The frame reader also checks number ranges, which apimachinery leaves to the
		// object's decoder: the event fails either way.
		if _, objErr := runtime.Decode(reference, wantRaw); objErr == nil {
			t.Fatalf("fast path rejects a frame apimachinery accepts: %v", err)
		}
	}
	if err != nil {
		return
	}
	if refErr != nil {
		t.Fatalf("fast path accepts a frame apimachinery rejects: %v", refErr)
	}
	if typ != wantTyp || string(raw) != string(wantRaw) {
		t.Fatalf("frame read as %q %q, apimachinery %q %q", typ, raw, wantTyp, wantRaw)
	}
}
