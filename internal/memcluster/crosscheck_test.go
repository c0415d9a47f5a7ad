package memcluster_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/internal/memcluster"
)

// The cross-check: one corpus of writes, run against the in-memory cluster and against the
// real control plane, must give the same answers (status code, reason and message of every
// error) and the same objects (modulo what the server makes up: uid, timestamps,
// resourceVersions, generated name suffixes), and a watch with a label selector must see the
// same events. Whatever the in-memory cluster gets wrong about the API server shows up here.

var (
	cmGVR     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	secretGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	nsGVR     = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	deployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	crdGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

// side is one of the two clusters the corpus runs on.
type side struct {
	dyn   dynamic.Interface
	ns    string
	group string // the corpus CRD's group
	saved map[string]*unstructured.Unstructured
}

func (s *side) gadgets() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: s.group, Version: "v1", Resource: "gadgets"}
}

func (s *side) ri(gvr schema.GroupVersionResource) dynamic.ResourceInterface {
	return s.dyn.Resource(gvr).Namespace(s.ns)
}

// step is one request of the corpus; it may read what earlier steps saved.
type step struct {
	name string
	run  func(ctx context.Context, s *side) (*unstructured.Unstructured, error)
}

func TestCrossCheckWithControlPlane(t *testing.T) {
	t.Parallel()
	cp := controlplane.Require(t, env)
	real, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := memcluster.New(memcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	suffix := rand.String(6)
	sides := []*side{
		{dyn: real, ns: "xcheck-" + suffix, group: "x" + suffix + ".memcluster.test", saved: map[string]*unstructured.Unstructured{}},
		{dyn: mem.Client(nil), ns: "xcheck-" + suffix, group: "x" + suffix + ".memcluster.test", saved: map[string]*unstructured.Unstructured{}},
	}
	ctx := t.Context()
	var watches [2]*eventLog
	for i, s := range sides {
		setUp(t, ctx, s)
		watches[i] = watchLabelled(t, ctx, s)
	}
	asServerRelease := olderAnswers(t, cp)
	for _, st := range corpus() {
		got := [2]string{}
		for i, s := range sides {
			obj, err := st.run(ctx, s)
			if i == 1 {
				err = asServerRelease(st.name, err)
			}
			got[i] = outcome(s, obj, err)
		}
		if got[0] != got[1] {
			t.Errorf("%s:\n  control plane: %s\n  in memory:     %s", st.name, got[0], got[1])
		}
	}
	compareWatches(t, ctx, sides, watches)
}

// setUp creates the corpus namespace and CRD, and waits until the CRD is served.
func setUp(t *testing.T, ctx context.Context, s *side) {
	t.Helper()
	ns := obj("v1", "Namespace", "", s.ns, nil)
	if _, err := s.dyn.Resource(nsGVR).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.dyn.Resource(nsGVR).Delete(context.Background(), s.ns, metav1.DeleteOptions{}) })
	if _, err := s.dyn.Resource(crdGVR).Create(ctx, gadgetCRD(s.group), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = s.dyn.Resource(crdGVR).Delete(context.Background(), "gadgets."+s.group, metav1.DeleteOptions{})
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := s.ri(s.gadgets()).List(ctx, metav1.ListOptions{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("CRD not served after 30s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func gadgetCRD(group string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	err := json.Unmarshal(fmt.Appendf(nil, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
	"metadata":{"name":"gadgets.%s"},
	"spec":{"group":"%s","scope":"Namespaced","names":{"kind":"Gadget","plural":"gadgets","singular":"gadget"},
	"versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
	"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`, group, group), &u.Object)
	if err != nil {
		panic(err)
	}
	return u
}

func obj(apiVersion, kind, namespace, name string, rest map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind}}
	for k, v := range rest {
		u.Object[k] = v
	}
	u.SetName(name)
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	return u
}

func cm(s *side, name string, data map[string]any) *unstructured.Unstructured {
	return obj("v1", "ConfigMap", s.ns, name, map[string]any{"data": data})
}

// outcome renders a step's result comparably: the error's code, reason and message, or the
// object without what the server makes up.
func outcome(s *side, obj *unstructured.Unstructured, err error) string {
	var out any
	if err != nil {
		status, ok := err.(apierrors.APIStatus)
		if !ok {
			out = map[string]any{"clientError": err.Error()}
		} else {
			st := status.Status()
			out = map[string]any{"code": st.Code, "reason": st.Reason, "message": st.Message}
		}
	} else if obj != nil {
		out = comparable(obj)
	}
	data, _ := json.Marshal(out)
	text := strings.ReplaceAll(string(data), s.group, "<group>")
	text = strings.ReplaceAll(text, s.ns, "<ns>")
	text = recordRV.ReplaceAllString(text, "in record (<rv>)")
	return generatedSuffix.ReplaceAllString(text, "$1<suffix>")
}

var (
	generatedSuffix = regexp.MustCompile(`\b(gen-|gen\.|cm1\.)[a-z0-9]{5}\b`)
	recordRV        = regexp.MustCompile(`in record \(\d+\)`)
)

// comparable strips server-made values and the defaults the real server applies to
// built-in types (the in-memory cluster does not default; see doc.go).
func comparable(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy().Object
	md := c["metadata"].(map[string]any)
	for _, k := range []string{"uid", "creationTimestamp", "resourceVersion"} {
		delete(md, k)
	}
	if _, ok := md["deletionTimestamp"]; ok {
		md["deletionTimestamp"] = "<set>"
	}
	if _, ok := serverDefaults[u.GetKind()]; ok {
		delete(md, "managedFields") // the server's defaults are owned by their writers
	}
	if mf, ok := md["managedFields"].([]any); ok {
		for _, e := range mf {
			delete(e.(map[string]any), "time")
		}
		// Both servers order the entries by their times, to the second, then by manager: two
		// writes a second apart on one side may share a second on the other. Compared by
		// manager and operation, whatever their order.
		slices.SortStableFunc(mf, func(a, b any) int {
			return cmp.Compare(fmt.Sprint(a.(map[string]any)["manager"], a.(map[string]any)["operation"]),
				fmt.Sprint(b.(map[string]any)["manager"], b.(map[string]any)["operation"]))
		})
	}
	if s, ok := c["status"].(map[string]any); ok && len(s) == 0 {
		delete(c, "status")
	}
	for _, path := range serverDefaults[u.GetKind()] {
		unstructured.RemoveNestedField(c, path...)
	}
	if containers, ok, _ := unstructured.NestedSlice(c, "spec", "template", "spec", "containers"); ok {
		for _, ct := range containers {
			for _, k := range containerDefaults {
				delete(ct.(map[string]any), k)
			}
		}
		_ = unstructured.SetNestedSlice(c, containers, "spec", "template", "spec", "containers")
	}
	return c
}

// serverDefaults are the fields kube-apiserver's defaulting adds to the built-in kinds of the
// corpus; the in-memory cluster leaves them out.
var serverDefaults = map[string][][]string{
	"Deployment": {
		{"spec", "strategy"}, {"spec", "revisionHistoryLimit"}, {"spec", "progressDeadlineSeconds"},
		{"spec", "template", "metadata", "creationTimestamp"},
		{"spec", "template", "spec", "restartPolicy"}, {"spec", "template", "spec", "dnsPolicy"},
		{"spec", "template", "spec", "terminationGracePeriodSeconds"}, {"spec", "template", "spec", "securityContext"},
		{"spec", "template", "spec", "schedulerName"},
	},
}

// containerDefaults are the defaulted fields of each container of a pod template.
var containerDefaults = []string{"terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy", "resources"}

// eventLog collects the events of one watch.
type eventLog struct {
	w      watch.Interface
	events chan string
}

// watchLabelled watches the corpus namespace's ConfigMaps labelled watched=yes.
func watchLabelled(t *testing.T, ctx context.Context, s *side) *eventLog {
	t.Helper()
	w, err := s.ri(cmGVR).Watch(ctx, metav1.ListOptions{LabelSelector: "watched=yes"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	l := &eventLog{w: w, events: make(chan string, 1000)}
	go func() {
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			data, _ := json.Marshal(u.Object["data"])
			l.events <- fmt.Sprintf("%s %s %s", ev.Type, u.GetName(), data)
		}
	}()
	return l
}

// compareWatches ends both watches with a last labelled object and compares what they saw.
func compareWatches(t *testing.T, ctx context.Context, sides []*side, logs [2]*eventLog) {
	t.Helper()
	var seen [2][]string
	for i, s := range sides {
		end := cm(s, "the-end", nil)
		end.SetLabels(map[string]string{"watched": "yes"})
		if _, err := s.ri(cmGVR).Create(ctx, end, manager("corpus")); err != nil {
			t.Fatal(err)
		}
		timeout := time.After(10 * time.Second)
		for done := false; !done; {
			select {
			case ev := <-logs[i].events:
				seen[i] = append(seen[i], ev)
				done = strings.HasPrefix(ev, "ADDED the-end")
			case <-timeout:
				t.Fatalf("side %d: no event for the last object within 10s; saw %q", i, seen[i])
			}
		}
	}
	if strings.Join(seen[0], "\n") != strings.Join(seen[1], "\n") {
		t.Errorf("watch events differ:\ncontrol plane:\n  %s\nin memory:\n  %s", strings.Join(seen[0], "\n  "), strings.Join(seen[1], "\n  "))
	}
}
