package scripting

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestValidationMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src, want string
	}{
		{"not an object", "module.exports = 5", "v.js: the script must export a definition object " +
			"(export default { ... } or module.exports = { ... }), got a number (5)"},
		{"default export is a function", "export default function () {}", "v.js: the script must export a definition object " +
			"(export default { ... } or module.exports = { ... }), got a function"},
		{"nothing exported", "const x = 1", "v.js: the definition has no handlers; " +
			"define at least one of onAdd, onUpdate, onDelete, reconcile, indexers, schedule, a metric with collect, validate or mutate"},
		{"handler not a function", "export default {\n  watch: 'pods',\n  onAdd: 5,\n}",
			"v.js:3: 'onAdd' must be a function, got a number (5)"},
		{"reconcile not a function", "export default {\n  reconcile: 'x',\n}",
			"v.js:2: 'reconcile' must be a function, got a string (\"x\")"},
		{"typo suggests key", "export default {\n  onadd(obj) {},\n}",
			"v.js:2: unknown key 'onadd' in the definition; did you mean 'onAdd'?"},
		{"typo suggests key 2", "export default {\n  onUpdate() {},\n  indexer: {},\n}",
			"v.js:3: unknown key 'indexer' in the definition; did you mean 'indexers'?"},
		{"unknown key lists keys", "export default {\n  onAdd() {},\n  frobnicate: true,\n}",
			"v.js:3: unknown key 'frobnicate' in the definition; valid keys are " +
				"watch, indexers, onAdd, onUpdate, onDelete, reconcile, concurrency, maxRetries, schedule, metrics, permissions, validate, mutate, admission, net, store, outbox, shard"},
		{"shard unknown mode", "export default {\n  onAdd() {},\n  shard: \"cluster\",\n}",
			`v.js:3: 'shard' must be "namespace", "uid" or "none", got a string ("cluster")`},
		{"shard not a string", "export default {\n  onAdd() {},\n  shard: true,\n}",
			`v.js:3: 'shard' must be "namespace", "uid" or "none", got a boolean (true)`},
		{"permissions not a list", "export default {\n  onAdd() {},\n  permissions: { resource: \"v1/secrets\" },\n}",
			"v.js:3: 'permissions' must be an array of {resource, verbs, namespaces}, got an object"},
		{"permission without verbs", "export default {\n  onAdd() {},\n  permissions: [{ resource: \"v1/secrets\",\n    verbs: [] }],\n}",
			"v.js:4: 'permissions[0].verbs' must name at least one verb"},
		{"permission unknown verb", "export default {\n  onAdd() {},\n  permissions: [{ resource: \"v1/secrets\",\n    verbs: [\"read\"] }],\n}",
			"v.js:4: 'permissions[0].verbs': \"read\" is not one of [create delete deletecollection get list patch update watch]"},
		{"permission key typo", "export default {\n  onAdd() {},\n  permissions: [{ resource: \"v1/secrets\", verb: [\"get\"] }],\n}",
			"v.js:3: unknown key 'verb' in 'permissions[0]'; did you mean 'verbs'?"},
		{"permission without resource", "export default {\n  onAdd() {},\n  permissions: [{\n    verbs: [\"get\"] }],\n}",
			"v.js:3: 'permissions[0].resource' must name a resource, e.g. \"v1/secrets\", got undefined"},
		{"schedule not a list", "export default {\n  schedule: { every: \"1m\" },\n}",
			"v.js:2: 'schedule' must be a list of {every | cron, run}, got an object"},
		{"schedule without run", "export default {\n  schedule: [{ every: \"1m\" }],\n}",
			"v.js:2: 'schedule[0].run' must be a function"},
		{"schedule with both", "export default {\n  schedule: [{ every: \"1m\", cron: \"* * * * *\", run() {} }],\n}",
			"v.js:2: 'schedule[0]' must have exactly one of 'every' or 'cron'"},
		{"schedule every too short", "export default {\n  schedule: [{\n    every: \"10ms\", run() {} }],\n}",
			"v.js:3: 'schedule[0].every' must be at least 1s, got 10ms"},
		{"schedule bad cron", "export default {\n  schedule: [{\n    cron: \"61 * * * *\", run() {} }],\n}",
			"v.js:3: 'schedule[0].cron' \"61 * * * *\" is not a cron expression (minute hour day-of-month month day-of-week, or @hourly, @daily, ...): end of range (61) above maximum (59): 61"},
		{"schedule key typo", "export default {\n  schedule: [{ evrey: \"1m\", run() {} }],\n}",
			"v.js:2: unknown key 'evrey' in 'schedule[0]'; did you mean 'every'?"},
		{"enqueue without reconcile", "export default {\n  watch: { resource: \"cm\",\n    enqueue: \"owner\" },\n  onAdd() {},\n}",
			"v.js:3: 'watch.enqueue' only means something with a 'reconcile' handler"},
		{"enqueue bad value", "export default {\n  watch: [{ resource: \"cm\",\n    enqueue: \"parent\" }],\n  reconcile() {},\n}",
			"v.js:3: 'watch[0].enqueue' must be \"owner\", false, or a function (obj) => key | key[]; got parent"},
		{"watch wrong type", "export default {\n  watch: 5,\n  onAdd() {},\n}",
			"v.js:2: 'watch' must be a resource string or an object {resource, namespace, labelSelector, fieldSelector}, got a number (5)"},
		{"watch empty list", "export default {\n  watch: [],\n  onAdd() {},\n}",
			"v.js:2: 'watch' must name at least one resource"},
		{"watch empty string", "export default {\n  watch: '',\n  onAdd() {},\n}", "v.js:2: 'watch' must not be empty"},
		{"watch entry typo", "export default {\n  watch: [{resource: 'pods', labelselector: 'a=b'}],\n  onAdd() {},\n}",
			"v.js:2: unknown key 'labelselector' in 'watch[0]'; did you mean 'labelSelector'?"},
		{"watch entry without resource", "export default {\n  watch: {namespace: 'x'},\n  onAdd() {},\n}",
			"v.js:2: 'watch.resource' must name a resource"},
		{"watch bad label selector", "export default {\n  watch: {resource: 'pods', labelSelector: 'app in (a,b'},\n  onAdd() {},\n}",
			"v.js:2: 'watch': labelSelector \"app in (a,b\" is not a valid label selector: unable to parse requirement: found '', expected: ',' or ')'"},
		{"watch bad field selector", "export default {\n  watch: [{resource: 'pods', fieldSelector: 'spec.nodeName'}],\n  onAdd() {},\n}",
			"v.js:2: 'watch[0]': fieldSelector \"spec.nodeName\" is not a valid field selector: invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'"},
		{"watch field not string", "export default {\n  watch: ['pods', {resource: 'deploy',\n    namespace: 3}],\n  onAdd() {},\n}",
			"v.js:3: 'watch[1].namespace' must be a string, got a number (3)"},
		{"indexers not object", "export default {\n  indexers: [],\n}",
			"v.js:2: 'indexers' must be an object mapping index names to functions, got an array"},
		{"indexer not function", "export default {\n  indexers: {\n    byImage: 'spec.image',\n  },\n}",
			"v.js:3: 'indexers.byImage' must be a function, got a string (\"spec.image\")"},
		{"concurrency zero", "export default {\n  reconcile() {},\n  concurrency: 0,\n}",
			"v.js:3: 'concurrency' must be a positive integer, got a number (0)"},
		{"concurrency fraction", "export default {\n  reconcile() {},\n  concurrency: 1.5,\n}",
			"v.js:3: 'concurrency' must be a positive integer, got a number (1.5)"},
		{"concurrency string", "export default {\n  reconcile() {},\n  concurrency: '2',\n}",
			"v.js:3: 'concurrency' must be a positive integer, got a string (\"2\")"},
		{"maxRetries negative", "export default {\n  reconcile() {},\n  maxRetries: -1,\n}",
			"v.js:3: 'maxRetries' must be a non-negative integer, got a number (-1)"},
		{"top-level throw", "const x = 1;\nthrow new Error('no config');\nexport default {}",
			"v.js:2:7: Error: no config"},
		{"top-level computed require", "const m = 'x';\nconst x = require(m);\nmodule.exports = {}",
			"v.js:2:11: Error: require(\"x\") is not supported: only imports of a literal path are bundled; " +
				"write require(\"./lib/x.js\") or import ... from \"./lib/x.js\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := instantiate("v.js", tt.src, Options{})
			var se *ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("error = %v (%T), want *ScriptError", err, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error:\n got  %s\n want %s", got, tt.want)
			}
		})
	}
}

