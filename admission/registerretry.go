package admission

import (
	"errors"
	"regexp"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// A configuration the API server still refuses (checkHook did not foresee why): the entries
// its 422 names are left out and the rest written again, so that one entry never keeps the
// others from being updated.

var webhookField = regexp.MustCompile(`^webhooks\[(\d+)\]`)

// refusedEntries are the indexes of hooks that err, the API server's answer to a write of
// their configuration, names as invalid; nil when err is no such answer.
func refusedEntries(err error, hooks int) map[int]bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) || status.Status().Details == nil {
		return nil
	}
	out := map[int]bool{}
	for _, cause := range status.Status().Details.Causes {
		if m := webhookField.FindStringSubmatch(cause.Field); m != nil {
			if i, err := strconv.Atoi(m[1]); err == nil && i < hooks {
				out[i] = true
			}
		}
	}
	return out
}

// withoutRefused writes hooks with apply, and while the API server refuses entries of them
// by index, writes them again without those, each left out reported in refused under its
// name. It returns the last write's error.
func withoutRefused[H any](hooks []H, name func(H) string, refused map[string]string, apply func([]H) error) error {
	err := apply(hooks)
	for bad := refusedEntries(err, len(hooks)); len(bad) > 0; bad = refusedEntries(err, len(hooks)) {
		kept := hooks[:0:0]
		for i, h := range hooks {
			if bad[i] {
				refused[name(h)] = err.Error()
			} else {
				kept = append(kept, h)
			}
		}
		hooks = kept
		err = apply(hooks)
	}
	return err
}
