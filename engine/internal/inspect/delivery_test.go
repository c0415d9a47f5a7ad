package inspect_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/jsinformer/jsinformer/dynamicinformer"
	"github.com/jsinformer/jsinformer/engine/internal/inspect"
	"github.com/jsinformer/jsinformer/scripting"
)

func TestJudgeGivesTheFirstReason(t *testing.T) {
	t.Parallel()
	pods := dynamicinformer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("pods"), Namespaced: true}
	pod := scripting.Object{
		"metadata": map[string]any{"name": "p", "namespace": "a", "labels": map[string]any{"app": "web"}},
		"spec":     map[string]any{"nodeName": "n1"},
	}
	tests := []struct {
		name       string
		watch      dynamicinformer.Key
		obj        scripting.Object
		wantReason string // "" when delivered
	}{
		{"all namespaces, no selector", dynamicinformer.Key{}, pod, ""},
		{"other namespace", dynamicinformer.Key{Namespace: "b"}, pod, "namespace"},
		{"namespace checked before existence", dynamicinformer.Key{Namespace: "b"}, nil, "namespace"},
		{"gone from the server", dynamicinformer.Key{}, nil, "not found"},
		{"label selector misses", dynamicinformer.Key{LabelSelector: "app=db"}, pod, "selector"},
		{"label selector matches", dynamicinformer.Key{LabelSelector: "app in (web,api)"}, pod, ""},
		{"field selector misses", dynamicinformer.Key{FieldSelector: "spec.nodeName=n2"}, pod, "field selector"},
		{"field selector matches", dynamicinformer.Key{FieldSelector: "spec.nodeName=n1,metadata.name=p"}, pod, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := inspect.Judge(pods, tt.watch, "a/p", tt.obj)
			if d.Delivered != (tt.wantReason == "") || d.Reason != tt.wantReason {
				t.Fatalf("delivered %v, reason %q (%s); want reason %q", d.Delivered, d.Reason, d.Detail, tt.wantReason)
			}
			if d.Watch == nil || d.Watch.Resource != "v1/pods" || d.Watch.LabelSelector != tt.watch.LabelSelector {
				t.Errorf("watch %+v does not describe the watch judged", d.Watch)
			}
		})
	}
}

func TestRedactHidesSecretValuesOnly(t *testing.T) {
	t.Parallel()
	secrets := dynamicinformer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("secrets"), Namespaced: true}
	configmaps := dynamicinformer.Resource{GVR: corev1.SchemeGroupVersion.WithResource("configmaps"), Namespaced: true}
	const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"
	obj := func() scripting.Object {
		return scripting.Object{
			"metadata": map[string]any{"name": "s", "annotations": map[string]any{lastApplied: `{"data":{"k":"c2VjcmV0"}}`, "other": "kept"}},
			"data":     map[string]any{"k": "c2VjcmV0"},
		}
	}
	secret := obj()
	got := inspect.Redact(secrets, secret)
	if v := got["data"].(map[string]any)["k"]; v != "<redacted>" {
		t.Errorf("a Secret's data shows %v", v)
	}
	ann := got["metadata"].(map[string]any)["annotations"].(map[string]any)
	if ann[lastApplied] != "<redacted>" || ann["other"] != "kept" {
		t.Errorf("annotations %v: want last-applied redacted and the others kept", ann)
	}
	if secret["data"].(map[string]any)["k"] != "c2VjcmV0" {
		t.Error("Redact changed the cached object it was given")
	}
	if cm := obj(); inspect.Redact(configmaps, cm)["data"].(map[string]any)["k"] != "c2VjcmV0" {
		t.Error("a ConfigMap's data was redacted")
	}
}