func TestValidationWrapsErrInvalidDefinition(t *testing.T) {
	t.Parallel()
	_, err := instantiate("v.js", "export default { onAdd: 1 }", Options{})
	if !errors.Is(err, ErrInvalidDefinition) {
		t.Errorf("error %v does not wrap ErrInvalidDefinition", err)
	}
}

func TestTopLevelTimeout(t *testing.T) {
	t.Parallel()
	_, err := instantiate("loop.js", "for (;;) {}\nexport default { onAdd() {} }", Options{Timeout: 50 * time.Millisecond})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("error = %v, want ErrTimeout", err)
	}
	var se *ScriptError
	if !errors.As(err, &se) || se.File != "loop.js" || se.Line != 1 {
		t.Errorf("error = %#v, want loop.js line 1", err)
	}
}

func TestDefinition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      Definition
	}{
		{"defaults", "export default { onAdd() {} }",
			Definition{OnAdd: true, Concurrency: 1, MaxRetries: 5}},
		{"all handlers", "export default { onAdd() {}, onUpdate() {}, onDelete() {}, reconcile() {}, concurrency: 4, maxRetries: 0 }",
			Definition{OnAdd: true, OnUpdate: true, OnDelete: true, Reconcile: true, Concurrency: 4, MaxRetries: 0}},
		{"watch string", "export default { watch: 'apps/v1/deployments', onDelete() {} }",
			Definition{Watch: []WatchSpec{{Resource: "apps/v1/deployments"}}, OnDelete: true, Concurrency: 1, MaxRetries: 5}},
		{"watch object", "export default { watch: {resource: 'pods', namespace: 'ns', labelSelector: 'a=b', fieldSelector: 'spec.nodeName=n'}, onAdd() {} }",
			Definition{Watch: []WatchSpec{{Resource: "pods", Namespace: "ns", LabelSelector: "a=b", FieldSelector: "spec.nodeName=n"}},
				OnAdd: true, Concurrency: 1, MaxRetries: 5}},
		{"watch list", "export default { watch: ['pods', {resource: 'cm', namespace: 'x'}], onAdd() {} }",
			Definition{Watch: []WatchSpec{{Resource: "pods"}, {Resource: "cm", Namespace: "x"}}, OnAdd: true, Concurrency: 1, MaxRetries: 5}},
		{"null watch means unspecified", "export default { watch: null, onAdd() {} }",
			Definition{OnAdd: true, Concurrency: 1, MaxRetries: 5}},
		{"indexers only", "export default { indexers: { zeta: (o) => [], alpha: (o) => 'x' } }",
			Definition{Indexers: []string{"alpha", "zeta"}, Concurrency: 1, MaxRetries: 5}},
		{"permissions", "export default { onAdd() {}, permissions: [{ resource: 'v1/secrets', verbs: ['patch', 'get', 'get'], namespaces: ['b', 'a'] }] }",
			Definition{OnAdd: true, Concurrency: 1, MaxRetries: 5,
				Permissions: []PermissionSpec{{Resource: "v1/secrets", Verbs: []string{"get", "patch"}, Namespaces: []string{"a", "b"}}}}},
		{"shard", "export default { onAdd() {}, shard: 'none' }",
			Definition{OnAdd: true, Concurrency: 1, MaxRetries: 5, Shard: ShardNone}},
		{"typescript", "const d: { onAdd(o: unknown): void } = { onAdd(o) {} };\nexport default d;",
			Definition{OnAdd: true, Concurrency: 1, MaxRetries: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := "d.js"
			if tt.name == "typescript" {
				file = "d.ts"
			}
			s := newTestScript(t, file, tt.src, Options{})
			if got := s.Definition(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Definition() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestClosest(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"onadd", "onAdd"}, {"OnUpdate", "onUpdate"}, {"ondelete", "onDelete"}, {"reconcil", "reconcile"},
		{"maxretries", "maxRetries"}, {"watches", "watch"}, {"xyz", ""}, {"concurency", "concurrency"},
	}
	for _, tt := range tests {
		if got := closest(tt.in, definitionKeys); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
