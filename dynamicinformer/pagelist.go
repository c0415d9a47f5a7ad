package dynamicinformer

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
)

// client is what NewClient returns: client-go's dynamic client (with the fast decoders), and
// the page requests (fetchPage, decodePage) that the Factory's informers list with (pages).
type client struct {
	dynamic.Interface
	rest     rest.Interface
	fallback runtime.Decoder // the dynamic client's own JSON decoder
}

// parameterCodec encodes list options into query parameters as the dynamic client does.
var parameterCodec = func() runtime.ParameterCodec {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return runtime.NewParameterCodec(s)
}()

// pageBuffers hold list bodies while they are decoded. A paged list reads one page after
// another into the same buffer instead of allocating (and growing) one per response, as
// client-go's request path does: a page's body is garbage once decoded, and tens of MB of it
// during an initial list would raise the process's peak memory.
var pageBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer is the largest buffer kept for reuse: a server that ignores limit sends the
// whole list in one body, which should not stay allocated.
const maxPooledBuffer = 16 << 20

// fetchPage sends the request the dynamic client's List sends, with the same errors, and
// reads the body into a pooled buffer, which the caller hands to decodePage or putPageBuffer.
func (c *client) fetchPage(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions) (*bytes.Buffer, error) {
	body, err := c.rest.Get().AbsPath(resourcePath(gvr, namespace)...).
		SpecificallyVersionedParams(&opts, parameterCodec, schema.GroupVersion{Version: "v1"}).
		Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { _ = body.Close() }()
	buf := pageBuffers.Get().(*bytes.Buffer)
	if _, err := buf.ReadFrom(body); err != nil {
		putPageBuffer(buf)
		return nil, fmt.Errorf("read list of %s: %w", FormatGVR(gvr), err)
	}
	return buf, nil
}

// decodePage decodes a list body as the dynamic client's List does, with the fast decoder,
// and puts the buffer back. A body the fast decoder declines goes to client-go's decoder,
// which gives its own result or error.
func (c *client) decodePage(buf *bytes.Buffer) (*unstructured.UnstructuredList, error) {
	defer putPageBuffer(buf)
	if list, err := unstructuredjson.List(buf.Bytes(), unstructuredjson.Options{DropManagedFields: true}); err == nil {
		return list, nil
	}
	var list unstructured.UnstructuredList
	if _, _, err := c.fallback.Decode(buf.Bytes(), nil, &list); err != nil {
		return nil, err
	}
	return &list, nil
}

func putPageBuffer(buf *bytes.Buffer) {
	if buf.Cap() > maxPooledBuffer {
		return
	}
	buf.Reset()
	pageBuffers.Put(buf)
}

// resourcePath is the dynamic client's URL path of a resource's collection.
func resourcePath(gvr schema.GroupVersionResource, namespace string) []string {
	path := []string{"apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		path = []string{"api", gvr.Version}
	}
	if namespace != "" {
		path = append(path, "namespaces", namespace)
	}
	return append(path, gvr.Resource)
}
