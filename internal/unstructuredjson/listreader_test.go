package unstructuredjson_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/jsinformer/jsinformer/internal/deployments"
	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
)

// smallReads returns at most n bytes per Read of r.
type smallReads struct {
	r io.Reader
	n int
}

func (s smallReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

// checkReadList holds ReadList to List on data, however it is chunked: both succeed with
// equal lists, or both fail.
func checkReadList(t *testing.T, data []byte, strip bool) {
	t.Helper()
	opts := unstructuredjson.Options{DropManagedFields: strip}
	want, wantErr := unstructuredjson.List(data, opts)
	for name, r := range readers {
		got, err := unstructuredjson.ReadList(r(data), opts)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%s: ReadList error %v, List error %v", name, err, wantErr)
		}
		if err == nil {
			mustNotDiff(t, diffList(got, want))
		}
	}
}

// TestReadListMatchesList reads lists whose items, members and whitespace straddle reads of
// every size, and malformed ones, as List decodes them.
func TestReadListMatchesList(t *testing.T) {
	t.Parallel()
	docs := map[string]string{
		"deployments":       string(deployments.ListJSON(30)),
		"empty":             ``,
		"spaces":            " \n\t ",
		"not an object":     `[{"kind":"PodList"}]`,
		"empty object":      `{}`,
		"empty object, ws":  ` { } `,
		"trailing comma":    `{"kind":"PodList","apiVersion":"v1",}`,
		"trailing item":     `{"kind":"PodList","apiVersion":"v1","items":[{},]}`,
		"missing comma":     `{"kind":"PodList" "apiVersion":"v1"}`,
		"item then garbage": `{"kind":"PodList","apiVersion":"v1","items":[{} {}]}`,
		"cut in an item":    `{"kind":"PodList","apiVersion":"v1","items":[{"metadata":{"name":"a"`,
		"cut after items":   `{"kind":"PodList","apiVersion":"v1","items":[{}]`,
		"cut in a key":      `{"kind":"PodList","apiVer`,
		"after the end":     `{"kind":"PodList","apiVersion":"v1","items":[]} x`,
		"two documents":     `{"kind":"PodList","apiVersion":"v1","items":[]}{}`,
		"ws everywhere":     " {\n \"kind\" : \"PodList\" ,\n \"apiVersion\" :\"v1\", \"items\" : [ { \"a\" : 1 } , null ,{} ] ,\"metadata\":{ } } \n",
		"escaped items key": `{"kind":"PodList","apiVersion":"v1","it\u0065ms":[{"a":1}]}`,
		"Items":             `{"kind":"PodList","apiVersion":"v1","Items":[{"a":1}]}`,
		"number member":     `{"kind":"PodList","apiVersion":"v1","n":-12.5e3,"items":[]}`,
		"literal at end":    `{"kind":"PodList","apiVersion":"v1","items":[],"x":true}`,
		"number cut":        `{"kind":"PodList","apiVersion":"v1","n":12`,
		"long number":       `{"kind":"PodList","apiVersion":"v1","n":` + strings.Repeat("7", 30000) + `,"items":[]}`,
		"long number item":  `{"kind":"PodList","apiVersion":"v1","items":[` + strings.Repeat("7", 30000) + `]}`,
		"long literal":      `{"kind":"PodList","apiVersion":"v1","n":tru` + strings.Repeat("e", 30000) + `}`,
		"bad string":        `{"kind":"PodList","apiVersion":"v1","items":[{"a":"\x01"}]}`,
		"long string":       `{"kind":"PodList","apiVersion":"v1","items":[{"a":"` + string(bytes.Repeat([]byte("x\\n"), 70000)) + `"}]}`,
		"deep":              `{"kind":"PodList","apiVersion":"v1","items":[` + string(bytes.Repeat([]byte("[{"), 4998)) + string(bytes.Repeat([]byte("}]"), 4998)) + `]}`,
		"too deep":          `{"kind":"PodList","apiVersion":"v1","items":[{"a":` + string(bytes.Repeat([]byte("["), 10000)) + string(bytes.Repeat([]byte("]"), 10000)) + `}]}`,
		"string brackets":   `{"kind":"PodList","apiVersion":"v1","items":[{"a":"}]\"{["}]}`,
		"unbalanced":        `{"kind":"PodList","apiVersion":"v1","items":[{"a":[}]}`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, strip := range []bool{false, true} {
				checkReadList(t, []byte(doc), strip)
			}
		})
	}
}

// TestReadListReportsReadErrors: an error of the reader, at any point, is ReadList's error.
func TestReadListReportsReadErrors(t *testing.T) {
	t.Parallel()
	doc := deployments.ListJSON(5)
	boom := errors.New("connection reset")
	for _, at := range []int{0, 1, 100, len(doc) / 2, len(doc) - 1, len(doc)} {
		r := io.MultiReader(bytes.NewReader(doc[:at]), iotest.ErrReader(boom))
		if _, err := unstructuredjson.ReadList(smallReads{r, 512}, unstructuredjson.Options{}); !errors.Is(err, boom) {
			t.Fatalf("error after %d bytes: %v, want %v", at, err, boom)
		}
	}
}
