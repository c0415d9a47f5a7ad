package audit

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"

	"github.com/jsinformer/jsinformer/scripting"
)

// Source is one watched resource of an audit script: the shared informer whose cache it
// audits and the names a result's subject takes.
type Source struct {
	Informer cache.SharedIndexInformer
	Resource string // canonical, as ctx.resource: "apps/v1/deployments"
}

// Config is what an Auditor needs.
type Config struct {
	Script  string
	Mode    string // the script's admission mode: a denial in "warn" mode is a Warn result
	Sources []Source
	// Validate runs the script's validate on a runtime of the Auditor's own (never one that
	// serves handlers or admission), within the script's admission deadline.
	Validate func(req scripting.AdmissionRequest) (scripting.Validation, error)
	Results  *Results
	// Pass is the number Results.StartPass gave this Auditor's initial pass.
	Pass   uint64
	Logger *slog.Logger
	Now    func() time.Time
	// Namespaces is the script's selection of namespaces (admission.namespaceSelector,
	// excludeNamespaces, the protected namespaces): an object it does not select gets no
	// result, as its webhook never sees it (scope.go).
	Namespaces scripting.NamespaceSelection
	// NamespaceInformer is the cache of Namespace objects whose labels Namespaces reads;
	// required when Namespaces.ByLabels.
	NamespaceInformer cache.SharedIndexInformer
}

// Auditor evaluates one script version's validate over every object of its watch: each one
// once on Run (the initial pass), then each one again whenever it changes; a deleted object's
// result goes. Changes wait in a queue of keys, which holds each key at most once however
// often the object changes (queue.go), so the queue is bounded by the number of objects
// watched and a busy object is evaluated once per pass, on its latest state.
type Auditor struct {
	ctx   context.Context // Run's: once done, nothing more is recorded
	cfg   Config
	queue *keyQueue
	// passed: the initial pass is done (Run's goroutine only).
	passed bool
}

// NewAuditor returns an Auditor for cfg; Run starts it.
func NewAuditor(cfg Config) *Auditor {
	return &Auditor{cfg: cfg, queue: newKeyQueue()}
}

// Idle reports that the Auditor has nothing queued nor being audited; the initial pass is
// Results.Passing's to tell.
func (a *Auditor) Idle() bool { return a.queue.idle() }

// Run registers on the sources' informers, audits until ctx is done, then unregisters. The
// results it set stay: the next version's Run replaces them.
func (a *Auditor) Run(ctx context.Context) {
	a.ctx = ctx
	if a.cfg.Namespaces.ByLabels() {
		stopNamespaces, ok := a.watchNamespaces(ctx)
		defer stopNamespaces()
		if !ok {
			a.cfg.Results.PassDone(a.cfg.Script, a.cfg.Pass) // stopped, or it audits nothing
			return
		}
	}
	var regs []cache.ResourceEventHandlerRegistration
	defer func() {
		for i, reg := range regs {
			_ = a.cfg.Sources[i].Informer.RemoveEventHandler(reg) // the informer may have stopped
		}
	}()
	for _, src := range a.cfg.Sources {
		reg, err := src.Informer.AddEventHandler(a.handler(src.Resource))
		if err != nil {
			a.cfg.Logger.Warn("audit: register on informer", "resource", src.Resource, "error", err.Error())
			a.cfg.Results.PassDone(a.cfg.Script, a.cfg.Pass) // it audits nothing: not a pass to wait for
			return
		}
		regs = append(regs, reg)
	}
	stop := context.AfterFunc(ctx, a.queue.shutdown)
	defer stop()
	var retain sync.WaitGroup
	retain.Go(func() { a.retainAfterSync(ctx, regs) })
	defer retain.Wait() // it returns once synced or ctx is done
	for a.next() {
	}
}

