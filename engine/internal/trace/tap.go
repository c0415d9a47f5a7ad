package trace

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/scripting"
)

// A Tap belongs to one Script (one runtime): its owner opens it around each call, and the
// script's logger and k8s client, wrapped by Tapped, add the call's log lines and writes to
// the record being built. A Script's calls never overlap, so one open record per tap is
// enough; the mutex is for a runtime abandoned as stuck, which may still log after its call
// has returned.
type Tap struct {
	mu     sync.Mutex
	cur    *inspection.TraceRecord
	dryRun bool // the open call's writes go with dryRun=All (replay --dry-run)
}

// Open starts collecting into rec; dryRun: the call's writes must go with dryRun=All.
// Nil-safe.
func (t *Tap) Open(rec *inspection.TraceRecord, dryRun bool) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.cur, t.dryRun = rec, dryRun
	t.mu.Unlock()
}

// Close stops collecting; nil-safe.
func (t *Tap) Close() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.cur, t.dryRun = nil, false
	t.mu.Unlock()
}

func (t *Tap) addLog(line inspection.LogLine) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		return
	}
	if len(t.cur.Logs) >= inspection.TraceLogsPerCall {
		t.cur.Truncated++
		return
	}
	t.cur.Logs = append(t.cur.Logs, line)
}

func (t *Tap) addWrite(w inspection.APIWrite) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		return
	}
	if len(t.cur.Writes) >= inspection.TraceWritesPerCall {
		t.cur.Truncated++
		return
	}
	t.cur.Writes = append(t.cur.Writes, w)
}

// addRequest notes a fetch request of the open call (counted with the writes' limit).
func (t *Tap) addRequest(r scripting.RequestRecord) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == nil {
		return
	}
	if len(t.cur.Requests) >= inspection.TraceWritesPerCall {
		t.cur.Truncated++
		return
	}
	t.cur.Requests = append(t.cur.Requests, inspection.HTTPRequest{Method: r.Method, Host: r.Host, Path: r.Path,
		Status: r.Status, DurationMs: float64(r.Duration.Microseconds()) / 1000, Bytes: r.Bytes, Error: r.Error})
}

// AddEnqueued notes a reconcile key the open call enqueued; nil-safe.
func (t *Tap) AddEnqueued(key string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur != nil && len(t.cur.Enqueued) < inspection.TraceWritesPerCall {
		t.cur.Enqueued = append(t.cur.Enqueued, key)
	}
}

// forcedDryRun reports whether the open call's writes must be dry-run.
func (t *Tap) forcedDryRun() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.dryRun
}

// Tapped returns opts whose logger and client feed a new Tap, and the Tap. dryRun is the
// runner's --dry-run (every write is one); force marks a write's context for dryRun=All, for
// the calls opened with dryRun (the engine's transport adds the parameter).
func Tapped(opts scripting.Options, dryRun bool, force func(context.Context) context.Context) (scripting.Options, *Tap) {
	t := &Tap{}
	if opts.Logger != nil {
		opts.Logger = slog.New(&tapHandler{next: opts.Logger.Handler(), tap: t})
	}
	if opts.Client != nil {
		opts.Client = &tapClient{next: opts.Client, tap: t, dryRun: dryRun, force: force}
	}
	if opts.Store != nil {
		opts.Store = tapStore{next: opts.Store, tap: t}
	}
	next := opts.OnRequest
	opts.OnRequest = func(r scripting.RequestRecord) {
		t.addRequest(r)
		if next != nil {
			next(r)
		}
	}
	return opts, t
}

// tapHandler passes every record on and copies the script's own output into the open call.
type tapHandler struct {
	next slog.Handler
	tap  *Tap
}

func (h *tapHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *tapHandler) Handle(ctx context.Context, r slog.Record) error {
	msg := r.Message
	if len(msg) > messageChars {
		msg = msg[:messageChars] + "…"
	}
	line := inspection.LogLine{Time: r.Time, Level: r.Level.String(), Message: msg}
	r.Attrs(func(a slog.Attr) bool {
		if line.Attrs == nil {
			line.Attrs = map[string]any{}
		}
		line.Attrs[a.Key] = attrValue(a.Value)
		return true
	})
	h.tap.addLog(line)
	return h.next.Handle(ctx, r)
}

func (h *tapHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &tapHandler{next: h.next.WithAttrs(attrs), tap: h.tap}
}

func (h *tapHandler) WithGroup(name string) slog.Handler {
	return &tapHandler{next: h.next.WithGroup(name), tap: h.tap}
}

