package check

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/jsinformer/jsinformer/internal/memcluster"
	"github.com/jsinformer/jsinformer/offline"
)

// Options configure Run.
type Options struct {
	// ScriptsDir is the folder of scripts whose validate and mutate judge the manifests.
	ScriptsDir string
	// Only names the admission scripts to run (paths relative to ScriptsDir); none means
	// every plugin of the folder that defines validate or mutate.
	Only []string
	// Resources is --gvr: the resources of scripts that name no watch of their own.
	Resources []string
	// Mode is how results are reported; default ModeEnforce.
	Mode Mode
	// Logger receives what the engine and the scripts log; default discards.
	Logger *slog.Logger
	// Now is where the scripts' clock starts (it does not move); default time.Now().
	Now time.Time
	// QuietTimeout bounds each wait for the engine (offline.Config.QuietTimeout); default 30s.
	QuietTimeout time.Duration
}

// fieldManager names check's writes in the cluster's managedFields.
const fieldManager = "runner-check"

// run is one Run's state.
type run struct {
	opts     Options
	cluster  *memcluster.Cluster
	h        *offline.Harness
	rec      recorder
	report   *Report
	present  map[objectKey]bool     // created before the scripts loaded, or by a fresh cluster
	created  map[objectKey]Document // created by a document
	declared map[string]Document    // the input's Namespace documents, by name
	seq      int                    // the last Object.seq or Problem.seq given
}

// objectKey names an object in the cluster.
type objectKey struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

// Run checks docs, in order, against the admission scripts of opts.ScriptsDir (see the
// package's doc). Problems of the input or the scripts are in the report; Run fails only when
// the engine cannot run (the scripts folder cannot be read, the engine stays busy).
func Run(ctx context.Context, docs []Document, opts Options) (*Report, error) {
	opts.Mode = cmp.Or(opts.Mode, ModeEnforce)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	clock := clocktesting.NewFakeClock(opts.Now)
	cluster, err := memcluster.New(memcluster.Options{Clock: clock})
	if err != nil {
		return nil, fmt.Errorf("check manifests: %w", err)
	}
	r := &run{opts: opts, cluster: cluster, report: &Report{Mode: opts.Mode, Files: countFiles(docs)},
		present: map[objectKey]bool{}, created: map[objectKey]Document{}, declared: map[string]Document{}}
	if len(docs) == 0 {
		// An empty pipe (kustomize failed, and the shell does not say) must not pass.
		r.report.Problems = append(r.report.Problems, Problem{Message: "no manifests in the input: the files and stdin hold no document"})
		return r.report, nil
	}
	r.prepare(docs)
	loaded, err := r.start(ctx, clock)
	if err != nil || !loaded {
		for _, d := range docs {
			if d.Err != nil { // what can be told without the scripts
				r.problem(d, d.Err.Error())
			}
		}
		return r.report, err
	}
	defer r.h.Close()
	for _, d := range docs {
		if err := r.check(ctx, d); err != nil {
			return r.report, err
		}
	}
	return r.report, nil
}

func countFiles(docs []Document) int {
	seen := map[string]bool{}
	for _, d := range docs {
		seen[d.File] = true
	}
	return len(seen)
}

// start builds the engine on the cluster and loads the folder's admission scripts; loaded
// is false when a script is a problem (nothing is checked then: a missing policy would pass
// what it should deny).
func (r *run) start(ctx context.Context, clock *clocktesting.FakeClock) (loaded bool, err error) {
	sources, problems, err := admissionScripts(ctx, r.opts.ScriptsDir, r.opts.Only)
	if err != nil || len(problems) > 0 {
		r.report.Problems = append(r.report.Problems, problems...)
		return false, err
	}
	r.h, err = offline.New(offline.Config{ScriptsDir: r.opts.ScriptsDir, Cluster: r.cluster, Clock: clock,
		Resources: r.opts.Resources, DryRun: true, FieldManager: fieldManager, Logger: r.opts.Logger,
		QuietTimeout: r.opts.QuietTimeout, OnAdmission: r.rec.observe})
	if err != nil {
		return false, fmt.Errorf("check manifests: %w", err)
	}
	for _, src := range sources {
		if err := r.h.Load(ctx, src.Name, src.Content); err != nil {
			r.report.Problems = append(r.report.Problems, Problem{Script: src.Name, Message: "not loaded: " + err.Error()})
			continue
		}
		r.report.Scripts = append(r.report.Scripts, src.Name)
	}
	if len(r.report.Problems) > 0 {
		r.h.Close()
		return false, nil
	}
	// The handlers' initial adds (the CRDs and namespaces created beforehand) end before the
	// first document: none of their writes can be taken for the document's (recorder).
	if _, err := r.h.Settle(ctx, 0); err != nil {
		r.h.Close()
		return false, fmt.Errorf("check manifests: %w", err)
	}
	return true, nil
}

