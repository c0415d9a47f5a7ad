package dynamicinformer

import (
	"bytes"
	"io"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	restclientwatch "k8s.io/client-go/rest/watch"

	"github.com/jsinformer/jsinformer/internal/deployments"
)

const benchObjects = 20000

// serializers are client-go's dynamic client's and this package's, by name.
func serializers() []struct {
	name string
	ns   runtime.NegotiatedSerializer
} {
	base := dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer
	return []struct {
		name string
		ns   runtime.NegotiatedSerializer
	}{{"client-go", base}, {"fast", newFastSerializer(base)}}
}

func jsonInfo(tb testing.TB, ns runtime.NegotiatedSerializer) runtime.SerializerInfo {
	tb.Helper()
	info, ok := runtime.SerializerInfoForMediaType(ns.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok {
		tb.Fatal("no JSON serializer")
	}
	return info
}

// watchDecoder is client-go's watch decoding (rest.Request.newStreamWatcher) over stream.
func watchDecoder(tb testing.TB, ns runtime.NegotiatedSerializer, stream []byte) *restclientwatch.Decoder {
	info := jsonInfo(tb, ns)
	frames := info.StreamSerializer.NewFrameReader(io.NopCloser(bytes.NewReader(stream)))
	return restclientwatch.NewDecoder(streaming.NewDecoder(frames, info.StreamSerializer.Serializer), info.Serializer)
}

// BenchmarkWatchDecode decodes the watch stream of a streaming list of 20,000 Deployments
// the way client-go's watch does (framer, envelope, object), with client-go's serializer
// and with this package's:
//
//	go test -run '^$' -bench BenchmarkWatchDecode -benchmem -count 3 ./dynamicinformer/
func BenchmarkWatchDecode(b *testing.B) {
	var stream []byte
	for i := range benchObjects {
		stream = append(stream, deployments.WatchFrame("ADDED", i)...)
	}
	for _, s := range serializers() {
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			for b.Loop() {
				dec := watchDecoder(b, s.ns, stream)
				for range benchObjects {
					if _, _, err := dec.Decode(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkListDecode decodes one list of 20,000 Deployments as the dynamic client's List
// does:
//
//	go test -run '^$' -bench BenchmarkListDecode -benchmem -count 3 ./dynamicinformer/
func BenchmarkListDecode(b *testing.B) {
	list := deployments.ListJSON(benchObjects)
	for _, s := range serializers() {
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(len(list)))
			dec := jsonInfo(b, s.ns).Serializer
			for b.Loop() {
				if _, _, err := dec.Decode(list, nil, &unstructured.UnstructuredList{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
