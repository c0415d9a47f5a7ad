package scriptcache

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/jsinformer/jsinformer/scripting"
)

// TestStoreIndexesFollowTheObject applies a sequence of sets and removes and checks after
// each that every index answers by the object's latest values only.
func TestStoreIndexesFollowTheObject(t *testing.T) {
	t.Parallel()
	const res = "apps/v1/deployments"
	a, b := Key{res, "ns/a"}, Key{res, "ns/b"}
	obj := func(name string) scripting.Object {
		return scripting.Object{"metadata": map[string]any{"name": name, "namespace": "ns"}}
	}
	s := New([]string{"byImage", "byTeam"})
	s.Reserve(res, 2)
	type want map[string][]string // "index=value" -> keys
	steps := []struct {
		name string
		do   func()
		want want
	}{
		{"add a", func() { s.Set(a, obj("a"), [][]string{{"nginx", "envoy"}, {"red"}}) }, want{
			"byImage=nginx": {"ns/a"}, "byImage=envoy": {"ns/a"}, "byTeam=red": {"ns/a"}}},
		{"add b", func() { s.Set(b, obj("b"), [][]string{{"nginx"}, nil}) }, want{
			"byImage=nginx": {"ns/a", "ns/b"}, "byImage=envoy": {"ns/a"}, "byTeam=red": {"ns/a"}}},
		{"update a", func() { s.Set(a, obj("a"), [][]string{{"redis"}, {"blue"}}) }, want{
			"byImage=nginx": {"ns/b"}, "byImage=envoy": nil, "byImage=redis": {"ns/a"},
			"byTeam=red": nil, "byTeam=blue": {"ns/a"}}},
		{"remove b", func() { s.Remove(b) }, want{"byImage=nginx": nil, "byImage=redis": {"ns/a"}}},
		{"remove b again", func() { s.Remove(b) }, want{"byImage=redis": {"ns/a"}}},
	}
	for _, step := range steps {
		step.do()
		for query, wantKeys := range step.want {
			index, value, _ := strings.Cut(query, "=")
			keys, err := s.byIndex(index, value)
			if err != nil {
				t.Fatalf("%s: byIndex(%s): %v", step.name, query, err)
			}
			got := []string{}
			for _, k := range keys {
				got = append(got, k.Object)
			}
			if !slices.Equal(got, append([]string{}, wantKeys...)) {
				t.Errorf("%s: byIndex(%s) = %v, want %v", step.name, query, got, wantKeys)
			}
		}
	}
	if s.Size() != 1 || s.get(res, "ns/a") == nil || s.get(res, "ns/b") != nil {
		t.Errorf("store holds %d objects, want only ns/a", s.Size())
	}
	if got := s.list(res, "ns", labels.Everything()); len(got) != 1 {
		t.Errorf("list = %d objects, want 1", len(got))
	}
	if _, err := s.byIndex("nope", "x"); err == nil {
		t.Error("byIndex on an unknown index did not fail")
	}
}
