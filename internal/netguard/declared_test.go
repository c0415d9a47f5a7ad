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
		{restricted, "https://api.example.invalid/", "connection to host api.example.invalid:443 refused: not in the script's net declaration (add it to the script's net: [...]; the runner's --allow-net must allow it too)"},
		{restricted, "https://other.invalid/x?token=s3cret", "connection to host other.invalid:443 refused: not in the script's net declaration (add it to the script's net: [...]; the runner's --allow-net must allow it too)"},
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

// CheckAllowed applies the runner's list and the declaration as Do does, and each refusal
// names the list that must change: the flag, the declaration, or both.
func TestCheckAllowedNamesTheFix(t *testing.T) {
	t.Parallel()
	allow, err := ParseList([]string{"hooks.example.invalid", "10.0.0.0/8"})
	if err != nil {
		t.Fatal(err)
	}
	declared, err := ParseList([]string{"hooks.example.invalid", "api.example.invalid"})
	if err != nil {
		t.Fatal(err)
	}
	restricted := Restrict(t.Context(), &declared)
	for _, tc := range []struct {
		ctx     context.Context
		url     string
		refused string // "" when allowed
	}{
		{restricted, "https://hooks.example.invalid/x", ""},
		{t.Context(), "http://10.1.2.3/", ""},
		{restricted, "https://api.example.invalid/", "connection to host api.example.invalid:443 refused: not in --allow-net (allow it with the runner's --allow-net)"},
		{t.Context(), "https://other.invalid/", "connection to host other.invalid:443 refused: not in --allow-net (allow it with the runner's --allow-net)"},
		{restricted, "https://other.invalid/", "connection to host other.invalid:443 refused: not in --allow-net nor in the script's net declaration (add it to both: the runner's --allow-net and the script's net declaration)"},
		{Restrict(t.Context(), &List{}), "https://hooks.example.invalid/", "connection to host hooks.example.invalid:443 refused: not in the script's net declaration (add it to the script's net: [...]; the runner's --allow-net must allow it too)"},
	} {
		u, _ := url.Parse(tc.url)
		err := CheckAllowed(tc.ctx, &allow, u)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: %v, want allowed", tc.url, err)
		case tc.refused != "" && (err == nil || err.Error() != tc.refused):
			t.Errorf("%s: %v, want %q", tc.url, err, tc.refused)
		}
	}
}
