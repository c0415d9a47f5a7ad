package unstructuredjson_test

import (
	"bytes"
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"

	"github.com/jsinformer/jsinformer/internal/deployments"
	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
)

// listOf wraps documents as the items of a typed list, as the apiserver sends one.
func listOf(docs ...string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"kind":"OddList","apiVersion":"example.com/v1","metadata":{"resourceVersion":"7"},"items":[`)
	for i, d := range docs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(d)
	}
	b.WriteString("]}")
	return b.Bytes()
}

func frameOf(doc string) []byte { return []byte(`{"type":"ADDED","object":` + doc + "}\n") }

// checkObject holds Object to its contract on data: when it succeeds, apimachinery succeeds
// with the same object; wantFast says it must succeed; wantErr that apimachinery fails.
func checkObject(t *testing.T, data []byte, strip, wantFast, wantErr bool) {
	t.Helper()
	got, gvk, err := unstructuredjson.Object(data, unstructuredjson.Options{DropManagedFields: strip})
	want, refErr := refObject(data, strip)
	switch {
	case wantErr && refErr == nil:
		t.Fatalf("corpus says invalid, apimachinery accepts it")
	case err != nil && wantFast:
		t.Fatalf("fast path failed on a document it must decode: %v (apimachinery: %v)", err, refErr)
	case err != nil:
		return // left to apimachinery
	case refErr != nil:
		t.Fatalf("fast path accepted a document apimachinery rejects: %v", refErr)
	}
	mustNotDiff(t, diff("object", got.Object, want.Object))
	wantGVK, err := kjson.DefaultMetaFactory.Interpret(data)
	if err != nil || gvk != *wantGVK {
		t.Fatalf("type %v, apimachinery %v (%v)", gvk, wantGVK, err)
	}
}

func checkList(t *testing.T, data []byte, strip, wantFast, wantErr bool) {
	t.Helper()
	got, err := unstructuredjson.List(data, unstructuredjson.Options{DropManagedFields: strip})
	want, refErr := refList(data, strip)
	switch {
	case wantErr && refErr == nil:
		t.Fatalf("corpus says invalid, apimachinery accepts the list")
	case err != nil && wantFast:
		t.Fatalf("fast path failed on a list it must decode: %v (apimachinery: %v)", err, refErr)
	case err != nil:
		return
	case refErr != nil:
		t.Fatalf("fast path accepted a list apimachinery rejects: %v", refErr)
	}
	mustNotDiff(t, diffList(got, want))
	checkReadList(t, data, strip)
}

// checkWatchEvent holds WatchEvent to its contract on a frame; wantErr says apimachinery
// fails on the frame or on the object in it (a number out of range passes the frame).
func checkWatchEvent(t *testing.T, data []byte, wantFast, wantErr bool) {
	t.Helper()
	typ, raw, err := unstructuredjson.WatchEvent(data)
	wantTyp, wantRaw, refErr := refWatchEvent(data)
	if wantErr && refErr == nil {
		if _, refErr = runtime.Decode(reference, wantRaw); refErr != nil {
			return // the object fails, whichever reads the frame
		}
	}
	switch {
	case wantErr && refErr == nil:
		t.Fatalf("corpus says invalid, apimachinery accepts the frame")
	case err != nil && wantFast:
		t.Fatalf("fast path failed on a frame it must read: %v (apimachinery: %v)", err, refErr)
	case err != nil:
		return
	case refErr != nil:
		t.Fatalf("fast path accepted a frame apimachinery rejects: %v", refErr)
	}
	if typ != wantTyp || !bytes.Equal(raw, wantRaw) {
		t.Fatalf("frame read as %q %q, apimachinery %q %q", typ, raw, wantTyp, wantRaw)
	}
}

// TestCorpusMatchesApimachinery decodes every corpus document as an object (with and
// without managedFields stripping), as the items of a list, and as a watch frame, and
// compares each with apimachinery's decoder.
func TestCorpusMatchesApimachinery(t *testing.T) {
	t.Parallel()
	for _, c := range corpus {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			data := []byte(c.doc)
			for _, strip := range []bool{false, true} {
				checkObject(t, data, strip, c.class == fast, c.class == invalid)
				checkList(t, listOf(c.doc, c.doc), strip, c.class == fast, c.class == invalid)
			}
			checkWatchEvent(t, frameOf(c.doc), c.class == fast, c.class == invalid)
		})
	}
}

// TestListShapesMatchApimachinery covers what is special about lists: items without a type
// take the list's, null items, a missing, null or repeated "items", a kind without "List".
func TestListShapesMatchApimachinery(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, doc string
		fast      bool
	}{
		{"typed items", `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"a"}},{"kind":"Other","metadata":{"name":"b"}},{"apiVersion":"x/v1"}]}`, true},
		{"null item", `{"kind":"PodList","apiVersion":"v1","items":[null,{}]}`, true},
		{"no items", `{"kind":"PodList","apiVersion":"v1","metadata":{"continue":"x"}}`, true},
		{"null items", `{"kind":"PodList","apiVersion":"v1","items":null}`, true},
		{"empty items", `{"kind":"PodList","apiVersion":"v1","items":[]}`, true},
		{"items twice", `{"kind":"PodList","apiVersion":"v1","items":[{"a":1}],"items":[{"b":2},{"c":3}]}`, true},
		{"items then null", `{"kind":"PodList","apiVersion":"v1","items":[{"a":1}],"items":null}`, true},
		{"kind without List", `{"kind":"Pods","apiVersion":"v1","items":[{"a":1}]}`, true},
		{"item kind not a string", `{"kind":"PodList","apiVersion":"v1","items":[{"kind":5}]}`, true},
		{"items before kind", `{"items":[{"a":1}],"apiVersion":"v1","kind":"PodList"}`, true},
		{"list managedFields kept", `{"kind":"PodList","apiVersion":"v1","metadata":{"managedFields":[]},"items":[{"metadata":{"managedFields":[]}}]}`, true},
		{"item not an object", `{"kind":"PodList","apiVersion":"v1","items":[1]}`, false},
		{"items an object", `{"kind":"PodList","apiVersion":"v1","items":{}}`, false},
		{"list without kind", `{"apiVersion":"v1","items":[]}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, strip := range []bool{false, true} {
				checkList(t, []byte(c.doc), strip, c.fast, false)
			}
		})
	}
}

