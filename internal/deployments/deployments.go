package deployments

import (
	"encoding/json"
	"fmt"
)

var (
	teams    = []string{"payments", "search", "checkout", "identity", "catalog", "ads", "mobile"}
	services = []string{"api", "worker", "frontend", "gateway", "indexer"}
	tiers    = []string{"frontend", "backend", "data"}
)

// JSON is Deployment number i as the apiserver would send it.
func JSON(i int) []byte { return marshal(Object(i)) }

// ListJSON is a DeploymentList of n Deployments as the apiserver would send it.
func ListJSON(n int) []byte {
	items := make([]any, n)
	for i := range items {
		d := Object(i)
		delete(d, "kind") // the apiserver leaves the items of a typed list untyped
		delete(d, "apiVersion")
		items[i] = d
	}
	return marshal(map[string]any{
		"kind": "DeploymentList", "apiVersion": "apps/v1",
		"metadata": map[string]any{"resourceVersion": "987654"},
		"items":    items,
	})
}

// WatchFrame is Deployment number i in a watch frame, as the apiserver sends it: the event
// and a newline.
func WatchFrame(eventType string, i int) []byte {
	return append(marshal(map[string]any{"type": eventType, "object": Object(i)}), '\n')
}

// marshal encodes what this package builds: maps, slices, strings and numbers, which
// encoding/json always encodes.
func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("marshal deployments: %v", err))
	}
	return b
}

// Object is Deployment number i, decoded.
func Object(i int) map[string]any {
	team, svc := teams[i%len(teams)], services[i%len(services)]
	name := fmt.Sprintf("%s-%s-%05d", team, svc, i)
	labels := func() map[string]any { return map[string]any{"app": name, "team": team, "tier": tiers[i%len(tiers)]} }
	containers := []any{mainContainer(team, svc, i)}
	if i%4 == 0 {
		containers = append(containers, sidecarContainer())
	}
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": name, "namespace": "bench", "labels": labels(),
			"uid":               fmt.Sprintf("%08x-1f2e-4d3c-8b7a-%012x", i, i*7919),
			"resourceVersion":   fmt.Sprint(100000 + i),
			"generation":        1,
			"creationTimestamp": "2026-11-30T10:11:12Z",
			"managedFields":     []any{managedFields(i%4 == 0)},
		},
		"spec": map[string]any{
			"replicas":                int64(1 + i%5),
			"selector":                map[string]any{"matchLabels": map[string]any{"app": name}},
			"strategy":                map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": "25%", "maxSurge": "25%"}},
			"revisionHistoryLimit":    10,
			"progressDeadlineSeconds": 600,
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels()},
				"spec": map[string]any{
					"containers": containers, "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
					"dnsPolicy": "ClusterFirst", "securityContext": map[string]any{}, "schedulerName": "default-scheduler",
				},
			},
		},
		"status": map[string]any{},
	}
}

func mainContainer(team, svc string, i int) map[string]any {
	return map[string]any{
		"name":  svc,
		"image": fmt.Sprintf("registry.example.com/%s/%s:1.%d.%d", team, svc, i%7, i%13),
		"ports": []any{map[string]any{"name": "http", "containerPort": 8080, "protocol": "TCP"}},
		"env": []any{
			map[string]any{"name": "LOG_LEVEL", "value": "info"},
			map[string]any{"name": "TEAM", "value": team},
		},
		"resources": map[string]any{
			"requests": map[string]any{"cpu": "100m", "memory": "128Mi"},
			"limits":   map[string]any{"memory": "512Mi"},
		},
		"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
		"imagePullPolicy": "IfNotPresent",
	}
}

func sidecarContainer() map[string]any {
	return map[string]any{
		"name": "envoy", "image": "envoyproxy/envoy:v1.31.2",
		"resources":              map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "64Mi"}},
		"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
		"imagePullPolicy": "IfNotPresent",
	}
}

// managedFields is the entry the apiserver records for the create.
func managedFields(sidecar bool) map[string]any {
	empty := func() map[string]any { return map[string]any{} }
	labels := map[string]any{".": empty(), "f:app": empty(), "f:team": empty(), "f:tier": empty()}
	container := func() map[string]any {
		return map[string]any{".": empty(), "f:image": empty(), "f:imagePullPolicy": empty(), "f:name": empty(),
			"f:resources":              map[string]any{".": empty(), "f:requests": map[string]any{".": empty(), "f:cpu": empty(), "f:memory": empty()}},
			"f:terminationMessagePath": empty(), "f:terminationMessagePolicy": empty()}
	}
	main := container()
	main["f:env"] = map[string]any{".": empty(),
		`k:{"name":"LOG_LEVEL"}`: map[string]any{".": empty(), "f:name": empty(), "f:value": empty()},
		`k:{"name":"TEAM"}`:      map[string]any{".": empty(), "f:name": empty(), "f:value": empty()}}
	main["f:ports"] = map[string]any{".": empty(), `k:{"containerPort":8080,"protocol":"TCP"}`: map[string]any{
		".": empty(), "f:containerPort": empty(), "f:name": empty(), "f:protocol": empty()}}
	containers := map[string]any{`k:{"name":"api"}`: main}
	if sidecar {
		containers[`k:{"name":"envoy"}`] = container()
	}
	return map[string]any{
		"manager": "bench.test", "operation": "Update", "apiVersion": "apps/v1", "time": "2026-11-30T10:11:12Z",
		"fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{
			"f:metadata": map[string]any{"f:labels": labels},
			"f:spec": map[string]any{
				"f:progressDeadlineSeconds": empty(), "f:replicas": empty(), "f:revisionHistoryLimit": empty(),
				"f:selector": empty(),
				"f:strategy": map[string]any{"f:rollingUpdate": map[string]any{".": empty(), "f:maxSurge": empty(), "f:maxUnavailable": empty()}, "f:type": empty()},
				"f:template": map[string]any{
					"f:metadata": map[string]any{"f:labels": labels},
					"f:spec": map[string]any{"f:containers": containers, "f:dnsPolicy": empty(), "f:restartPolicy": empty(),
						"f:schedulerName": empty(), "f:securityContext": empty(), "f:terminationGracePeriodSeconds": empty()},
				},
			},
		},
	}
}