// check creates one document's object through the scripts' admission, and records what
// they decided, or the document's problem.
func (r *run) check(ctx context.Context, d Document) error {
	if d.Err != nil {
		r.problem(d, d.Err.Error())
		return nil
	}
	obj := d.Object.DeepCopy()
	key, ok := r.place(d, obj)
	if !ok {
		return nil
	}
	if prev, dup := r.created[key]; dup {
		r.problem(d, fmt.Sprintf("duplicate: %s %s is also in %s", obj.GetKind(), objectName(key), prev.Where()))
		return nil
	}
	if r.present[key] {
		return r.admitOnly(ctx, d, key, obj)
	}
	return r.create(ctx, d, key, obj)
}

// place finds obj's resource and sets its namespace as kubectl would ("default" for a
// namespaced object that names none, none for a cluster-scoped one).
func (r *run) place(d Document, obj *unstructured.Unstructured) (objectKey, bool) {
	if _, err := schema.ParseGroupVersion(obj.GetAPIVersion()); err != nil {
		r.problem(d, fmt.Sprintf("invalid apiVersion %q: %v", obj.GetAPIVersion(), err))
		return objectKey{}, false
	}
	res, err := r.cluster.ResourceFor(obj.GetAPIVersion(), obj.GetKind())
	if err != nil {
		r.problem(d, unknownResource(r.cluster.Discovery(), obj.GetAPIVersion(), obj.GetKind()))
		return objectKey{}, false
	}
	ns := ""
	if res.Namespaced {
		ns = cmp.Or(obj.GetNamespace(), "default")
	}
	obj.SetNamespace(ns)
	return objectKey{gvr: res.GVR, namespace: ns, name: obj.GetName()}, true
}

// create writes obj to the cluster as a CREATE, the scripts' webhooks answering it, and
// settles so that their caches hold it before the next document.
func (r *run) create(ctx context.Context, d Document, key objectKey, obj *unstructured.Unstructured) error {
	r.rec.start(key.gvr)
	created, err := r.cluster.Create(key.gvr, key.namespace, obj, memcluster.WriteOptions{FieldManager: fieldManager})
	calls, denial := r.rec.stop()
	if err != nil && denial == nil {
		r.problem(d, r.createError(obj, key, err))
		return nil
	}
	o := r.object(d, obj, calls)
	o.Admitted = err == nil
	if err == nil {
		o.Name = created.GetName() // generateName's
		r.created[objectKey{gvr: key.gvr, namespace: key.namespace, name: created.GetName()}] = d
		if _, err := r.h.Settle(ctx, 0); err != nil {
			return fmt.Errorf("check %s: %w", d.Where(), err)
		}
	}
	r.addObject(o)
	return nil
}

// admitOnly asks the webhooks about a CREATE of obj without storing it: the cluster holds
// it already (a CRD or namespace created before the scripts loaded).
func (r *run) admitOnly(ctx context.Context, d Document, key objectKey, obj *unstructured.Unstructured) error {
	res, err := r.h.Admit(ctx, offline.AdmissionRequest{Operation: "CREATE", Resource: key.gvr, Namespace: key.namespace,
		Name: key.name, Object: obj.Object})
	if err != nil {
		return fmt.Errorf("check %s: %w", d.Where(), err)
	}
	o := r.object(d, obj, res.Calls)
	o.Admitted = res.Err == nil
	r.created[key] = d
	r.addObject(o)
	return nil
}

// createError words a create the cluster refused for another reason than a webhook's.
func (r *run) createError(obj *unstructured.Unstructured, key objectKey, err error) string {
	if ns, ok := r.declared[key.namespace]; ok && apierrors.IsNotFound(err) && key.namespace != "" {
		return fmt.Sprintf("namespace %s does not exist yet: it is created by %s, later in the input; put the Namespace first", key.namespace, ns.Where())
	}
	return fmt.Sprintf("create %s %s: %v", obj.GetKind(), objectName(key), err)
}

func objectName(key objectKey) string {
	if key.namespace == "" {
		return key.name
	}
	return key.namespace + "/" + key.name
}

func (r *run) object(d Document, obj *unstructured.Unstructured, calls []offline.AdmissionCall) Object {
	o := Object{File: d.File, Document: d.Index, Item: d.Item, APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(),
		Namespace: obj.GetNamespace(), Name: cmp.Or(obj.GetName(), obj.GetGenerateName()), Results: []Result{}}
	for _, c := range calls {
		o.Results = append(o.Results, resultOf(c))
	}
	return o
}

func (r *run) addObject(o Object) {
	r.seq++
	o.seq = r.seq
	r.report.Objects = append(r.report.Objects, o)
}

func (r *run) problem(d Document, msg string) {
	r.seq++
	r.report.Problems = append(r.report.Problems, Problem{File: d.File, Document: d.Index, Item: d.Item, Message: msg, seq: r.seq})
}
