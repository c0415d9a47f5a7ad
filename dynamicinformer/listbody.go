package dynamicinformer

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
)

// client is what NewClient returns: client-go's dynamic client with the fast decoders, and
// list, which the Factory's informers list with.
type client struct {
	dynamic.Interface
	rest rest.Interface
}

// parameterCodec encodes list options into query parameters as the dynamic client does.
var parameterCodec = func() runtime.ParameterCodec {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return runtime.NewParameterCodec(s)
}()

// list lists what the dynamic client's List lists, with the same request, and decodes the
// response body while it arrives (unstructuredjson.ReadList): the body is never held whole,
// which for a list of every object of a resource is tens or hundreds of MB, and decoding
// overlaps the transfer. The request's errors are the dynamic client's. A body that
// ReadList cannot decode (a broken connection, or anything the fast decoder leaves to
// client-go's) has been consumed by then, so the list is asked for again through the
// dynamic client's List, whose result or error is returned: client-go's verdict, at the
// price of a second request, for what a healthy apiserver never sends.
//
// A partitioned informer's shard (nil for others) drops the items outside its partition as
// each is decoded, so the list never holds them; the fallback list is filtered once decoded.
func (c *client) list(ctx context.Context, gvr schema.GroupVersionResource, namespace string, opts metav1.ListOptions, shard *partition) (*unstructured.UnstructuredList, error) {
	body, err := c.rest.Get().AbsPath(resourcePath(gvr, namespace)...).
		SpecificallyVersionedParams(&opts, parameterCodec, schema.GroupVersion{Version: "v1"}).
		Stream(ctx)
	if err != nil {
		return nil, err
	}
	decode := unstructuredjson.Options{DropManagedFields: true}
	var counts tally
	if shard != nil {
		decode.Keep = shard.keepInto(&counts)
	}
	list, err := unstructuredjson.ReadList(body, decode)
	_ = body.Close()
	if err == nil {
		shard.add(counts)
		return list, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	list, err = c.Resource(gvr).Namespace(namespace).List(ctx, opts)
	if err == nil {
		shard.filterList(list)
	}
	return list, err
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
