package leader

import "testing"

// Without leader election (a nil *Elector) the runner always acts; an elector that has not
// started leading never does, and has nothing to fence.
func TestValidBeforeLeading(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		l    *Elector
		want bool
	}{
		{"no leader election", nil, true},
		{"not leading yet", &Elector{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.l.Valid(); got != tt.want {
				t.Fatalf("Valid = %v, want %v", got, tt.want)
			}
		})
	}
	l := &Elector{}
	if l.Fenced() || l.Leading() || l.Holder() != "" {
		t.Fatalf("an elector that never led: fenced %v, leading %v, holder %q", l.Fenced(), l.Leading(), l.Holder())
	}
}
