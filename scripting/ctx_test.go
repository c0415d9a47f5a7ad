package scripting

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// fakeCache answers from a fixed list and records what it was asked.
type fakeCache struct {
	objs []Object
	err  error
	mu   sync.Mutex
	asks []string
}

func (c *fakeCache) ask(s string) {
	c.mu.Lock()
	c.asks = append(c.asks, s)
	c.mu.Unlock()
}

func (c *fakeCache) Get(resource, namespace, name string) (Object, error) {
	c.ask("get " + resource + " " + namespace + "/" + name)
	if name == "missing" {
		return nil, c.err
	}
	return c.objs[0], c.err
}

func (c *fakeCache) List(resource, namespace, labelSelector string) ([]Object, error) {
	c.ask("list " + resource + " " + namespace + " " + labelSelector)
	return c.objs, c.err
}

func (c *fakeCache) ByIndex(index, value string) ([]Object, error) {
	c.ask("byIndex " + index + " " + value)
	return c.objs, c.err
}

func (c *fakeCache) IndexKeys(index, value string) ([]string, error) {
	c.ask("indexKeys " + index + " " + value)
	return []string{"default/web"}, c.err
}

func TestCtxCache(t *testing.T) {
	t.Parallel()
	cache := &fakeCache{objs: []Object{sample()}}
	src := `export default { onAdd(obj, ctx) {
		const c = ctx.cache;
		globalThis.out = [
			c.get("default", "web").metadata.name,
			c.get("default", "missing"),
			c.get("default", "web", "pods").kind,
			c.list({namespace: "default", labelSelector: "app=web"}).map((o) => o.metadata.name),
			c.list().length,
			c.byIndex("byImage", "nginx:1.27").length,
			c.indexKeys("byImage", "nginx:1.27"),
		];
		try { c.list()[0].metadata.name = "x" } catch (e) { globalThis.out.push(e.name) }
	} }`
	s := newTestScript(t, "c.js", src, Options{})
	if err := s.OnAdd(sample(), Event{Cache: cache}); err != nil {
		t.Fatal(err)
	}
	if got, want := outJSON(t, s), `["web",null,"Deployment",["web"],1,1,["default/web"],"TypeError"]`; got != want {
		t.Errorf("out = %s\nwant  %s", got, want)
	}
	wantAsks := []string{"get  default/web", "get  default/missing", "get pods default/web", "list  default app=web",
		"list   ", "byIndex byImage nginx:1.27", "indexKeys byImage nginx:1.27", "list   "}
	if !reflect.DeepEqual(cache.asks, wantAsks) {
		t.Errorf("asks = %q\nwant   %q", cache.asks, wantAsks)
	}
}

func TestCtxCacheErrorsAndAbsence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ev   Event
		call string
		want string
	}{
		{"cache error", Event{Cache: &fakeCache{objs: []Object{nil}, err: errors.New("no such index")}},
			`ctx.cache.byIndex("x", "y")`, "Error: ctx.cache.byIndex x=y: no such index"},
		{"no cache", Event{}, `ctx.cache.get("a", "b")`, "Error: ctx.cache is not available here"},
		{"no enqueue", Event{}, `ctx.enqueue("a/b")`, "Error: ctx.enqueue is not available here"},
		{"enqueue without key", Event{Enqueue: func(string) {}}, `ctx.enqueue()`, "Error: ctx.enqueue needs a key"},
		{"bad list option", Event{Cache: &fakeCache{}}, `ctx.cache.list({namespce: "x"})`,
			"TypeError: ctx.cache.list: unknown option 'namespce'; did you mean 'namespace'?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newTestScript(t, "c.js", "export default { onAdd(obj, ctx) { "+tt.call+" } }", Options{})
			err := s.OnAdd(sample(), tt.ev)
			var se *ScriptError
			if !errors.As(err, &se) || !strings.HasPrefix(se.Message, tt.want) {
				t.Errorf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestCtxEnqueue(t *testing.T) {
	t.Parallel()
	var keys []string
	s := newTestScript(t, "e.js", `export default { onUpdate(o, n, ctx) { ctx.enqueue(n.metadata.namespace + "/" + n.metadata.name) } }`, Options{})
	ev := Event{Enqueue: func(k string) { keys = append(keys, k) }}
	if err := s.OnUpdate(sample(), sample(), ev); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(keys, []string{"default/web"}) {
		t.Errorf("keys = %v", keys)
	}
}

func TestCtxPanicInCallbackRecovered(t *testing.T) {
	t.Parallel()
	s := newTestScript(t, "e.js", `export default { onAdd(o, ctx) { ctx.enqueue("a") } }`, Options{})
	err := s.OnAdd(sample(), Event{Enqueue: func(string) { panic("queue shut down") }})
	if !errors.Is(err, ErrPanic) || !strings.Contains(err.Error(), "panic in ctx.enqueue: queue shut down") {
		t.Errorf("error = %v, want recovered panic", err)
	}
}
