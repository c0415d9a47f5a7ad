package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

var (
	namespaces  = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	configmaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	crdsGVR     = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	widgets     = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
)

type seeder struct{ dyn dynamic.Interface }

func newSeeder(cfg *rest.Config) (*seeder, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	return &seeder{dyn: dyn}, nil
}

// seed applies the CRDs and creates namespaces, deployments, a configmap and a widget.
func (s *seeder) seed(ctx context.Context, crdDir string) error {
	if err := s.applyCRDs(ctx, crdDir); err != nil {
		return err
	}
	objs := []struct {
		gvr schema.GroupVersionResource
		obj map[string]any
	}{
		{namespaces, object("v1", "Namespace", "", "demo-a", nil)},
		{namespaces, object("v1", "Namespace", "", "demo-b", nil)},
		{deployments, deployment("demo-a", "web", "nginx:1.27", 2)},
		{deployments, deployment("demo-a", "api", "nginx:1.27", 1)},
		{deployments, deployment("demo-b", "worker", "busybox:1.36", 1)},
		{configmaps, object("v1", "ConfigMap", "demo-a", "app-config", map[string]any{"data": map[string]any{"greeting": "hello"}})},
		{widgets, object("example.com/v1", "Widget", "demo-a", "gear", map[string]any{"spec": map[string]any{"size": int64(3), "color": "blue"}})},
	}
	for _, o := range objs {
		u := &unstructured.Unstructured{Object: o.obj}
		ri := s.dyn.Resource(o.gvr).Namespace(u.GetNamespace())
		if _, err := ri.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		fmt.Printf("demo: created %s %s/%s\n", u.GetKind(), u.GetNamespace(), u.GetName())
	}
	return nil
}

func (s *seeder) applyCRDs(ctx context.Context, dir string) error {
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read CRD: %w", err)
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(data, &u.Object); err != nil {
			return fmt.Errorf("parse %s: %w", f, err)
		}
		if _, err := s.dyn.Resource(crdsGVR).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create CRD %s: %w", u.GetName(), err)
		}
		fmt.Printf("demo: created CustomResourceDefinition %s\n", u.GetName())
	}
	return s.waitForResource(ctx, widgets)
}

func (s *seeder) waitForResource(ctx context.Context, gvr schema.GroupVersionResource) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := s.dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wait for %s to be served: %w", gvr.Resource, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// tour makes a few changes, one every few seconds, so the example handlers print something.
func (s *seeder) tour(ctx context.Context) {
	steps := []struct {
		say   string
		gvr   schema.GroupVersionResource
		ns    string
		name  string
		patch string
	}{
		{"scale demo-a/web to 3", deployments, "demo-a", "web", `{"spec":{"replicas":3}}`},
		{"move demo-a/api to nginx:1.28", deployments, "demo-a", "api",
			`{"spec":{"template":{"spec":{"containers":[{"name":"main","image":"nginx:1.28"}]}}}}`},
		{"grow widget demo-a/gear to 12", widgets, "demo-a", "gear", `{"spec":{"size":12}}`},
	}
	for _, step := range steps {
		select {
		case <-ctx.Done():
			return
		case <-time.After(4 * time.Second):
		}
		fmt.Printf("\ndemo: %s\n", step.say)
		_, err := s.dyn.Resource(step.gvr).Namespace(step.ns).Patch(ctx, step.name, types.MergePatchType, []byte(step.patch), metav1.PatchOptions{})
		if err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "demo:", err)
		}
	}
	fmt.Println("\ndemo: tour done. Try: KUBECONFIG=.demo/kubeconfig kubectl ... or edit examples/scripts/*.js and save.")
}

func object(apiVersion, kind, ns, name string, extra map[string]any) map[string]any {
	meta := map[string]any{"name": name}
	if ns != "" {
		meta["namespace"] = ns
	}
	obj := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
	for k, v := range extra {
		obj[k] = v
	}
	return obj
}

func deployment(ns, name, image string, replicas int64) map[string]any {
	labels := map[string]any{"app": name}
	return object("apps/v1", "Deployment", ns, name, map[string]any{"spec": map[string]any{
		"replicas": replicas,
		"selector": map[string]any{"matchLabels": labels},
		"template": map[string]any{
			"metadata": map[string]any{"labels": labels},
			"spec":     map[string]any{"containers": []any{map[string]any{"name": "main", "image": image}}},
		},
	}})
}
