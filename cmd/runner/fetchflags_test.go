package main

import (
	"strings"
	"testing"
)

// A bad --allow-net entry or limit stops the runner before it connects, naming the flag.
func TestFetchFlagsAreValidated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--allow-net", "hooks.example.com,host:99999"}, `parse --allow-net entry "host:99999"`},
		{[]string{"--fetch-timeout", "0s"}, "--fetch-timeout"},
		{[]string{"--fetch-max-body", "-1"}, "--fetch-max-body"},
	} {
		args := append([]string{"--scripts", t.TempDir(), "--kubeconfig", "/nonexistent.invalid"}, tc.args...)
		_, err := execute(t, t.Context(), args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}
