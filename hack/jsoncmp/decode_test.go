package jsoncmp

import (
	"encoding/json"
	"testing"

	"github.com/bytedance/sonic"
	gojson "github.com/goccy/go-json"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/internal/deployments"
	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
)

var list = deployments.ListJSON(20000)

// BenchmarkDecode decodes the list with each candidate, into what it decodes into: the
// libraries into any (every number a float64), apimachinery and unstructuredjson into an
// UnstructuredList (integers int64).
func BenchmarkDecode(b *testing.B) {
	cases := []struct {
		name   string
		decode func([]byte) error
	}{
		{"UnstructuredList.UnmarshalJSON", func(d []byte) error { return (&unstructured.UnstructuredList{}).UnmarshalJSON(d) }},
		{"encoding-json", func(d []byte) error { var v any; return json.Unmarshal(d, &v) }},
		{"goccy-go-json", func(d []byte) error { var v any; return gojson.Unmarshal(d, &v) }},
		{"sonic-std", func(d []byte) error { var v any; return sonic.ConfigStd.Unmarshal(d, &v) }},
		{"sonic-default", func(d []byte) error { var v any; return sonic.ConfigDefault.Unmarshal(d, &v) }},
		{"unstructuredjson", func(d []byte) error { _, err := unstructuredjson.List(d, unstructuredjson.Options{}); return err }},
		{"unstructuredjson-drop-managedFields", func(d []byte) error {
			_, err := unstructuredjson.List(d, unstructuredjson.Options{DropManagedFields: true})
			return err
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(list)))
			for b.Loop() {
				if err := c.decode(list); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
