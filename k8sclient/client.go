package k8sclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/scripting"
)

// Resolver maps resource names as users write them to resources; dynamicinformer's Resolver
// is the real one.
type Resolver interface {
	Resolve(name string) (dynamicinformer.Resource, error)
}

// Options configure a Client.
type Options struct {
	// DryRun sends every write with dryRun=All and logs what it would have written.
	DryRun bool
	// FieldManager names the writer; default "jsinformer".
	FieldManager string
	// Logger receives the dry-run records; default discards.
	Logger *slog.Logger
	// Now stamps Events; default time.Now.
	Now func() time.Time
}

// Client is the `k8s` global: the dynamic client, resources named as on the command line,
// every write dry-run when configured. Safe for concurrent use.
type Client struct {
	dyn          dynamic.Interface
	resolver     Resolver
	dryRun       []string
	fieldManager string
	logger       *slog.Logger
	events       *eventCache      // shared by the copies WithLogger makes
	now          func() time.Time // stamps Events
}

var _ scripting.Client = (*Client)(nil)

// WithLogger returns a copy whose dry-run records carry logger's attributes (script, version).
// The copies share the Event recorder's memory.
func (c *Client) WithLogger(logger *slog.Logger) *Client {
	copied := *c
	copied.logger = logger
	return &copied
}

// New returns a Client writing through dyn, resources named as resolver names them.
func New(dyn dynamic.Interface, resolver Resolver, opts Options) *Client {
	c := &Client{dyn: dyn, resolver: resolver, fieldManager: cmp.Or(opts.FieldManager, "jsinformer"),
		logger: opts.Logger, events: newEventCache(), now: opts.Now}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	if opts.DryRun {
		c.dryRun = []string{metav1.DryRunAll}
	}
	return c
}

// errNamespaceRequired: a call about one object of a namespaced resource named no namespace.
// Sent as it is, the server would answer a baffling 404 or 405 for a cluster-wide URL.
var errNamespaceRequired = errors.New("namespace required")

// resource resolves name and scopes it to namespace when the resource is namespaced. Only a
// list may leave that namespace empty, meaning all namespaces; the namespace a cluster-scoped
// resource is given is ignored.
func (c *Client) resource(name, namespace string) (dynamic.ResourceInterface, error) {
	ri, res, err := c.resourceOrAll(name, namespace)
	if err == nil && res.Namespaced && namespace == "" {
		return nil, fmt.Errorf("%w: %s is a namespaced resource", errNamespaceRequired, res)
	}
	return ri, err
}

func (c *Client) resourceOrAll(name, namespace string) (dynamic.ResourceInterface, dynamicinformer.Resource, error) {
	res, err := c.resolver.Resolve(name)
	if err != nil {
		return nil, res, err
	}
	if res.Namespaced {
		return c.dyn.Resource(res.GVR).Namespace(namespace), res, nil
	}
	return c.dyn.Resource(res.GVR), res, nil
}

func (c *Client) Get(ctx context.Context, resource, namespace, name string) (scripting.Object, error) {
	ri, err := c.resource(resource, namespace)
	if err != nil {
		return nil, err
	}
	u, err := ri.Get(ctx, name, metav1.GetOptions{})
	return objectOf(u, c.redact(resource, err))
}

func (c *Client) List(ctx context.Context, resource string, opts scripting.ListOptions) ([]scripting.Object, error) {
	ri, _, err := c.resourceOrAll(resource, opts.Namespace)
	if err != nil {
		return nil, err
	}
	list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: opts.LabelSelector, FieldSelector: opts.FieldSelector})
	if err != nil {
		return nil, c.redact(resource, err)
	}
	out := make([]scripting.Object, len(list.Items))
	for i := range list.Items {
		out[i] = list.Items[i].Object
	}
	return out, nil
}

func (c *Client) Create(ctx context.Context, resource string, obj scripting.Object) (scripting.Object, error) {
	u := &unstructured.Unstructured{Object: obj}
	ri, err := c.resource(resource, u.GetNamespace())
	if err != nil {
		return nil, err
	}
	created, err := ri.Create(ctx, u, metav1.CreateOptions{DryRun: c.dryRun, FieldManager: c.fieldManager})
	c.logDryRun(err, "create", resource, u.GetNamespace(), nameOf(created, u.GetName()))
	return objectOf(created, c.redact(resource, err))
}

func (c *Client) Update(ctx context.Context, resource string, obj scripting.Object) (scripting.Object, error) {
	return c.update(ctx, resource, obj, false)
}