// attrValue is v as JSON would show it: groups become objects.
func attrValue(v slog.Value) any {
	v = v.Resolve()
	if v.Kind() != slog.KindGroup {
		return v.Any()
	}
	out := map[string]any{}
	for _, a := range v.Group() {
		out[a.Key] = attrValue(a.Value)
	}
	return out
}

// tapClient is the k8s global of a tapped Script: reads pass through, writes are noted in the
// open call with their answer.
type tapClient struct {
	next   scripting.Client
	tap    *Tap
	dryRun bool // the runner's --dry-run
	force  func(context.Context) context.Context
}

var _ scripting.Client = (*tapClient)(nil)

func (c *tapClient) Get(ctx context.Context, resource, namespace, name string) (scripting.Object, error) {
	return c.next.Get(ctx, resource, namespace, name)
}

func (c *tapClient) List(ctx context.Context, resource string, opts scripting.ListOptions) ([]scripting.Object, error) {
	return c.next.List(ctx, resource, opts)
}

func (c *tapClient) Create(ctx context.Context, resource string, obj scripting.Object) (scripting.Object, error) {
	ctx, dry := c.ctx(ctx)
	out, err := c.next.Create(ctx, resource, obj)
	u := unstructured.Unstructured{Object: obj}
	name := u.GetName()
	if created := objectU(out); created != nil && created.GetName() != "" {
		name = created.GetName() // generateName made one up
	}
	c.note("create", resource, u.GetNamespace(), name, dry, 201, err)
	return out, err
}

func (c *tapClient) Update(ctx context.Context, resource string, obj scripting.Object) (scripting.Object, error) {
	ctx, dry := c.ctx(ctx)
	out, err := c.next.Update(ctx, resource, obj)
	u := unstructured.Unstructured{Object: obj}
	c.note("update", resource, u.GetNamespace(), u.GetName(), dry, 200, err)
	return out, err
}

func (c *tapClient) UpdateStatus(ctx context.Context, resource string, obj scripting.Object) (scripting.Object, error) {
	ctx, dry := c.ctx(ctx)
	out, err := c.next.UpdateStatus(ctx, resource, obj)
	u := unstructured.Unstructured{Object: obj}
	c.note("updateStatus", resource, u.GetNamespace(), u.GetName(), dry, 200, err)
	return out, err
}

func (c *tapClient) Patch(ctx context.Context, resource, namespace, name string, patch []byte, opts scripting.PatchOptions) (scripting.Object, error) {
	ctx, dry := c.ctx(ctx)
	out, err := c.next.Patch(ctx, resource, namespace, name, patch, opts)
	c.note("patch", resource, namespace, name, dry, 200, err)
	return out, err
}

func (c *tapClient) PatchStatus(ctx context.Context, resource, namespace, name string, patch []byte, opts scripting.PatchOptions) (scripting.Object, error) {
	ctx, dry := c.ctx(ctx)
	out, err := c.next.PatchStatus(ctx, resource, namespace, name, patch, opts)
	c.note("patchStatus", resource, namespace, name, dry, 200, err)
	return out, err
}

func (c *tapClient) Delete(ctx context.Context, resource, namespace, name string, opts scripting.DeleteOptions) error {
	ctx, dry := c.ctx(ctx)
	err := c.next.Delete(ctx, resource, namespace, name, opts)
	c.note("delete", resource, namespace, name, dry, 200, err)
	return err
}

func (c *tapClient) Event(ctx context.Context, obj scripting.Object, eventType, reason, message string) error {
	ctx, dry := c.ctx(ctx)
	err := c.next.Event(ctx, obj, eventType, reason, message)
	u := unstructured.Unstructured{Object: obj}
	c.note("event", "v1/events", u.GetNamespace(), u.GetName(), dry, 201, err)
	return err
}

// ctx marks ctx for dryRun=All when the open call asks for it (force; the transport adds
// it), and reports whether the write is a dry run.
func (c *tapClient) ctx(ctx context.Context) (context.Context, bool) {
	if c.tap.forcedDryRun() {
		return c.force(ctx), true
	}
	return ctx, c.dryRun
}

func (c *tapClient) note(verb, resource, namespace, name string, dry bool, okCode int, err error) {
	w := inspection.APIWrite{Verb: verb, Resource: resource, Namespace: namespace, Name: name, DryRun: dry, Code: okCode}
	if err != nil {
		w.Code, w.Error = 0, err.Error()
		var st apierrors.APIStatus
		if errors.As(err, &st) {
			w.Code = int(st.Status().Code)
		}
	}
	c.tap.addWrite(w)
}

func objectU(obj scripting.Object) *unstructured.Unstructured {
	if obj == nil {
		return nil
	}
	return &unstructured.Unstructured{Object: obj}
}