// handler queues the key of every add, update and delete of resource, and counts the
// objects of the initial list for the pass's progress.
func (a *Auditor) handler(resource string) cache.ResourceEventHandler {
	add := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			a.queue.add(resource + "|" + key)
		}
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if initial {
				a.cfg.Results.Listed(a.cfg.Script, a.cfg.Pass)
			}
			add(obj)
		},
		UpdateFunc: func(_, obj any) { add(obj) },
		DeleteFunc: add,
	}
}

// next audits the next key; false once the queue has shut down.
func (a *Auditor) next() bool {
	key, ok := a.queue.get()
	if !ok || a.ctx.Err() != nil {
		return false // a stopped Auditor must not end its successor's pass
	}
	defer a.queue.done(key)
	if key == passDone {
		a.cfg.Results.PassDone(a.cfg.Script, a.cfg.Pass)
		a.passed = true
		return true
	}
	a.audit(key)
	if !a.passed {
		a.cfg.Results.Audited(a.cfg.Script, a.cfg.Pass)
	}
	return true
}

func (a *Auditor) audit(key string) {
	resource, objKey, _ := strings.Cut(key, "|")
	src, ok := a.source(resource)
	if !ok {
		return
	}
	item, exists, err := src.Informer.GetStore().GetByKey(objKey)
	u, isObj := item.(*unstructured.Unstructured)
	if err != nil || !exists || !isObj {
		a.cfg.Results.Delete(a.cfg.Script, key)
		return
	}
	if !a.selects(u) {
		a.cfg.Results.Delete(a.cfg.Script, key)
		return
	}
	r := a.evaluate(resource, u)
	if a.ctx.Err() == nil { // a successor may be auditing already: a stopped Auditor's verdict is stale
		a.cfg.Results.Set(key, r)
	}
}

func (a *Auditor) source(resource string) (Source, bool) {
	for _, s := range a.cfg.Sources {
		if s.Resource == resource {
			return s, true
		}
	}
	return Source{}, false
}

// evaluate calls validate on u as an audit: ctx.operation is scripting.OperationAudit.
func (a *Auditor) evaluate(resource string, u *unstructured.Unstructured) Result {
	r := Result{Script: a.cfg.Script, Time: a.cfg.Now().Truncate(1e9), Subject: Subject{
		APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), UID: string(u.GetUID()),
	}}
	res, err := a.cfg.Validate(scripting.AdmissionRequest{Operation: scripting.OperationAudit, Object: u.Object,
		Resource: resource, Namespace: u.GetNamespace(), Name: u.GetName()})
	switch {
	case err != nil:
		r.Result, r.Message = Error, errorMessage(err)
	case !res.Allowed && a.cfg.Mode == scripting.ModeWarn:
		r.Result, r.Message = Warn, res.Message
	case !res.Allowed:
		r.Result, r.Message = Fail, res.Message
	case len(res.Warnings) > 0:
		r.Result, r.Message = Warn, strings.Join(res.Warnings, "; ")
	default:
		r.Result = Pass
	}
	return r
}

// passDone is the queue key retainAfterSync adds once the informers delivered their initial
// lists: the queue is FIFO and holds each key once, so when it comes out every object of the
// initial pass has been audited (a key re-added meanwhile may wait behind it: it is a change,
// not the pass).
const passDone = ""

// errorMessage is err's text, cut to what a report result carries.
func errorMessage(err error) string { return err.Error() }

// retainAfterSync waits until every registration has been given its informer's initial list,
// then forgets the results of objects no source holds any more (those a previous version
// audited that this one does not watch, or that went while none was auditing).
func (a *Auditor) retainAfterSync(ctx context.Context, regs []cache.ResourceEventHandlerRegistration) {
	if !waitSynced(ctx, regs...) {
		return
	}
	a.cfg.Results.Retain(a.cfg.Script, func(key string) bool {
		resource, objKey, _ := strings.Cut(key, "|")
		src, ok := a.source(resource)
		if !ok {
			return false
		}
		_, exists, err := src.Informer.GetStore().GetByKey(objKey)
		return err == nil && exists
	})
	a.queue.add(passDone)
}
