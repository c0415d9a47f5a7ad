package scripting

import (
	"github.com/jsinformer/jsinformer/internal/netguard"

	"fmt"
	"math"
	"slices"

	"github.com/dop251/goja"
)

const (
	defaultConcurrency = 1
	defaultMaxRetries  = 5
)

var definitionKeys = []string{
	"watch", "indexers", "onAdd", "onUpdate", "onDelete", "reconcile", "concurrency", "maxRetries", "schedule", "metrics", "permissions",
	"validate", "mutate", "admission", "net", "store", "outbox", "shard",
}

// loadDefinition reads and validates the exported definition. It runs under the call deadline
// because reading properties may run script getters.
func (s *instance) loadDefinition(exports goja.Value, src []byte) (err error) {
	if err := s.beginPure("definition", "the definition"); err != nil {
		return err
	}
	defer s.end(&err)
	l := locator{file: s.name, src: src}
	def, err := s.defaultExport(exports, l)
	if err != nil {
		return err
	}
	s.defObj = def
	if err := l.checkKeys(def, "", definitionKeys); err != nil {
		return err
	}
	if s.def.Watch, err = readWatch(def.Get("watch"), l); err != nil {
		return err
	}
	if err := s.readHandlers(def, l); err != nil {
		return err
	}
	if err := s.readIndexers(def.Get("indexers"), l); err != nil {
		return err
	}
	if err := s.readLimits(def, l); err != nil {
		return err
	}
	if err := s.readEnqueue(def.Get("watch"), l); err != nil {
		return err
	}
	if err := s.readSchedule(def.Get("schedule"), l); err != nil {
		return err
	}
	if err := s.readMetrics(def.Get("metrics"), l); err != nil {
		return err
	}
	if s.def.Permissions, err = readPermissions(def.Get("permissions"), l); err != nil {
		return err
	}
	if err := s.readAdmission(def, l); err != nil {
		return err
	}
	if err := s.readNet(def.Get("net"), l); err != nil {
		return err
	}
	if err := s.readStoreSpec(def.Get("store"), l); err != nil {
		return err
	}
	if err := s.readOutbox(def.Get("outbox"), l); err != nil {
		return err
	}
	if s.def.Shard, err = readShard(def.Get("shard"), l); err != nil {
		return err
	}
	if !s.hasHandlers() {
		return invalidf(s.name, 0, "the definition has no handlers; "+
			"define at least one of onAdd, onUpdate, onDelete, reconcile, indexers, schedule, a metric with collect, validate or mutate")
	}
	return nil
}

func (s *instance) hasHandlers() bool {
	d := &s.def
	return d.OnAdd || d.OnUpdate || d.OnDelete || d.Reconcile || len(s.indexers) > 0 || len(d.Schedules) > 0 ||
		len(s.collectFns) > 0 || d.Validate || d.Mutate
}

// defaultExport is module.exports.default for ESM (esbuild marks it __esModule), else
// module.exports itself.
func (s *instance) defaultExport(exports goja.Value, l locator) (*goja.Object, error) {
	v := exports
	if obj, ok := exports.(*goja.Object); ok && obj.Get("__esModule") != nil && obj.Get("__esModule").ToBoolean() {
		v = obj.Get("default")
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return nil, invalidf(l.file, 0, fmt.Sprintf("the script must export a definition object "+
			"(export default { ... } or module.exports = { ... }), got %s", typeName(v)))
	}
	return obj, nil
}

func (s *instance) readHandlers(def *goja.Object, l locator) error {
	for _, h := range []struct {
		key string
		fn  *goja.Callable
		has *bool
	}{
		{"onAdd", &s.onAdd, &s.def.OnAdd},
		{"onUpdate", &s.onUpdate, &s.def.OnUpdate},
		{"onDelete", &s.onDelete, &s.def.OnDelete},
		{"reconcile", &s.reconcileFn, &s.def.Reconcile},
	} {
		fn, err := optionalFunc(def.Get(h.key), h.key, l)
		if err != nil {
			return err
		}
		*h.fn, *h.has = fn, fn != nil
	}
	return nil
}

