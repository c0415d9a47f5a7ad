package unstructuredjson_test

import (
	"bytes"
	"encoding/json"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/jsinformer/jsinformer/internal/deployments"
	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
)

// benchCount is the size of the benchmark list: the 20,000 Deployments of DESIGN.md.
const benchCount = 20000

var (
	benchOnce   sync.Once
	benchList   []byte
	benchFrames [][]byte
)

// benchData builds the list and the watch frames of benchCount realistic Deployments once.
func benchData(b *testing.B) ([]byte, [][]byte) {
	b.Helper()
	benchOnce.Do(func() {
		benchList = deployments.ListJSON(benchCount)
		benchFrames = make([][]byte, benchCount)
		for i := range benchFrames {
			benchFrames[i] = frameOf(string(deployments.JSON(i)))
		}
	})
	return benchList, benchFrames
}

// BenchmarkList decodes one list of 20,000 Deployments (managedFields included, ~50 MB):
//
//	go test -run '^$' -bench BenchmarkList -benchmem -count 3 ./internal/unstructuredjson/
func BenchmarkList(b *testing.B) {
	data, _ := benchData(b)
	cases := []struct {
		name   string
		decode func([]byte) error
	}{
		{"apimachinery-serializer", func(d []byte) error {
			_, _, err := reference.Decode(d, nil, &unstructured.UnstructuredList{})
			return err
		}},
		{"UnstructuredList.UnmarshalJSON", func(d []byte) error { return (&unstructured.UnstructuredList{}).UnmarshalJSON(d) }},
		{"encoding-json-any", func(d []byte) error { var v any; return json.Unmarshal(d, &v) }},
		{"fast", func(d []byte) error { _, err := unstructuredjson.List(d, unstructuredjson.Options{}); return err }},
		{"fast-drop-managedFields", func(d []byte) error {
			_, err := unstructuredjson.List(d, unstructuredjson.Options{DropManagedFields: true})
			return err
		}},
		{"ReadList-drop-managedFields", func(d []byte) error { // as a response body: 32 KiB reads
			_, err := unstructuredjson.ReadList(smallReads{bytes.NewReader(d), 32 << 10}, unstructuredjson.Options{DropManagedFields: true})
			return err
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if err := c.decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWatchFrames reads 20,000 watch frames, one Deployment each, as a streaming list
// delivers them: the frame's envelope, then its object.
//
//	go test -run '^$' -bench BenchmarkWatchFrames -benchmem -count 3 ./internal/unstructuredjson/
func BenchmarkWatchFrames(b *testing.B) {
	_, frames := benchData(b)
	var size int64
	for _, f := range frames {
		size += int64(len(f))
	}
	cases := []struct {
		name   string
		decode func([]byte) error
	}{
		{"apimachinery", func(f []byte) error {
			var ev metav1.WatchEvent
			if _, _, err := referenceStream.Decode(f, nil, &ev); err != nil {
				return err
			}
			_, err := runtime.Decode(reference, ev.Object.Raw)
			return err
		}},
		{"fast-drop-managedFields", func(f []byte) error {
			_, raw, err := unstructuredjson.WatchEvent(f)
			if err != nil {
				return err
			}
			_, _, err = unstructuredjson.Object(raw, unstructuredjson.Options{DropManagedFields: true})
			return err
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				for _, f := range frames {
					if err := c.decode(f); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
