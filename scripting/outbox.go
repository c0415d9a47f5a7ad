package scripting

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dop251/goja"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// The outbox: side effects performed once per key. A definition declares
//
//	outbox: { deliver(message, ctx) { ... }, attempts, backoff, maxBackoff, keep, interrupted }
//
// and its handlers call ctx.outbox.send(key, message, {about}), which records the message
// durably under the key unless the key was sent before (Options.Outbox, the engine's). The
// engine then calls Deliver with the recorded message, on whichever replica claims it, again
// after each failure (a throw or a rejected promise) with backoff: deliver is re-entered from
// the durable message, not from a closure of the handler that sent it, so a retry survives
// restarts, reloads and hand-overs.

// Outbox is the Go side of ctx.outbox.send: the calling script's outbox, passed in Options.
// Send records message (JSON) under key unless the key has a record already, and reports
// whether it recorded it; about, when not nil, is the object the message is about (for the
// Event of a failed delivery). Errors that carry a Kubernetes status (a limit: 413) surface
// in JS with code and reason.
type Outbox interface {
	Send(ctx context.Context, key string, message []byte, about *ObjectRef) (bool, error)
}

// ObjectRef names the object a message is about.
type ObjectRef struct {
	APIVersion, Kind, Namespace, Name, UID string
}

// OutboxSpec is a definition's `outbox`, with defaults filled in by the engine (zero: the
// default).
type OutboxSpec struct {
	Attempts   int           // deliveries before a message fails for good
	Backoff    time.Duration // the wait after the first failure, doubled after each
	MaxBackoff time.Duration // the longest wait
	Keep       time.Duration // how long a key is remembered after its message is done or failed
	// AtMostOnce: interrupted: "fail" — a delivery interrupted by a crash is not repeated.
	AtMostOnce bool
}

// Delivery is ctx.delivery during deliver: which message, which attempt.
type Delivery struct {
	Key         string
	Attempt     int  // 1 for the first delivery
	Attempts    int  // the limit
	Interrupted bool // the previous attempt was interrupted: its outcome is unknown
}

var outboxKeys = []string{"deliver", "attempts", "backoff", "maxBackoff", "keep", "interrupted"}

// maxOutboxAttempts bounds `attempts`.
const maxOutboxAttempts = 1000

// readOutbox reads the optional `outbox`.
func (s *instance) readOutbox(v goja.Value, l locator) error {
	if isMissing(v) {
		return nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return invalidf(l.file, l.line("outbox"), "'outbox' must be an object { deliver(message, ctx), attempts, backoff, ... }, got "+typeName(v))
	}
	if err := l.checkKeys(obj, "outbox", outboxKeys); err != nil {
		return err
	}
	fn, err := optionalFunc(obj.Get("deliver"), "outbox.deliver", l)
	if err != nil {
		return err
	}
	if fn == nil {
		return invalidf(l.file, l.line("outbox"), "'outbox.deliver' must be a function (message, ctx)")
	}
	spec := &OutboxSpec{}
	if spec.Attempts, err = readInt(obj.Get("attempts"), "attempts", 1, 0, l); err != nil {
		return err
	}
	if spec.Attempts > maxOutboxAttempts {
		return invalidf(l.file, l.line("attempts"), fmt.Sprintf("'outbox.attempts' must be at most %d", maxOutboxAttempts))
	}
	for _, d := range []struct {
		key string
		to  *time.Duration
		min time.Duration
	}{{"backoff", &spec.Backoff, 100 * time.Millisecond}, {"maxBackoff", &spec.MaxBackoff, 100 * time.Millisecond}, {"keep", &spec.Keep, time.Minute}} {
		if *d.to, err = readOutboxDuration(obj.Get(d.key), d.key, d.min, l); err != nil {
			return err
		}
	}
	switch i := obj.Get("interrupted"); {
	case isMissing(i) || i.String() == "redeliver":
	case i.String() == "fail":
		spec.AtMostOnce = true
	default:
		return invalidf(l.file, l.line("interrupted"), "'outbox.interrupted' must be \"redeliver\" or \"fail\", got "+typeName(i))
	}
	s.def.Outbox, s.deliverFn, s.outboxObj = spec, fn, obj
	return nil
}

// readOutboxDuration reads a duration option: a string such as "30s" or milliseconds, at
// least lowest; zero when missing.
func readOutboxDuration(v goja.Value, key string, lowest time.Duration, l locator) (time.Duration, error) {
	if isMissing(v) {
		return 0, nil
	}
	d, err := parseRequeue(v)
	if err == nil && d < lowest {
		err = fmt.Errorf("%s is less than %s", d, lowest)
	}
	if err != nil {
		return 0, invalidf(l.file, l.line(key), fmt.Sprintf("'outbox.%s': %v", key, err))
	}
	return d, nil
}