func (s *instance) readIndexers(v goja.Value, l locator) error {
	if isMissing(v) {
		return nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() == "Array" || isFunction(obj) {
		return invalidf(l.file, l.line("indexers"), fmt.Sprintf(
			"'indexers' must be an object mapping index names to functions, got %s", typeName(v)))
	}
	s.indexers = make(map[string]indexer)
	s.indexersObj = obj
	for _, name := range obj.Keys() {
		fn, err := optionalFunc(obj.Get(name), "indexers."+name, l)
		if err != nil {
			return err
		}
		if fn == nil {
			return invalidf(l.file, l.line(name), fmt.Sprintf("'indexers.%s' must be a function, got %s",
				name, typeName(obj.Get(name))))
		}
		s.indexers[name] = indexer{fn: fn, label: "indexers." + name}
		s.def.Indexers = append(s.def.Indexers, name)
	}
	slices.Sort(s.def.Indexers)
	return nil
}

func (s *instance) readLimits(def *goja.Object, l locator) error {
	var err error
	if s.def.Concurrency, err = readInt(def.Get("concurrency"), "concurrency", 1, defaultConcurrency, l); err != nil {
		return err
	}
	s.def.MaxRetries, err = readInt(def.Get("maxRetries"), "maxRetries", 0, defaultMaxRetries, l)
	return err
}

func readInt(v goja.Value, key string, lowest, def int, l locator) (int, error) {
	if isMissing(v) {
		return def, nil
	}
	n, ok := intValue(v)
	if !ok || n < int64(lowest) || n > math.MaxInt32 {
		kind := "a positive integer"
		if lowest == 0 {
			kind = "a non-negative integer"
		}
		return 0, invalidf(l.file, l.line(key), fmt.Sprintf("'%s' must be %s, got %s", key, kind, typeName(v)))
	}
	return int(n), nil
}

func optionalFunc(v goja.Value, key string, l locator) (goja.Callable, error) {
	if isMissing(v) {
		return nil, nil
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, invalidf(l.file, l.line(lastKey(key)), fmt.Sprintf("'%s' must be a function, got %s", key, typeName(v)))
	}
	return fn, nil
}

// intValue returns v as an integer when it is an integral number.
func intValue(v goja.Value) (int64, bool) {
	switch x := v.Export().(type) {
	case int64:
		return x, true
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), true
		}
	}
	return 0, false
}

func isMissing(v goja.Value) bool { return v == nil || goja.IsUndefined(v) || goja.IsNull(v) }

func isFunction(obj *goja.Object) bool {
	_, ok := goja.AssertFunction(obj)
	return ok
}

// shorten is a string value for messages: at most 64 characters of it.
func shorten(v goja.Value) string {
	const most = 64
	if str, ok := v.(goja.String); ok && str.Length() > most {
		return str.Substring(0, most).String() + "…"
	}
	return v.String()
}

// typeName describes v for messages: its JS type, with the value for short primitives.
func typeName(v goja.Value) string {
	switch {
	case v == nil || goja.IsUndefined(v):
		return "undefined"
	case goja.IsNull(v):
		return "null"
	}
	if obj, ok := v.(*goja.Object); ok {
		switch {
		case obj.ClassName() == "Array":
			return "an array"
		case isFunction(obj):
			return "a function"
		}
		return "an object"
	}
	if isString(v) {
		return fmt.Sprintf("a string (%q)", shorten(v))
	}
	switch x := v.Export().(type) {
	case bool:
		return fmt.Sprintf("a boolean (%t)", x)
	case int64, float64:
		return fmt.Sprintf("a number (%s)", v.String())
	}
	return v.String()
}

// readNet reads `net`: an array of --allow-net entries the script's fetch may reach.
func (s *instance) readNet(v goja.Value, l locator) error {
	if isMissing(v) {
		return nil
	}
	obj, ok := v.(*goja.Object)
	if !ok || obj.ClassName() != "Array" {
		return invalidf(l.file, l.line("net"), "'net' must be an array of host names, *.domains, IPs or CIDRs, got "+typeName(v))
	}
	var entries []string
	if err := s.rt.ExportTo(obj, &entries); err != nil || len(entries) > maxItems {
		return invalidf(l.file, l.line("net"), "'net' must be an array of strings")
	}
	list, err := netguard.ParseList(entries)
	if err != nil {
		return invalidf(l.file, l.line("net"), "'net': "+err.Error())
	}
	s.def.Net, s.netList = list.Entries(), &list
	return nil
}

// Shard modes a script may declare (`shard`, Definition.Shard): how its caches are partitioned
// when the runner runs with --sharded --shard-cache.
const (
	ShardNamespace = "namespace" // the default under --shard-cache: a namespace's objects on one replica
	ShardUID       = "uid"       // objects spread by uid; ctx.cache is refused
	ShardNone      = "none"      // a full cache on every replica, as without --shard-cache
)

// readShard reads `shard`: "namespace", "uid" or "none"; "" when the script does not say.
func readShard(v goja.Value, l locator) (string, error) {
	if isMissing(v) {
		return "", nil
	}
	if str, ok := v.(goja.String); ok {
		switch mode := str.String(); mode {
		case ShardNamespace, ShardUID, ShardNone:
			return mode, nil
		}
	}
	return "", invalidf(l.file, l.line("shard"), `'shard' must be "namespace", "uid" or "none", got `+typeName(v))
}
