package scriptcache

import (
	"errors"
	"testing"

	"github.com/jsinformer/jsinformer/scripting"
)

// A partitioned View answers the lookups its partition holds whole, as a full cache, and
// refuses every other one with ErrOutsidePartition rather than answering from part of the
// cluster; a View without a partition answers everything.
func TestViewRefusesLookupsOutsideItsPartition(t *testing.T) {
	t.Parallel()
	const res = "v1/configmaps"
	s := New([]string{"byTeam"})
	for _, key := range []string{"mine/a", "mine/b", "theirs/c"} {
		ns, name := key[:len(key)-2], key[len(key)-1:]
		s.Set(Key{res, key}, scripting.Object{"metadata": map[string]any{"name": name, "namespace": ns}}, [][]string{{ns + "/red"}})
	}
	byNamespace := &Partition{Field: "namespace", Namespace: func(ns string) bool { return ns == "mine" }}
	byUID := &Partition{Field: "uid"}
	type lookup func(v *View) (int, error)
	get := func(ns string) lookup {
		return func(v *View) (int, error) {
			o, err := v.Get("", ns, "a")
			if o == nil {
				return 0, err
			}
			return 1, err
		}
	}
	list := func(ns string) lookup {
		return func(v *View) (int, error) { l, err := v.List("", ns, ""); return len(l), err }
	}
	byIndex := func(value string) lookup {
		return func(v *View) (int, error) { l, err := v.ByIndex("byTeam", value); return len(l), err }
	}
	indexKeys := func(value string) lookup {
		return func(v *View) (int, error) { l, err := v.IndexKeys("byTeam", value); return len(l), err }
	}
	cases := []struct {
		name      string
		partition *Partition
		lookup    lookup
		want      int // objects answered; -1: refused
	}{
		{"full: list all", nil, list(""), 3},
		{"full: byIndex", nil, byIndex("theirs/red"), 1},
		{"namespace: get in it", byNamespace, get("mine"), 1},
		{"namespace: get elsewhere", byNamespace, get("theirs"), -1},
		{"namespace: get cluster-scoped", byNamespace, get(""), -1},
		{"namespace: list in it", byNamespace, list("mine"), 2},
		{"namespace: list all", byNamespace, list(""), -1},
		{"namespace: list elsewhere", byNamespace, list("theirs"), -1},
		{"namespace: byIndex in it", byNamespace, byIndex("mine/red"), 2},
		{"namespace: indexKeys in it", byNamespace, indexKeys("mine/red"), 2},
		{"namespace: byIndex elsewhere", byNamespace, byIndex("theirs/red"), -1},
		{"namespace: byIndex without namespace", byNamespace, byIndex("red"), -1},
		{"namespace: indexKeys without namespace", byNamespace, indexKeys("red"), -1},
		{"uid: get", byUID, get("mine"), -1},
		{"uid: list in a namespace", byUID, list("mine"), -1},
		{"uid: byIndex", byUID, byIndex("mine/red"), -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			n, err := c.lookup(&View{Store: s, Resource: res, Partition: c.partition})
			switch {
			case c.want < 0 && !errors.Is(err, ErrOutsidePartition):
				t.Errorf("answered %d objects (error %v), want it refused as outside the partition", n, err)
			case c.want >= 0 && (err != nil || n != c.want):
				t.Errorf("answered %d objects, error %v; want %d", n, err, c.want)
			}
		})
	}
}
