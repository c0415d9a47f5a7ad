package audit

import (
	"context"
	"maps"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// The namespaces an audit covers: those the script's webhook would be called for
// (Config.Namespaces, scripting.NamespaceSelection). A namespaced object is selected by its
// namespace's labels, read from the cache of Namespace objects; a Namespace by its own (as the
// API server matches a Namespace request); any other cluster-scoped object always, as a
// webhook's namespaceSelector does not apply to it. When a namespace's labels change, every
// object of it is audited again, so that it enters or leaves the selection.

// selects reports whether u is in the script's selection of namespaces.
func (a *Auditor) selects(u *unstructured.Unstructured) bool {
	if u.GetKind() == "Namespace" && u.GetAPIVersion() == "v1" {
		return a.cfg.Namespaces.Selects(u.GetName(), u.GetLabels())
	}
	ns := u.GetNamespace()
	if ns == "" {
		return true
	}
	return a.cfg.Namespaces.Selects(ns, a.namespaceLabels(ns))
}

// namespaceLabels are the labels of the cached Namespace ns; nil without the cache or the object.
func (a *Auditor) namespaceLabels(ns string) map[string]string {
	if a.cfg.NamespaceInformer == nil {
		return nil
	}
	item, exists, err := a.cfg.NamespaceInformer.GetStore().GetByKey(ns)
	u, ok := item.(*unstructured.Unstructured)
	if err != nil || !exists || !ok {
		return nil
	}
	return u.GetLabels()
}

// watchNamespaces registers on the Namespace cache and waits until it has synced, so that the
// initial pass selects by every namespace's labels; from then on a namespace added, deleted or
// relabelled has its objects audited again. It returns what unregisters, and false when ctx
// ended first or the cache cannot be registered on.
func (a *Auditor) watchNamespaces(ctx context.Context) (stop func(), ok bool) {
	inf := a.cfg.NamespaceInformer
	if inf == nil {
		a.cfg.Logger.Warn("audit: no Namespace cache to select namespaces by their labels")
		return func() {}, false
	}
	requeue := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			a.requeueNamespace(u.GetName())
		} else if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			a.requeueNamespace(tomb.Key)
		}
	}
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if !initial { // the initial list comes before any object is queued
				requeue(obj)
			}
		},
		UpdateFunc: func(oldObj, obj any) {
			o, _ := oldObj.(*unstructured.Unstructured)
			n, _ := obj.(*unstructured.Unstructured)
			if o == nil || n == nil || !maps.Equal(o.GetLabels(), n.GetLabels()) {
				requeue(obj)
			}
		},
		DeleteFunc: requeue,
	})
	if err != nil {
		a.cfg.Logger.Warn("audit: register on the Namespace cache", "error", err.Error())
		return func() {}, false
	}
	stop = func() { _ = inf.RemoveEventHandler(reg) } // the informer may have stopped
	if !waitSynced(ctx, reg) {
		return stop, false
	}
	return stop, true
}

// requeueNamespace queues every watched object of namespace ns.
func (a *Auditor) requeueNamespace(ns string) {
	for _, src := range a.cfg.Sources {
		keys, err := src.Informer.GetIndexer().IndexKeys(cache.NamespaceIndex, ns)
		if err != nil {
			continue // an informer without the namespace index: only the runner's have one
		}
		for _, k := range keys {
			a.queue.add(src.Resource + "|" + k)
		}
	}
}

// waitSynced waits until every registration has been given its informer's initial list, on
// the registrations' channels rather than by polling (client-go's WaitForCacheSync polls every
// 100 ms, which a `runner test` harness would wait for at every load); false when ctx ends
// first.
func waitSynced(ctx context.Context, regs ...cache.ResourceEventHandlerRegistration) bool {
	for _, reg := range regs {
		select {
		case <-reg.HasSyncedChecker().Done():
		case <-ctx.Done():
			return false
		}
	}
	return true
}
