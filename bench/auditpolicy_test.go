package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The policies BenchmarkAudit audits the seeded Deployments with: three a platform team
// would run (a registered team label, images pinned and from the company registry, memory
// limits and CPU requests set), each `admission: { audit: true, mode: "audit" }`. On the
// realistic Deployments (objects_test.go) two teams in seven are not registered and every
// fourth Deployment has a sidecar from Docker Hub without limits, so each policy has failing
// results in every report part.

// auditPolicies are the three policies' file names, in the order they are saved.
var auditPolicies = []string{"team.js", "images.js", "limits.js"}

// auditPolicySources are the policies. %[1]d is the policy's variant, part of every failure
// message: a save of another variant changes every failing result, so every report part; %[2]d
// is a revision in a comment: a save of another revision is a new version (a new pass) whose
// results are the same.
var auditPolicySources = map[string]string{
	"team.js": `// revision %[2]d
const registered = new Set(["payments", "search", "checkout", "identity", "catalog"]);
export default {
  watch: { resource: "apps/v1/deployments", namespace: "` + benchNamespace + `" },
  validate(d, ctx) {
    const team = d.metadata.labels?.team;
    if (!team) return { allowed: false, message: "label 'team' is required (policy v%[1]d)" };
    if (!registered.has(team)) return { allowed: false, message: "team " + JSON.stringify(team) + " is not registered (policy v%[1]d)" };
  },
  admission: { audit: true, mode: "audit" },
};
`,
	"images.js": `// revision %[2]d
export default {
  watch: { resource: "apps/v1/deployments", namespace: "` + benchNamespace + `" },
  validate(d, ctx) {
    const spec = d.spec.template.spec;
    for (const c of [...(spec.initContainers || []), ...spec.containers]) {
      const ref = c.image.split("@")[0];
      const tag = ref.lastIndexOf(":") > ref.lastIndexOf("/") ? ref.slice(ref.lastIndexOf(":") + 1) : "";
      if (!c.image.includes("@") && (tag === "" || tag === "latest"))
        return { allowed: false, message: "container " + c.name + ": image " + c.image + " is not pinned (policy v%[1]d)" };
      if (!c.image.startsWith("registry.example.com/"))
        return { allowed: false, message: "container " + c.name + ": image " + c.image + " is not from registry.example.com (policy v%[1]d)" };
    }
  },
  admission: { audit: true, mode: "audit" },
};
`,
	"limits.js": `// revision %[2]d
export default {
  watch: { resource: "apps/v1/deployments", namespace: "` + benchNamespace + `" },
  validate(d, ctx) {
    for (const c of d.spec.template.spec.containers) {
      const r = c.resources || {};
      if (!r.limits?.memory) return { allowed: false, message: "container " + c.name + ": resources.limits.memory is not set (policy v%[1]d)" };
      if (!r.requests?.cpu) return { allowed: false, message: "container " + c.name + ": resources.requests.cpu is not set (policy v%[1]d)" };
    }
  },
  admission: { audit: true, mode: "audit" },
};
`,
}

// auditPolicy is policy file's source at variant and revision.
func auditPolicy(file string, variant, revision int) string {
	return fmt.Sprintf(auditPolicySources[file], variant, revision)
}

// auditedHandlerScript is the handler the runner runs on the same Deployments before any
// policy is saved: it holds them, as a runner with other scripts on them would.
const auditedHandlerScript = `let n = 0;
export default {
  watch: { resource: "apps/v1/deployments", namespace: "` + benchNamespace + `" },
  onAdd(d) { n++; },
  onUpdate(o, d) {},
};
`

// configMapAuditScript audits the latency ConfigMaps of ns: a write's stamp (its send time in
// nanoseconds) passes when its microsecond digit is even, so about half of the writes flip
// their object's result, and the namespace's report changes in every window.
func configMapAuditScript(ns string) string {
	return `export default {
  watch: { resource: "v1/configmaps", namespace: "` + ns + `" },
  validate(cm, ctx) {
    const t = cm.metadata.annotations?.["bench/t"] || "";
    if (Number(t.slice(-4, -3)) % 2 === 1) return { allowed: false, message: "stamp " + t + " is odd" };
  },
  admission: { audit: true, mode: "audit" },
};
`
}

// auditExpect is what the reports of the three policies should say: each script's results
// by outcome, over the seeded Deployments and, if flips > 0, the benchmark's own flip
// Deployments, flipped of them without a registered team.
func auditExpect(flips, flipped int) map[string]map[string]int {
	out := map[string]map[string]int{}
	for _, file := range auditPolicies {
		out[file] = map[string]int{"pass": 0, "fail": 0}
	}
	count := func(file string, fail bool) {
		if fail {
			out[file]["fail"]++
		} else {
			out[file]["pass"]++
		}
	}
	for i := range seedCount + flips {
		sidecar := i%4 == 0
		unregistered := i%len(teams) >= 5 // ads, mobile
		if i >= seedCount {
			unregistered = i-seedCount < flipped // a flip Deployment is in team payments until flipped
		}
		count("team.js", unregistered)
		count("images.js", sidecar)
		count("limits.js", sidecar)
	}
	return out
}

// describeCounts prints counts by script, sorted, for failure messages.
func describeCounts(c map[string]map[string]int) string {
	var parts []string
	for _, s := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, fmt.Sprintf("%s %v", s, c[s]))
	}
	return strings.Join(parts, "; ")
}