func (c *Client) UpdateStatus(ctx context.Context, resource string, obj scripting.Object) (scripting.Object, error) {
	return c.update(ctx, resource, obj, true)
}

func (c *Client) update(ctx context.Context, resource string, obj scripting.Object, status bool) (scripting.Object, error) {
	u := &unstructured.Unstructured{Object: obj}
	ri, err := c.resource(resource, u.GetNamespace())
	if err != nil {
		return nil, err
	}
	opts := metav1.UpdateOptions{DryRun: c.dryRun, FieldManager: c.fieldManager}
	var updated *unstructured.Unstructured
	verb := "update"
	if status {
		verb = "updateStatus"
		updated, err = ri.UpdateStatus(ctx, u, opts)
	} else {
		updated, err = ri.Update(ctx, u, opts)
	}
	c.logDryRun(err, verb, resource, u.GetNamespace(), u.GetName())
	return objectOf(updated, c.redact(resource, err))
}

func (c *Client) Patch(ctx context.Context, resource, namespace, name string, patch []byte, opts scripting.PatchOptions) (scripting.Object, error) {
	return c.patch(ctx, resource, namespace, name, patch, opts)
}

func (c *Client) PatchStatus(ctx context.Context, resource, namespace, name string, patch []byte, opts scripting.PatchOptions) (scripting.Object, error) {
	return c.patch(ctx, resource, namespace, name, patch, opts, "status")
}

func (c *Client) patch(ctx context.Context, resource, namespace, name string, patch []byte,
	opts scripting.PatchOptions, subresources ...string) (scripting.Object, error) {
	pt, ok := opts.PatchType()
	if !ok {
		return nil, fmt.Errorf("patch: unknown type %q (want merge, json, strategic or apply)", opts.Type)
	}
	ri, err := c.resource(resource, namespace)
	if err != nil {
		return nil, err
	}
	po := metav1.PatchOptions{DryRun: c.dryRun, FieldManager: firstNonEmpty(opts.FieldManager, c.fieldManager)}
	if pt == types.ApplyPatchType {
		po.Force = &opts.Force
	}
	u, err := ri.Patch(ctx, name, pt, patch, po, subresources...)
	verb := "patch"
	if len(subresources) > 0 {
		verb = "patchStatus"
	}
	if len(c.dryRun) > 0 {
		c.logDryRun(err, verb, resource, namespace, name, "patch_type", firstNonEmpty(opts.Type, "merge"), "patch", c.shownPatch(resource, patch))
	}
	return objectOf(u, c.redact(resource, err))
}

func (c *Client) Delete(ctx context.Context, resource, namespace, name string, opts scripting.DeleteOptions) error {
	ri, err := c.resource(resource, namespace)
	if err != nil {
		return err
	}
	do := metav1.DeleteOptions{DryRun: c.dryRun}
	if opts.PropagationPolicy != "" {
		p := metav1.DeletionPropagation(opts.PropagationPolicy)
		do.PropagationPolicy = &p
	}
	err = ri.Delete(ctx, name, do)
	c.logDryRun(err, "delete", resource, namespace, name)
	return c.redact(resource, err)
}

// logDryRun reports a dry-run write the server accepted. A rejected write is not logged: it
// reaches the script as an exception, exactly as it would without --dry-run.
func (c *Client) logDryRun(err error, verb, resource, namespace, name string, extra ...any) {
	if len(c.dryRun) == 0 || err != nil {
		return
	}
	attrs := append([]any{"verb", verb, "resource", resource, "namespace", namespace, "name", name}, extra...)
	c.logger.Info("dry-run: would write", attrs...)
}

// shownPatch is a patch as the dry-run log shows it: Secret contents never reach the log.
func (c *Client) shownPatch(resource string, patch []byte) string {
	if c.isSecret(resource) {
		return "<redacted: Secret>"
	}
	return string(patch)
}

// nameOf is the name the server gave u (generateName makes one up), else fallback.
func nameOf(u *unstructured.Unstructured, fallback string) string {
	if u != nil && u.GetName() != "" {
		return u.GetName()
	}
	return fallback
}

func firstNonEmpty(a, b string) string {
	return cmp.Or(a, b)
}

func objectOf(u *unstructured.Unstructured, err error) (scripting.Object, error) {
	if err != nil {
		return nil, err
	}
	return u.Object, nil
}

func toUnstructured(obj any) (scripting.Object, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("convert event: %w", err)
	}
	return m, nil
}
