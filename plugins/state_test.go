package plugins

import (
	"slices"
	"testing"
)

func src(name, content string) Source {
	return Source{Name: name, Content: []byte(content), Hash: hashContent([]byte(content))}
}

func snapOf(srcs ...Source) map[string]Source {
	m := map[string]Source{}
	for _, s := range srcs {
		m[s.Name] = s
	}
	return m
}

// TestStateApply feeds successive scans and checks the events and retries
// each one yields.
func TestStateApply(t *testing.T) {
	t.Parallel()
	type step struct {
		scan  map[string]Source
		want  []string
		retry bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{name: "new, changed, unchanged, removed", steps: []step{
			{scan: snapOf(src("b.js", "b"), src("a.js", "a")), want: []string{loaded("a.js", "a"), loaded("b.js", "b")}},
			{scan: snapOf(src("a.js", "a2"), src("b.js", "b")), want: []string{loaded("a.js", "a2")}},
			{scan: snapOf(src("a.js", "a2"), src("b.js", "b")), want: nil},
			{scan: snapOf(src("c.js", "c")), want: []string{removed("a.js"), removed("b.js"), loaded("c.js", "c")}},
		}},
		{name: "emptied then written", steps: []step{
			{scan: snapOf(src("a.js", "a")), want: []string{loaded("a.js", "a")}},
			{scan: snapOf(src("a.js", "")), want: nil, retry: true},
			{scan: snapOf(src("a.js", "a2")), want: []string{loaded("a.js", "a2")}},
		}},
		{name: "emptied and left empty", steps: []step{
			{scan: snapOf(src("a.js", "a")), want: []string{loaded("a.js", "a")}},
			{scan: snapOf(src("a.js", "")), want: nil, retry: true},
			{scan: snapOf(src("a.js", "")), want: []string{loaded("a.js", "")}},
			{scan: snapOf(src("a.js", "")), want: nil},
		}},
		{name: "emptied then same content back", steps: []step{
			{scan: snapOf(src("a.js", "a")), want: []string{loaded("a.js", "a")}},
			{scan: snapOf(src("a.js", "")), want: nil, retry: true},
			{scan: snapOf(src("a.js", "a")), want: nil},
			{scan: snapOf(src("a.js", "")), want: nil, retry: true},
		}},
		{name: "emptied then deleted", steps: []step{
			{scan: snapOf(src("a.js", "a")), want: []string{loaded("a.js", "a")}},
			{scan: snapOf(src("a.js", "")), want: nil, retry: true},
			{scan: snapOf(), want: []string{removed("a.js")}},
		}},
		{name: "new empty file is emitted at once", steps: []step{
			{scan: snapOf(), want: nil},
			{scan: snapOf(src("a.js", "")), want: []string{loaded("a.js", "")}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			st := newState()
			for i, s := range tt.steps {
				evs, retry := st.apply(s.scan, nil)
				if got := describeAll(evs); !slices.Equal(got, s.want) {
					t.Errorf("step %d: events %q, want %q", i, got, s.want)
				}
				if retry != s.retry {
					t.Errorf("step %d: retry = %v, want %v", i, retry, s.retry)
				}
			}
		})
	}
}

func TestHashContent(t *testing.T) {
	t.Parallel()
	// SHA-256 of "" starts with e3b0c44298fc.
	if got := hashContent(nil); got != "e3b0c44298fc" {
		t.Errorf("hashContent(nil) = %q", got)
	}
}
