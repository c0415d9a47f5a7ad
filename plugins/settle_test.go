package plugins

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSettlerFollowsUntilUnchanged drives the settler on a fake clock and a fake disk: a
// version is Settled only once its deadline has passed with its files, modules included, as
// the scan read them; a later event for its name, or a write after the scan, takes it back.
func TestSettlerFollowsUntilUnchanged(t *testing.T) {
	t.Parallel()
	const grace = 500 * time.Millisecond
	t0 := time.Unix(1000, 0)
	scan := map[string]Source{
		"a.js":     {Name: "a.js", Path: "/s/a.js", Hash: hashContent([]byte("a1"))},
		"lib/m.js": {Name: "lib/m.js", Path: "/s/lib/m.js", Hash: hashContent([]byte("m1"))},
		"b.js":     {Name: "b.js", Path: "/s/b.js", Hash: hashContent([]byte("b1"))},
	}
	loadedA := Event{Kind: Loaded, Source: Source{Name: "a.js", Path: "/s/a.js", Hash: "va", Modules: []string{"lib/m.js", "node_modules/x/index.js"}}}
	loadedB := Event{Kind: Loaded, Source: Source{Name: "b.js", Path: "/s/b.js", Hash: "vb"}}
	type step struct {
		at          time.Duration // after t0
		disk        map[string]string
		follow      []Event // events of a rescan at this time, instead of a due check
		want        []string
		wantChanged bool
	}
	unchanged := map[string]string{"/s/a.js": "a1", "/s/lib/m.js": "m1", "/s/b.js": "b1"}
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "settled after the grace period, not before", steps: []step{
			{at: 0, follow: []Event{loadedA, loadedB}},
			{at: grace - time.Millisecond, disk: unchanged, want: nil},
			{at: grace, disk: unchanged, want: []string{"Settled a.js va", "Settled b.js vb"}},
			{at: 3 * grace, disk: unchanged, want: nil},
		}},
		{name: "written after the scan", steps: []step{
			{at: 0, follow: []Event{loadedA}},
			{at: grace, disk: map[string]string{"/s/a.js": "a1 and the rest", "/s/lib/m.js": "m1"}, wantChanged: true},
			{at: 2 * grace, disk: map[string]string{"/s/a.js": "a1", "/s/lib/m.js": "m1"}, want: []string{"Settled a.js va"}},
		}},
		{name: "module written after the scan", steps: []step{
			{at: 0, follow: []Event{loadedA}},
			{at: grace, disk: map[string]string{"/s/a.js": "a1", "/s/lib/m.js": ""}, wantChanged: true},
		}},
		{name: "an unreadable file counts as unchanged", steps: []step{
			{at: 0, follow: []Event{loadedA}},
			{at: grace, disk: map[string]string{}, want: []string{"Settled a.js va"}},
		}},
		{name: "superseded by newer content", steps: []step{
			{at: 0, follow: []Event{loadedA}},
			{at: grace / 2, follow: []Event{{Kind: Loaded, Source: Source{Name: "a.js", Path: "/s/a.js", Hash: "va2"}}}},
			{at: grace, disk: unchanged, want: nil},
			{at: grace + grace/2, disk: unchanged, want: []string{"Settled a.js va2"}},
		}},
		{name: "removed", steps: []step{
			{at: 0, follow: []Event{loadedA, loadedB}},
			{at: grace / 2, follow: []Event{{Kind: Removed, Source: Source{Name: "a.js"}}}},
			{at: grace, disk: unchanged, want: []string{"Settled b.js vb"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var disk map[string]string
			s := newSettler(grace, func(path string) ([]byte, error) {
				if c, ok := disk[path]; ok {
					return []byte(c), nil
				}
				return nil, fs.ErrPermission
			})
			defer s.stop()
			for i, st := range tt.steps {
				now := t0.Add(st.at)
				if st.follow != nil {
					events := slices.Clone(st.follow)
					s.follow(events, scan, now)
					for _, ev := range events {
						if ev.Kind == Loaded && !ev.Source.Settling {
							t.Fatalf("step %d: Loaded %s not marked Settling", i, ev.Source.Name)
						}
					}
					continue
				}
				disk = st.disk
				events, changed := s.due(now)
				if got := describeAll(events); !slices.Equal(got, st.want) {
					t.Errorf("step %d at %v: events %q, want %q", i, st.at, got, st.want)
				}
				if changed != st.wantChanged {
					t.Errorf("step %d at %v: changed = %v, want %v", i, st.at, changed, st.wantChanged)
				}
			}
		})
	}
}

// TestSaveInTwoPartsSettlesOnlyTheWhole writes a script in place in two parts, pausing between
// them for longer than the debounce, so that the first part is read. It is Settled only when
// the pause outlasts the grace period; the whole file is always Settled in the end. The
// initial scan's content is never Settling.
func TestSaveInTwoPartsSettlesOnlyTheWhole(t *testing.T) {
	t.Parallel()
	const grace = 500 * time.Millisecond
	const v1, v2 = "export default { onAdd() {} };\n", "export default { onDelete() {} };\n"
	part := v2[:10]
	for _, pause := range []time.Duration{100 * time.Millisecond, 300 * time.Millisecond, time.Second} {
		t.Run(pause.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "a.js")
			writeFile(t, path, v1)
			h := start(t, dir, Options{Debounce: fast, Grace: grace})
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			mustDo(t, err)
			defer f.Close()
			began := time.Now()
			_, err = f.WriteString(part)
			mustDo(t, err)
			h.waitFor("the first part", func(evs []string) bool { return slices.Contains(evs, loaded("a.js", part)) })
			time.Sleep(pause)
			if pause > grace { // the first part outlasts the grace period: it settles
				h.waitFor("the first part settled", func(evs []string) bool { return slices.Contains(evs, settled("a.js", part)) })
			}
			_, err = f.WriteString(v2[len(part):])
			mustDo(t, err)
			wrote := time.Since(began)
			h.waitFor("the whole file settled", func(evs []string) bool { return slices.Contains(evs, settled("a.js", v2)) })
			wantSettled := []string{settled("a.js", v2)}
			switch {
			case pause > grace:
				wantSettled = []string{settled("a.js", part), settled("a.js", v2)}
			case wrote >= grace:
				t.Logf("the second part came %v after the first, past the %v grace: the first may settle", wrote, grace)
				return
			}
			if got := h.settled(); !slices.Equal(got, wantSettled) {
				t.Errorf("Settled events %q, want %q", got, wantSettled)
			}
			for _, ev := range h.rec.all() {
				if ev.Kind == Loaded && ev.Source.Name == "a.js" && ev.Source.Settling != (ev.Source.Hash != hashContent([]byte(v1))) {
					t.Errorf("Loaded a.js %s: Settling = %v; only loads after the initial scan settle", ev.Source.Hash, ev.Source.Settling)
				}
			}
		})
	}
}
