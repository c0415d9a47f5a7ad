package scripting

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dop251/goja"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// Store is the Go side of ctx.store: the calling script's key-value store (package store's
// Scope, adapted by the engine), scoped to the script by whoever passes it in Options. Values
// are JSON. ctx is cancelled when the calling handler's time is up. Errors that carry a
// Kubernetes status (a conflict: 409 Conflict; a limit: 413) surface in JS with code and reason.
type Store interface {
	Get(ctx context.Context, key string) (StoreEntry, bool, error)
	Set(ctx context.Context, key string, value []byte, opts StoreSetOptions) (int64, error)
	Delete(ctx context.Context, key string, expect *int64) (bool, error)
	List(ctx context.Context, prefix string) ([]StoreEntry, error)
}

// SharedStores is implemented by a Store that also reaches shared namespaces: Shared returns
// the store of the namespace name, which the script has declared (StoreSpec.Shared). A Store
// without it makes ctx.store.shared throw.
type SharedStores interface {
	Shared(name string) Store
}

// StoreEntry is a key's value as Store reads return it.
type StoreEntry struct {
	Key     string
	Value   []byte // JSON
	Version int64
	Expires time.Time // zero: never
	// Readable: the value was written readable (StoreSetOptions.Readable).
	Readable bool
}

// StoreSetOptions are the options of ctx.store.set: a time-to-live (zero: none) and, for a
// compare-and-set, the version the key must have (0: absent).
type StoreSetOptions struct {
	TTL    time.Duration
	Expect *int64
	// Readable: the key matches the definition's store.readable, so its value may be shown.
	Readable bool
}

// storeObject is ctx.store. Reads are allowed everywhere; writes are side effects, refused in
// validate, mutate and the calls that must be free of them (effects.go). Used only on the
// executor goroutine (env.go).
type storeObject struct {
	*callEnv
	store Store // nil: every call throws
	ctx   func() context.Context
	// spec is the definition's store declaration, read once the definition has loaded.
	spec *StoreSpec
	// shared is the shared namespace this object reaches ("" for the script's own store);
	// objects caches ctx.store.shared's answers on the script's own object.
	shared  string
	objects map[string]goja.Value
}

var (
	storeKeys       = []string{"get", "set", "delete", "list", "shared"}
	sharedStoreKeys = []string{"get", "set", "delete", "list", "name"}
)

func newStoreObject(env *callEnv, store Store, spec *StoreSpec, ctx func() context.Context) *storeObject {
	return &storeObject{callEnv: env, store: store, spec: spec, ctx: ctx, objects: map[string]goja.Value{}}
}

// exports is the ctx.store object, read-only like ctx.
func (s *storeObject) exports() *goja.Object {
	vals := map[string]goja.Value{
		"get": s.rt.ToValue(s.get), "set": s.rt.ToValue(s.set),
		"delete": s.rt.ToValue(s.del), "list": s.rt.ToValue(s.list),
	}
	keys := storeKeys
	if s.shared == "" {
		vals["shared"] = s.rt.ToValue(s.sharedStore)
	} else {
		keys, vals["name"] = sharedStoreKeys, s.rt.ToValue(s.shared)
	}
	return s.rt.NewDynamicObject(&frozen{rt: s.rt, keys: keys, vals: vals})
}

// sharedStore is ctx.store.shared(name): the store of a shared namespace the definition
// declares (store.shared), with the same methods as ctx.store.
func (s *storeObject) sharedStore(call goja.FunctionCall) goja.Value {
	const fn = "ctx.store.shared"
	defer s.guard(fn)
	name := s.stringArg(fn, call, 0, "name")
	if obj, ok := s.objects[name]; ok {
		return obj
	}
	if !slices.Contains(s.spec.Shared, name) {
		s.throwf("%s: %q is not declared: add it to the definition's store.shared (declared: %v)", fn, name, s.spec.Shared)
	}
	sharer, ok := s.store.(SharedStores)
	if s.store == nil || !ok {
		s.throwf("%s: the store is not available here (start the runner with --store)", fn)
	}
	o := &storeObject{callEnv: s.callEnv, store: sharer.Shared(name), ctx: s.ctx, spec: s.spec, shared: name}
	obj := o.exports()
	s.objects[name] = obj
	return obj
}

// prefix is the start of the names of this object's functions in errors.
func (s *storeObject) prefix() string {
	if s.shared == "" {
		return "ctx.store"
	}
	return fmt.Sprintf("ctx.store.shared(%q)", s.shared)
}

func (s *storeObject) storeFor(fn string) Store {
	if s.store == nil {
		s.throwf("%s: the store is not available here (start the runner with --store)", fn)
	}
	return s.store
}

// write refuses a write where side effects are not allowed.
func (s *storeObject) write(fn string) {
	s.sideEffect(fn)
	if s.noEffects != "" {
		s.throwf("%s in %s: %w", fn, s.noEffects, ErrSideEffect)
	}
}