// Deliver calls outbox.deliver(message, ctx) with message (JSON) and ctx.delivery set from d.
// A throw or a rejected promise is the delivery's failure.
func (s *Script) Deliver(message []byte, d Delivery, ev Event) error {
	const label = "outbox.deliver"
	if s.def.Outbox == nil {
		return s.noop(label)
	}
	ev.Delivery = &d
	return s.run(label, func(in *instance) error { return in.deliver(label, message, ev) })
}

// deliver is Deliver's call on in's goroutine.
func (s *instance) deliver(label string, message []byte, ev Event) (err error) {
	if err := s.begin(label); err != nil {
		return err
	}
	defer s.end(&err)
	s.ctx.ev = ev
	msg, err := s.internals.parse(goja.Undefined(), s.rt.ToValue(string(message)))
	if err != nil {
		return s.scriptError(err)
	}
	_, err = s.call(s.outboxObj, s.deliverFn, msg, s.ctxObj)
	return err
}

// outboxObject is ctx.outbox. send is a side effect, refused where store writes are. Used only
// on the executor goroutine (env.go).
type outboxObject struct {
	*callEnv
	outbox  Outbox // nil: send throws
	defined func() bool
	ctx     func() context.Context
}

var outboxCtxKeys = []string{"send"}

func (o *outboxObject) exports() *goja.Object {
	return o.rt.NewDynamicObject(&frozen{rt: o.rt, keys: outboxCtxKeys, vals: map[string]goja.Value{
		"send": o.rt.ToValue(o.send),
	}})
}

// send is ctx.outbox.send(key, message, {about}): true when the message was recorded, false
// when the key was sent before.
func (o *outboxObject) send(call goja.FunctionCall) goja.Value {
	const fn = "ctx.outbox.send"
	defer o.guard(fn)
	o.sideEffect(fn)
	if o.noEffects != "" {
		o.throwf("%s in %s: %w", fn, o.noEffects, ErrSideEffect)
	}
	if !o.defined() {
		o.throwf("%s: the definition has no outbox: declare outbox: { deliver(message, ctx) { ... } }", fn)
	}
	if o.outbox == nil {
		o.throwf("%s: the outbox is not available here (start the runner with --store)", fn)
	}
	key := o.stringArg(fn, call, 0, "key")
	if key == "" {
		panic(o.rt.NewTypeError(fn + ": key is required"))
	}
	message := o.stringify(fn, call.Argument(1), goja.Undefined(), goja.Undefined())
	if !isString(message) {
		panic(o.rt.NewTypeError(fmt.Sprintf("%s: message must be representable as JSON, got %s", fn, typeName(call.Argument(1)))))
	}
	about := o.aboutOpt(fn, o.options(fn, call.Argument(2), "about")["about"])
	sent, err := o.outbox.Send(o.ctx(), key, []byte(message.String()), about)
	if err != nil {
		jsErr := o.newError(fmt.Errorf("%s %q: %w", fn, key, err))
		var status apierrors.APIStatus
		if errors.As(err, &status) {
			_ = jsErr.Set("code", int64(status.Status().Code))
			_ = jsErr.Set("reason", string(status.Status().Reason))
		}
		panic(jsErr)
	}
	return o.rt.ToValue(sent)
}

// aboutOpt reads the about option: a Kubernetes object (its apiVersion, kind and metadata).
func (o *outboxObject) aboutOpt(fn string, v goja.Value) *ObjectRef {
	if isMissing(v) {
		return nil
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		panic(o.rt.NewTypeError(fmt.Sprintf("%s: about must be a Kubernetes object, got %s", fn, typeName(v))))
	}
	str := func(from *goja.Object, key string) string {
		if from == nil {
			return ""
		}
		if x := from.Get(key); isString(x) && jsLength(x) <= maxKeyLength {
			return x.String()
		}
		return ""
	}
	var meta *goja.Object
	if m, ok := obj.Get("metadata").(*goja.Object); ok {
		meta = m
	}
	ref := &ObjectRef{APIVersion: str(obj, "apiVersion"), Kind: str(obj, "kind"),
		Namespace: str(meta, "namespace"), Name: str(meta, "name"), UID: str(meta, "uid")}
	if ref.Kind == "" || ref.Name == "" {
		panic(o.rt.NewTypeError(fmt.Sprintf("%s: about must be a Kubernetes object with kind and metadata.name", fn)))
	}
	return ref
}

// deliveryValue is ctx.delivery: {key, attempt, attempts, interrupted} during deliver,
// undefined elsewhere.
func (c *ctxObject) deliveryValue() goja.Value {
	d := c.ev.Delivery
	if d == nil {
		return goja.Undefined()
	}
	obj := c.env.rt.NewObject()
	_ = obj.Set("key", d.Key)
	_ = obj.Set("attempt", d.Attempt)
	_ = obj.Set("attempts", d.Attempts)
	_ = obj.Set("interrupted", d.Interrupted)
	return obj
}
