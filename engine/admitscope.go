package engine

import (
	"github.com/jsinformer/jsinformer/engine/internal/version"
	"github.com/jsinformer/jsinformer/scripting"
)

// checkLockout refuses a definition whose webhooks would cover, under failurePolicy Fail, a
// resource where they could lock the cluster out (scripting.LockoutRisk), unless it says
// admission.allowClusterLockout: its watches, resolved (targets), tell each resource's scope.
func checkLockout(name string, def scripting.Definition, targets []version.Target) error {
	if !def.Validate && !def.Mutate {
		return nil
	}
	for _, t := range targets {
		gvr := t.Resource.GVR
		if err := def.Admission.CheckLockout(name, t.Resource.String(), gvr.Group, gvr.Resource, t.Resource.Namespaced); err != nil {
			return err
		}
	}
	return nil
}
