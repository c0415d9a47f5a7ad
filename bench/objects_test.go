package bench

import "fmt"

var (
	teams    = []string{"payments", "search", "checkout", "identity", "catalog", "ads", "mobile"}
	services = []string{"api", "worker", "frontend", "gateway", "indexer"}
	tiers    = []string{"frontend", "backend", "data"}
)

// deploymentObject is Deployment number i, shaped like a small typical service: a few labels,
// one container with ports, env, resources and a probe, and on every fourth one a sidecar.
// The apiserver adds defaults and one managedFields entry; the list of 20,000 is about the
// 35 MB of DESIGN.md section 6.
func deploymentObject(i int) map[string]any {
	team, svc := teams[i%len(teams)], services[i%len(services)]
	name := fmt.Sprintf("%s-%s-%05d", team, svc, i)
	labels := map[string]any{"app": name, "team": team, "tier": tiers[i%len(tiers)]}
	containers := []any{mainContainer(team, svc, i)}
	if i%4 == 0 {
		containers = append(containers, sidecarContainer())
	}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": benchNamespace, "labels": labels},
		"spec": map[string]any{
			"replicas": int64(1 + i%5),
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec":     map[string]any{"containers": containers},
			},
		},
	}
}

func mainContainer(team, svc string, i int) map[string]any {
	return map[string]any{
		"name":  svc,
		"image": fmt.Sprintf("registry.example.com/%s/%s:1.%d.%d", team, svc, i%7, i%13),
		"ports": []any{map[string]any{"name": "http", "containerPort": int64(8080)}},
		"env": []any{
			map[string]any{"name": "LOG_LEVEL", "value": "info"},
			map[string]any{"name": "TEAM", "value": team},
		},
		"resources": map[string]any{
			"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
			"limits":   map[string]any{"memory": "512Mi"},
		},
	}
}

func sidecarContainer() map[string]any {
	return map[string]any{
		"name": "envoy", "image": "envoyproxy/envoy:v1.31.2",
		"resources": map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "64Mi"}},
	}
}

// smallDeploymentObject is Deployment number i in its minimal form: one label, one
// container with an image. With the apiserver's defaults and managedFields, 20,000 of them
// list as about the 23 MB of DESIGN.md section 6.
func smallDeploymentObject(i int) map[string]any {
	name := fmt.Sprintf("small-%05d", i)
	labels := map[string]any{"app": name}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": smallNamespace, "labels": labels},
		"spec": map[string]any{
			"replicas": int64(1 + i%3),
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{"containers": []any{
					map[string]any{"name": "app", "image": fmt.Sprintf("nginx:1.%d", 20+i%8)},
				}},
			},
		},
	}
}