// TestWatchFramesMatchApimachinery covers the frame shapes: member order, whitespace, the
// newline the apiserver ends a frame with, and the shapes left to apimachinery.
func TestWatchFramesMatchApimachinery(t *testing.T) {
	t.Parallel()
	o := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`
	cases := []struct {
		name, frame string
		fast        bool
	}{
		{"added", `{"type":"ADDED","object":` + o + "}\n", true},
		{"object first", `{"object":` + o + `,"type":"DELETED"}`, true},
		{"whitespace", " { \"type\" : \"MODIFIED\" ,\n \"object\" : " + o + " } ", true},
		{"bookmark", `{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}`, true},
		{"escaped type", `{"type":"\u0041DDED","object":` + o + `}`, true},
		{"unknown member", `{"type":"ADDED","object":` + o + `,"extra":1}`, false},
		{"type twice", `{"type":"ADDED","type":"DELETED","object":` + o + `}`, false},
		{"no object", `{"type":"ADDED"}`, false},
		{"null object", `{"type":"ADDED","object":null}`, false},
		{"type not a string", `{"type":1,"object":` + o + `}`, false},
		{"Type", `{"Type":"ADDED","type":"ADDED","object":` + o + `}`, false},
		{"empty", `{}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			checkWatchEvent(t, []byte(c.frame), c.fast, false)
		})
	}
}

// TestDeploymentsMatchApimachinery decodes realistic Deployments, one by one and as a list.
func TestDeploymentsMatchApimachinery(t *testing.T) {
	t.Parallel()
	for _, strip := range []bool{false, true} {
		t.Run(fmt.Sprintf("strip=%t", strip), func(t *testing.T) {
			t.Parallel()
			checkList(t, deployments.ListJSON(40), strip, true, false)
			for i := range 8 {
				checkObject(t, deployments.JSON(i), strip, true, false)
			}
		})
	}
}

// TestDropManagedFieldsDropsThem checks stripping is real: the realistic objects carry
// managedFields, and the decoded ones do not.
func TestDropManagedFieldsDropsThem(t *testing.T) {
	t.Parallel()
	data := deployments.ListJSON(3)
	for _, strip := range []bool{false, true} {
		l, err := unstructuredjson.List(data, unstructuredjson.Options{DropManagedFields: strip})
		if err != nil {
			t.Fatalf("decode list: %v", err)
		}
		for _, item := range l.Items {
			if got := len(item.GetManagedFields()) > 0; got == strip {
				t.Fatalf("strip=%t: item %s has managedFields: %t", strip, item.GetName(), got)
			}
		}
	}
}
