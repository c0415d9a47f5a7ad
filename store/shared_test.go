package store_test

import (
	"encoding/json"
	"testing"

	"github.com/jsinformer/jsinformer/store"
)

// A shared namespace is one store for every replica and every caller naming it, apart from
// every script's own store (a script named like the namespace included); its ConfigMaps say
// which namespace they hold. A value's readable mark is kept with it and read back.
func TestSharedNamespace(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	a, _ := newStore(t, store.Options{Namespace: ns, Shards: 2})
	b, _ := newStore(t, store.Options{Namespace: ns, Shards: 2})
	ctx := t.Context()
	if _, err := a.Shared("team-a").Set(ctx, "k", json.RawMessage(`"shared"`), store.SetOptions{Readable: true}); err != nil {
		t.Fatal(err)
	}
	mustSet(t, a.Scope("team-a"), "k", `"own"`)
	got, ok, err := b.Shared("team-a").Get(ctx, "k")
	if err != nil || !ok || string(got.Value) != `"shared"` || !got.Readable {
		t.Fatalf("shared get from another replica = %+v %v %v; want the shared readable value", got, ok, err)
	}
	if own, _, _ := b.Scope("team-a").Get(ctx, "k"); string(own.Value) != `"own"` || own.Readable {
		t.Fatalf("the script team-a reads %+v; want its own unreadable value", own)
	}
	if _, ok, _ := b.Shared("team-b").Get(ctx, "k"); ok {
		t.Fatal("another shared namespace reads team-a's key")
	}
	var shared, scripts int
	for _, cm := range configMaps(t, ns) {
		if cm.Annotations[store.AnnotationShared] == "team-a" && cm.Labels[store.LabelScript] == store.SharedID("team-a") {
			shared++
		}
		if cm.Annotations[store.AnnotationScript] == "team-a" && cm.Labels[store.LabelScript] == store.ScriptID("team-a") {
			scripts++
		}
	}
	if shared != 1 || scripts != 1 || store.SharedID("team-a") == store.ScriptID("team-a") {
		t.Fatalf("%d shared and %d script ConfigMaps; want one of each, with different IDs", shared, scripts)
	}
	for _, bad := range []string{"", "Team", "a_b", "-a"} {
		if store.ValidSharedName(bad) == nil {
			t.Errorf("shared name %q accepted", bad)
		}
	}
}