// keyArg reads the key every call starts with.
func (s *storeObject) keyArg(fn string, call goja.FunctionCall) string {
	key := s.stringArg(fn, call, 0, "key")
	if key == "" {
		panic(s.rt.NewTypeError(fn + ": key is required"))
	}
	return key
}

// throwStore throws err as a JS Error with code and reason when it has a status.
func (s *storeObject) throwStore(fn, key string, err error) {
	jsErr := s.newError(fmt.Errorf("%s %q: %w", fn, key, err))
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		st := status.Status()
		_ = jsErr.Set("code", int64(st.Code))
		_ = jsErr.Set("reason", string(st.Reason))
	}
	panic(jsErr)
}

// get is ctx.store.get(key): {key, value, version, expiresAt} or null.
func (s *storeObject) get(call goja.FunctionCall) goja.Value {
	fn := s.prefix() + ".get"
	defer s.guard(fn)
	key := s.keyArg(fn, call)
	e, ok, err := s.storeFor(fn).Get(s.ctx(), key)
	if err != nil {
		s.throwStore(fn, key, err)
	}
	if !ok {
		return goja.Null()
	}
	return s.entry(e)
}

// list is ctx.store.list(prefix?): the entries whose keys start with prefix, sorted by key.
func (s *storeObject) list(call goja.FunctionCall) goja.Value {
	fn := s.prefix() + ".list"
	defer s.guard(fn)
	prefix := s.stringArg(fn, call, 0, "prefix")
	entries, err := s.storeFor(fn).List(s.ctx(), prefix)
	if err != nil {
		s.throwStore(fn, prefix, err)
	}
	items := make([]any, len(entries))
	for i, e := range entries {
		items[i] = s.entry(e)
	}
	return s.rt.NewArray(items...)
}

// entry is e as scripts see it; value is a fresh, mutable copy.
func (s *storeObject) entry(e StoreEntry) goja.Value {
	obj := s.rt.NewObject()
	_ = obj.Set("key", e.Key)
	_ = obj.Set("value", s.parse(e.Value))
	_ = obj.Set("version", e.Version)
	if e.Expires.IsZero() {
		_ = obj.Set("expiresAt", goja.Null())
	} else {
		_ = obj.Set("expiresAt", e.Expires.UnixMilli())
	}
	return obj
}

func (s *storeObject) parse(b []byte) goja.Value {
	v, err := s.internals.parse(goja.Undefined(), s.rt.ToValue(string(b)))
	if err != nil {
		panic(err)
	}
	return v
}

// set is ctx.store.set(key, value, {ttl, version}): the key's new version.
func (s *storeObject) set(call goja.FunctionCall) goja.Value {
	fn := s.prefix() + ".set"
	defer s.guard(fn)
	s.write(fn)
	key := s.keyArg(fn, call)
	value := s.stringify(fn, call.Argument(1), goja.Undefined(), goja.Undefined())
	if !isString(value) {
		panic(s.rt.NewTypeError(fmt.Sprintf("%s: value must be representable as JSON, got %s", fn, typeName(call.Argument(1)))))
	}
	o := s.options(fn, call.Argument(2), "ttl", "version")
	opts := StoreSetOptions{Expect: s.versionOpt(fn, o), Readable: s.spec.IsReadable(key)}
	if ttl, ok := o["ttl"]; ok {
		d, err := parseRequeue(ttl)
		if err != nil {
			panic(s.rt.NewTypeError(fmt.Sprintf("%s: ttl: %v", fn, err)))
		}
		opts.TTL = d
	}
	version, err := s.storeFor(fn).Set(s.ctx(), key, []byte(value.String()), opts)
	if err != nil {
		s.throwStore(fn, key, err)
	}
	return s.rt.ToValue(version)
}

// del is ctx.store.delete(key, {version}): whether the key existed.
func (s *storeObject) del(call goja.FunctionCall) goja.Value {
	fn := s.prefix() + ".delete"
	defer s.guard(fn)
	s.write(fn)
	key := s.keyArg(fn, call)
	expect := s.versionOpt(fn, s.options(fn, call.Argument(1), "version"))
	existed, err := s.storeFor(fn).Delete(s.ctx(), key, expect)
	if err != nil {
		s.throwStore(fn, key, err)
	}
	return s.rt.ToValue(existed)
}

// versionOpt reads the version option: a non-negative integer, or nil when not given.
func (s *storeObject) versionOpt(fn string, o map[string]goja.Value) *int64 {
	v, ok := o["version"]
	if !ok {
		return nil
	}
	n, isInt := v.Export().(int64)
	if !isInt || n < 0 {
		panic(s.rt.NewTypeError(fmt.Sprintf("%s: version must be a version a get returned (or 0: absent), got %s", fn, v)))
	}
	return &n
}
