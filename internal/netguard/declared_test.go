package netguard

import (
	"context"
	"errors"
	"net/url"
	"testing"
)

// CheckDeclared refuses what the script's declaration (Restrict) does not list, with the
// error Do gives, and lets everything through without a declaration.
func TestCheckDeclared(t *testing.T) {
	t.Parallel()
	l, err := ParseList([]string{"hooks.example.invalid", "api.example.invalid:8443"})
	if err != nil {
		t.Fatal(err)
	}
	restricted := Restrict(t.Context(), &l)
	for _, tc := range []struct {
		ctx     context.Context
		url     string
		refused string // "" when allowed
	}{
		{restricted, "https://hooks.example.invalid/x?token=s3cret", ""},
		{restricted, "http://hooks.example.invalid:9000/x", ""},
		{restricted, "https://api.example.invalid:8443/", ""},
		{restricted, "https://api.example.invalid/", "connection to host api.example.invalid:443 refused: not in the script's net declaration (allow it with --allow-net)"},
		{restricted, "https://other.invalid/x?token=s3cret", "connection to host other.invalid:443 refused: not in the script's net declaration (allow it with --allow-net)"},
		{t.Context(), "https://other.invalid/", ""},
	} {
		u, _ := url.Parse(tc.url)
		err := CheckDeclared(tc.ctx, u)
		var re *RefusedError
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: %v, want allowed", tc.url, err)
		case tc.refused != "" && (err == nil || err.Error() != tc.refused || !errors.As(err, &re)):
			t.Errorf("%s: %v, want %q", tc.url, err, tc.refused)
		}
	}
}
