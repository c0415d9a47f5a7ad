package dynamicinformer

import (
	"fmt"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/internal/unstructuredjson"
)

// NewClient returns the dynamic client the Factory's informers should list and watch with:
// client-go's dynamic client, whose JSON responses and watch frames are decoded by
// internal/unstructuredjson with metadata.managedFields dropped while decoding. Objects are
// what client-go's own dynamic client gives, less managedFields (the Factory's transform
// would delete them anyway); the request path, watch stream handling, errors and everything
// else are client-go's. A document the fast decoder does not reproduce exactly is decoded by
// client-go's decoder, so a malformed response or frame fails exactly as it does there: a
// list fails, a watch reports an error event and the reflector restarts it.
//
// It serves informers only, and enforces it: every request but List and Watch fails with
// ErrListWatchOnly (listonly.go says why). It counts the response bodies each informer reads
// (Health.BytesReceived, bytes.go). Scripts reading objects through the `k8s` client
// use a plain dynamic client and see managedFields as the API server returns them.
func NewClient(cfg *rest.Config) (dynamic.Interface, error) {
	config := dynamic.ConfigFor(cfg)
	config.NegotiatedSerializer = newFastSerializer(config.NegotiatedSerializer)
	config.Wrap(countBodies) // each informer's bytes received (bytes.go)
	// What dynamic.NewForConfigAndClient does after ConfigFor, which would put client-go's
	// serializer back.
	config.GroupVersion = nil
	config.APIPath = "/if-you-see-this-search-for-the-break"
	restClient, err := rest.UnversionedRESTClientFor(config)
	if err != nil {
		return nil, fmt.Errorf("create informer client: %w", err)
	}
	return &client{Interface: dynamic.New(restClient), rest: restClient}, nil
}

// fastSerializer is the dynamic client's negotiated serializer with the JSON decoders
// replaced by fast ones; encoding and other media types are the dynamic client's.
type fastSerializer struct {
	runtime.NegotiatedSerializer
	types []runtime.SerializerInfo
}

func newFastSerializer(base runtime.NegotiatedSerializer) fastSerializer {
	types := append([]runtime.SerializerInfo(nil), base.SupportedMediaTypes()...)
	for i, info := range types {
		if info.MediaType != runtime.ContentTypeJSON {
			continue
		}
		opts := unstructuredjson.Options{DropManagedFields: true}
		info.Serializer = objectSerializer{Serializer: info.Serializer, opts: opts}
		if info.StreamSerializer != nil {
			stream := *info.StreamSerializer
			stream.Serializer = frameSerializer{Serializer: stream.Serializer}
			stream.Framer = framer{Framer: stream.Framer}
			info.StreamSerializer = &stream
		}
		types[i] = info
	}
	return fastSerializer{NegotiatedSerializer: base, types: types}
}

// SupportedMediaTypes implements runtime.NegotiatedSerializer.
func (s fastSerializer) SupportedMediaTypes() []runtime.SerializerInfo { return s.types }

// basicTypes are the types the dynamic client's decoder creates typed objects for when it
// decodes without a target (a watch event's object): metav1's, registered as it registers
// them. The fast path leaves those to it.
var basicTypes = func() *runtime.Scheme {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return s
}()

// objectSerializer decodes objects and lists with the fast decoder and everything else
// (and whatever the fast decoder declines) with the dynamic client's serializer, which also
// encodes.
type objectSerializer struct {
	runtime.Serializer
	opts unstructuredjson.Options
}

// Decode implements runtime.Decoder.
func (s objectSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if defaults == nil {
		if obj, gvk, ok := s.decodeFast(data, into); ok {
			return obj, &gvk, nil
		}
	}
	return s.Serializer.Decode(data, defaults, into)
}

// decodeFast decodes what the dynamic client decodes into an Unstructured or an
// UnstructuredList, with the same result, or reports false.
func (s objectSerializer) decodeFast(data []byte, into runtime.Object) (runtime.Object, schema.GroupVersionKind, bool) {
	switch into := into.(type) {
	case nil: // a watch event's object: typed by what the document says
		u, gvk, err := unstructuredjson.Object(data, s.opts)
		if err != nil || gvk.Version == "" {
			return nil, gvk, false
		}
		if _, err := basicTypes.New(gvk); err == nil {
			return nil, gvk, false // a metav1 type, such as the Status of an error event
		}
		return u, gvk, true
	case *unstructured.Unstructured:
		u, _, err := unstructuredjson.Object(data, s.opts)
		if err != nil {
			return nil, schema.GroupVersionKind{}, false
		}
		into.Object = u.Object
		return into, into.GroupVersionKind(), true
	case *unstructured.UnstructuredList:
		l, err := unstructuredjson.List(data, s.opts)
		if err != nil {
			return nil, schema.GroupVersionKind{}, false
		}
		*into = *l
		return into, into.GroupVersionKind(), true
	}
	return nil, schema.GroupVersionKind{}, false
}

// framer splits watch streams with unstructuredjson.FrameReader, which finds where a frame
// ends without decoding it twice with encoding/json as apimachinery's JSON framer does.
type framer struct {
	runtime.Framer
}

// NewFrameReader implements runtime.Framer.
func (framer) NewFrameReader(r io.ReadCloser) io.ReadCloser {
	return unstructuredjson.NewFrameReader(r)
}

// frameSerializer reads watch frames: the envelope with the fast reader, anything else with
// the dynamic client's stream serializer.
type frameSerializer struct {
	runtime.Serializer
}

// watchEventKind is the type the dynamic client's stream serializer reports for a frame.
var watchEventKind = schema.GroupVersion{Version: "v1"}.WithKind("WatchEvent")

// Decode implements runtime.Decoder. The event's Object.Raw is a sub-slice of data, not a
// copy: client-go's watch decoder decodes it before it reads the next frame into the same
// buffer, and the object decoder copies whatever it keeps.
func (s frameSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if ev, ok := into.(*metav1.WatchEvent); ok && defaults == nil {
		if typ, raw, err := unstructuredjson.WatchEvent(data); err == nil {
			ev.Type, ev.Object = typ, runtime.RawExtension{Raw: raw}
			gvk := watchEventKind
			return ev, &gvk, nil
		}
	}
	return s.Serializer.Decode(data, defaults, into)
}
