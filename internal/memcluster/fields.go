package memcluster

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// fieldManagers builds and keeps apimachinery's field managers, the code kube-apiserver runs
// for managedFields and server-side apply: one per kind and subresource. Built-in kinds use
// client-go's compiled-in OpenAPI models (so lists merge by key as on the server); custom
// resources use the deduced schema the server uses for CRDs without one (maps merge, lists
// are atomic).
type fieldManagers struct {
	mu      sync.Mutex
	byKind  map[fmKey]*managedfields.FieldManager
	builtin managedfields.TypeConverter // built lazily: parsing the models takes a while
}

type fmKey struct {
	gvk         schema.GroupVersionKind
	subresource string
}

func newFieldManagers() *fieldManagers {
	return &fieldManagers{byKind: map[fmKey]*managedfields.FieldManager{}}
}

// get returns the field manager of res's kind for subresource ("" or "status").
func (f *fieldManagers) get(res *resource, subresource string) (*managedfields.FieldManager, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := fmKey{gvk: res.gvk(), subresource: subresource}
	if m := f.byKind[k]; m != nil {
		return m, nil
	}
	reset := resetFields(res, subresource)
	var m *managedfields.FieldManager
	var err error
	if scheme.Scheme.Recognizes(k.gvk) {
		if f.builtin == nil {
			f.builtin = applyconfigurations.NewTypeConverter(scheme.Scheme)
		}
		m, err = managedfields.NewDefaultFieldManager(f.builtin, sameVersion{}, noDefaults{}, unstructuredCreater{},
			k.gvk, k.gvk.GroupVersion(), subresource, reset)
	} else {
		m, err = managedfields.NewDefaultCRDFieldManager(managedfields.NewDeducedTypeConverter(), sameVersion{}, noDefaults{},
			unstructuredCreater{}, k.gvk, k.gvk.GroupVersion(), subresource, reset)
	}
	if err != nil {
		return nil, fmt.Errorf("create field manager for %s: %w", k.gvk, err)
	}
	f.byKind[k] = m
	return m, nil
}

// resetFields are the fields a write through one endpoint may not set, as the server's
// strategies declare them: the main resource does not set status, the status subresource
// does not set spec.
func resetFields(res *resource, subresource string) map[fieldpath.APIVersion]fieldpath.Filter {
	if !res.status {
		return nil
	}
	path := "status"
	if subresource == "status" {
		path = "spec"
	}
	return map[fieldpath.APIVersion]fieldpath.Filter{
		fieldpath.APIVersion(res.gvr.GroupVersion().String()): fieldpath.NewExcludeSetFilter(fieldpath.NewSet(fieldpath.MakePathOrDie(path))),
	}
}

// sameVersion is the object converter of a cluster that stores every resource in the
// version it is served in: conversion only relabels.
type sameVersion struct{}

func (sameVersion) Convert(in, out, _ any) error {
	return fmt.Errorf("convert %T to %T: not supported", in, out)
}

func (sameVersion) ConvertToVersion(in runtime.Object, target runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("convert %T: only unstructured objects are stored", in)
	}
	gvk, ok := target.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()})
	if !ok {
		return nil, fmt.Errorf("convert %s: no kind for %v", u.GroupVersionKind(), target)
	}
	out := u.DeepCopy()
	out.SetGroupVersionKind(gvk)
	return out, nil
}

func (sameVersion) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

type noDefaults struct{}

func (noDefaults) Default(runtime.Object) {}

type unstructuredCreater struct{}

func (unstructuredCreater) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvk)
	return u, nil
}
