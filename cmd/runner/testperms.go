package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/jsinformer/jsinformer/permissions"
)

// usedPermissions collects what the tests' k8s calls used (`runner test --permissions`).
// add is called from the harnesses' script goroutines.
type usedPermissions struct {
	mu    sync.Mutex
	needs []permissions.Need
}

func (u *usedPermissions) add(n permissions.Need) {
	n.Why += " in a test"
	u.mu.Lock()
	defer u.mu.Unlock()
	if !slices.Contains(u.needs, n) {
		u.needs = append(u.needs, n)
	}
}

// print writes the RBAC objects for the plugins of the test files' folders: what their
// sources show, and what the tests used. A folder whose plugins do not all load is said on
// stderr; what the tests used is printed anyway.
func (u *usedPermissions) print(cmd *cobra.Command, files []string) error {
	u.mu.Lock()
	needs := slices.Clone(u.needs)
	u.mu.Unlock()
	rep := &permissions.Report{}
	var dirs []string
	for _, f := range files {
		if dir := filepath.Dir(f); !slices.Contains(dirs, dir) {
			dirs = append(dirs, dir)
		}
	}
	for _, dir := range dirs {
		static, err := permissions.Compute(cmd.Context(), permissions.Options{Dir: dir})
		if err != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: permissions of %s: %v\n", dir, err)
		}
		if static != nil {
			needs = append(needs, static.Needs...)
			rep.Dynamic = append(rep.Dynamic, static.Dynamic...)
			rep.Admission = append(rep.Admission, static.Admission...)
			rep.Unwatched = append(rep.Unwatched, static.Unwatched...)
			rep.Net = append(rep.Net, static.Net...)
		}
	}
	permissions.Sort(needs)
	rep.Needs = needs
	fmt.Fprintln(cmd.OutOrStdout())
	header := append([]string{"What the plugins need: their sources, and the k8s calls the tests made (\"in a test\")."},
		permissions.Header("runner rbac", rep)[1:]...)
	if len(rep.Admission) > 0 {
		header = append(header, "Serving "+strings.Join(rep.Admission, ", ")+"'s validate/mutate takes more, as the runner's",
			"--webhook-* flags say: `runner rbac` with those flags prints it.")
	}
	if err := permissions.WriteYAML(cmd.OutOrStdout(), permissions.Roles(needs), permissions.Identity{Name: "jsinformer"}, header); err != nil {
		return fmt.Errorf("write permissions: %w", err)
	}
	return nil
}
