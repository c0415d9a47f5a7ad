package admission

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/scripting"
)

// Registration: the runner owns one ValidatingWebhookConfiguration and one
// MutatingWebhookConfiguration, both named Registrar's Name, with one webhook entry per
// group of scripts that would have identical entries (group.go), derived from the scripts
// serving admission like any controller's output.

// Entry is what one script's webhook entries are derived from.
type Entry struct {
	Script           string
	Validate, Mutate bool
	Spec             scripting.AdmissionSpec
	Rules            []Rule
	// Namespaces are the namespaces the script watches; nil when it watches all of them.
	Namespaces []string
	// LabelSelector is the watches' label selector when they all share one, else "".
	LabelSelector string
}

// Rule is one watched resource: a webhook rule.
type Rule struct {
	Group, Version, Resource string
	Namespaced               bool
}

// Target is where the API server calls: a URL (the local control plane, tests) or a Service.
type Target struct {
	URL                       string // https://127.0.0.1:9443, without a path
	ServiceNamespace, Service string
	ServicePort               int32 // 0 is 443
}

// managedBy labels the configurations the runner owns.
const managedBy = "jsinformer"

// Registrar keeps the two webhook configurations in step with Entries. Run owns its loop
// goroutine (the caller's); Changed may be called from any goroutine.
type Registrar struct {
	Client kubernetes.Interface
	Name   string // both configurations' name
	Target Target
	// CABundle returns the PEM CA certificates the API server verifies the server with: the
	// entries carry them merged with the CAs already stored (cabundle.go).
	CABundle func() []byte
	// Registered, when set, is told after each successful reconcile the bundle that the
	// configurations now carry (servingGate waits for it before serving a new CA).
	Registered func(bundle []byte)
	// CAGrace is how long a replaced CA stays in the entries; zero means DefaultCAGrace.
	CAGrace time.Duration
	Entries func() []Entry
	// Exclude are namespaces no webhook ever matches, besides AlwaysExcluded: the runner's
	// own, so that it cannot lock itself out.
	Exclude []string
	Logger  *slog.Logger
	// Resync is how often the configurations are checked without a change; zero means a minute.
	Resync time.Duration

	changed chan struct{}
	// keptForeign: the last Reconcile kept another replica's URL (registershare.go), so Run
	// checks again within AnswerCheck. Run's goroutine (Reconcile's caller) only.
	keptForeign bool
	// caDrop: when a CA is next due to leave the caBundle (mergeCA), for Run to reconcile
	// then. Run's goroutine only.
	caDrop time.Time
	// refused are the entries the last Reconcile left out, "kind name (scripts)" with why:
	// logged when they change. Run's goroutine only.
	refused map[string]string
}

// Changed asks Run for a reconcile; it never blocks (before Init, it does nothing).
func (r *Registrar) Changed() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// Init prepares r for Changed and Run; call it once before sharing r.
func (r *Registrar) Init() {
	r.changed = make(chan struct{}, 1)
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	if r.Resync <= 0 {
		r.Resync = time.Minute
	}
}

// Run reconciles at once, on every Changed, every Resync, and a second after a failure, until
// ctx ends. It leaves the configurations in place when it returns: while no runner answers,
// each script's failurePolicy decides (docs/admission.md).
func (r *Registrar) Run(ctx context.Context) error {
	retry := time.NewTimer(0)
	defer retry.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.changed:
		case <-retry.C:
		}
		next := r.Resync
		if err := r.Reconcile(ctx); err != nil {
			r.Logger.Warn("webhook configurations not reconciled; retrying", "error", err.Error())
			next = time.Second
		} else if r.keptForeign {
			next = min(next, AnswerCheck)
		}
		if !r.caDrop.IsZero() {
			next = max(min(next, time.Until(r.caDrop)+time.Second), 0)
		}
		retry.Reset(next)
	}
}

// Reconcile makes the configurations match the entries now: created, updated or, with no
// entry of their kind, deleted. An entry the API server would refuse (checkHook), or does
// refuse (withoutRefused), is left out and reported, so that it never keeps the others from
// being written. An entry keeps the URL
// another replica registered while a server answers there (registershare.go). Not for
// concurrent use: Run calls it.
func (r *Registrar) Reconcile(ctx context.Context) error {
	entries := r.Entries()
	ca := r.CABundle()
	share := &sharing{ours: r.Target.URL, ca: ca, now: time.Now(), answered: map[string]bool{}}
	defer func() { r.keptForeign = share.kept }()
	r.caDrop = time.Time{}
	refused := map[string]string{}
	var validating []admissionregv1.ValidatingWebhook
	for _, c := range r.checked(Groups(entries, "validate"), ca, refused) {
		validating = append(validating, c.validating())
	}
	var mutating []admissionregv1.MutatingWebhook
	for _, c := range r.checked(Groups(entries, "mutate"), ca, refused) {
		mutating = append(mutating, c.mutating())
	}
	defer r.report(refused)
	err := withoutRefused(validating, func(h admissionregv1.ValidatingWebhook) string { return "validate " + h.Name }, refused,
		func(hooks []admissionregv1.ValidatingWebhook) error { return r.applyValidating(ctx, hooks, share) })
	if err != nil {
		return err
	}
	err = withoutRefused(mutating, func(h admissionregv1.MutatingWebhook) string { return "mutate " + h.Name }, refused,
		func(hooks []admissionregv1.MutatingWebhook) error { return r.applyMutating(ctx, hooks, share) })
	if err != nil {
		return err
	}
	if r.Registered != nil {
		r.Registered(ca)
	}
	return nil
}

// checked are the entries of groups the API server accepts; each other one's reason is put in
// refused under its scripts' names.
func (r *Registrar) checked(groups []Group, ca []byte, refused map[string]string) []common {
	var out []common
	names := map[string]bool{}
	for _, g := range groups {
		c := r.common(g, ca)
		err := c.check()
		if err == nil && names[c.name] {
			err = fmt.Errorf("name %q: %w", c.name, errDuplicateName)
		}
		if err != nil {
			refused[g.Kind+" "+c.name+" ("+strings.Join(g.Scripts, ", ")+")"] = err.Error()
			continue
		}
		names[c.name] = true
		out = append(out, c)
	}
	return out
}

// report logs the entries left out, when they are not those of the last reconcile.
func (r *Registrar) report(refused map[string]string) {
	if maps.Equal(refused, r.refused) {
		return
	}
	r.refused = refused
	for _, key := range slices.Sorted(maps.Keys(refused)) {
		kind, entry, _ := strings.Cut(key, " ")
		r.Logger.Error("webhook entry not registered: the API server refuses it; the other entries are",
			"webhook", kind, "entry", entry, "error", refused[key])
	}
}

func (r *Registrar) meta(caAdded string) metav1.ObjectMeta {
	m := metav1.ObjectMeta{Name: r.Name, Labels: map[string]string{"app.kubernetes.io/managed-by": managedBy}}
	setCAAdded(&m, caAdded)
	return m
}

// setCAAdded sets (or, when empty, removes) the CAAddedAnnotation (cabundle.go).
func setCAAdded(m *metav1.ObjectMeta, caAdded string) {
	if caAdded == "" {
		delete(m.Annotations, CAAddedAnnotation)
		return
	}
	if m.Annotations == nil {
		m.Annotations = map[string]string{}
	}
	m.Annotations[CAAddedAnnotation] = caAdded
}

func (r *Registrar) applyValidating(ctx context.Context, hooks []admissionregv1.ValidatingWebhook, share *sharing) error {
	api := r.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	cur, err := api.Get(ctx, r.Name, metav1.GetOptions{})
	var stored map[string]*admissionregv1.WebhookClientConfig
	var storedAdded string
	if err == nil {
		stored, storedAdded = clientConfigs(cur.Webhooks, validatingConfig), cur.Annotations[CAAddedAnnotation]
		share.keep(ctx, clientConfigs(hooks, validatingConfig), stored)
	}
	caAdded := r.mergeCA(clientConfigs(hooks, validatingConfig), stored, storedAdded, share.ca, share.now)
	switch {
	case apierrors.IsNotFound(err) && len(hooks) == 0:
		return nil
	case apierrors.IsNotFound(err):
		_, err = api.Create(ctx, &admissionregv1.ValidatingWebhookConfiguration{ObjectMeta: r.meta(caAdded), Webhooks: hooks}, metav1.CreateOptions{})
	case err != nil:
	case len(hooks) == 0:
		err = api.Delete(ctx, r.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &cur.ResourceVersion}})
	case storedAdded != caAdded || !equality.Semantic.DeepEqual(defaultedValidating(hooks), cur.Webhooks):
		setCAAdded(&cur.ObjectMeta, caAdded)
		cur.Webhooks = hooks
		_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
	default:
		return nil
	}
	if err != nil {
		return fmt.Errorf("reconcile ValidatingWebhookConfiguration %s: %w", r.Name, err)
	}
	r.Logger.Info("webhook configuration reconciled", "kind", "ValidatingWebhookConfiguration", "name", r.Name, "webhooks", len(hooks))
	return nil
}

func (r *Registrar) applyMutating(ctx context.Context, hooks []admissionregv1.MutatingWebhook, share *sharing) error {
	api := r.Client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	cur, err := api.Get(ctx, r.Name, metav1.GetOptions{})
	var stored map[string]*admissionregv1.WebhookClientConfig
	var storedAdded string
	if err == nil {
		stored, storedAdded = clientConfigs(cur.Webhooks, mutatingConfig), cur.Annotations[CAAddedAnnotation]
		share.keep(ctx, clientConfigs(hooks, mutatingConfig), stored)
	}
	caAdded := r.mergeCA(clientConfigs(hooks, mutatingConfig), stored, storedAdded, share.ca, share.now)
	switch {
	case apierrors.IsNotFound(err) && len(hooks) == 0:
		return nil
	case apierrors.IsNotFound(err):
		_, err = api.Create(ctx, &admissionregv1.MutatingWebhookConfiguration{ObjectMeta: r.meta(caAdded), Webhooks: hooks}, metav1.CreateOptions{})
	case err != nil:
	case len(hooks) == 0:
		err = api.Delete(ctx, r.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &cur.ResourceVersion}})
	case storedAdded != caAdded || !equality.Semantic.DeepEqual(defaultedMutating(hooks), cur.Webhooks):
		setCAAdded(&cur.ObjectMeta, caAdded)
		cur.Webhooks = hooks
		_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
	default:
		return nil
	}
	if err != nil {
		return fmt.Errorf("reconcile MutatingWebhookConfiguration %s: %w", r.Name, err)
	}
	r.Logger.Info("webhook configuration reconciled", "kind", "MutatingWebhookConfiguration", "name", r.Name, "webhooks", len(hooks))
	return nil
}

// defaultedValidating is hooks as the API server stores them: what it defaults set, so that
// an unchanged configuration compares equal and is not written again.
func defaultedValidating(hooks []admissionregv1.ValidatingWebhook) []admissionregv1.ValidatingWebhook {
	out := make([]admissionregv1.ValidatingWebhook, len(hooks))
	for i, h := range hooks {
		h.ObjectSelector = orEmpty(h.ObjectSelector)
		out[i] = h
	}
	return out
}

func defaultedMutating(hooks []admissionregv1.MutatingWebhook) []admissionregv1.MutatingWebhook {
	out := make([]admissionregv1.MutatingWebhook, len(hooks))
	never := admissionregv1.NeverReinvocationPolicy
	for i, h := range hooks {
		h.ObjectSelector = orEmpty(h.ObjectSelector)
		if h.ReinvocationPolicy == nil {
			h.ReinvocationPolicy = &never
		}
		out[i] = h
	}
	return out
}

func orEmpty(s *metav1.LabelSelector) *metav1.LabelSelector {
	if s == nil {
		return &metav1.LabelSelector{}
	}
	return s
}

// The parts of one script's entry, shared by both kinds.
type common struct {
	name          string
	client        admissionregv1.WebhookClientConfig
	rules         []admissionregv1.RuleWithOperations
	failurePolicy admissionregv1.FailurePolicyType
	matchPolicy   admissionregv1.MatchPolicyType
	sideEffects   admissionregv1.SideEffectClass
	timeout       int32
	nsSelector    *metav1.LabelSelector
	objSelector   *metav1.LabelSelector
}

func (r *Registrar) common(g Group, ca []byte) common {
	e := g.Entry
	c := common{
		name: g.Name(), client: r.clientConfig(g.Path(), ca), rules: rules(e),
		failurePolicy: admissionregv1.FailurePolicyType(e.Spec.FailurePolicy), matchPolicy: admissionregv1.Equivalent,
		sideEffects: admissionregv1.SideEffectClassNone, timeout: int32(e.Spec.TimeoutSeconds),
		nsSelector: r.namespaceSelector(e),
	}
	if e.LabelSelector != "" {
		if sel, err := metav1.ParseToLabelSelector(e.LabelSelector); err == nil {
			c.objSelector = sel
		}
	}
	return c
}

func (c common) validating() admissionregv1.ValidatingWebhook {
	return admissionregv1.ValidatingWebhook{Name: c.name, ClientConfig: c.client, Rules: c.rules, FailurePolicy: &c.failurePolicy,
		MatchPolicy: &c.matchPolicy, SideEffects: &c.sideEffects, TimeoutSeconds: &c.timeout, NamespaceSelector: c.nsSelector,
		ObjectSelector: c.objSelector, AdmissionReviewVersions: []string{"v1"}}
}

func (c common) mutating() admissionregv1.MutatingWebhook {
	return admissionregv1.MutatingWebhook{Name: c.name, ClientConfig: c.client, Rules: c.rules, FailurePolicy: &c.failurePolicy,
		MatchPolicy: &c.matchPolicy, SideEffects: &c.sideEffects, TimeoutSeconds: &c.timeout, NamespaceSelector: c.nsSelector,
		ObjectSelector: c.objSelector, AdmissionReviewVersions: []string{"v1"}}
}

// Path is the server's path for a script's webhook of kind ("validate", "mutate"): the
// kind's prefix and the script's encoded name (EncodeName), valid in a Service's path.
func Path(kind, script string) string {
	prefix := ValidatePrefix
	if kind == "mutate" {
		prefix = MutatePrefix
	}
	return prefix + EncodeName(script)
}

func (r *Registrar) clientConfig(path string, ca []byte) admissionregv1.WebhookClientConfig {
	if r.Target.URL != "" {
		u := strings.TrimSuffix(r.Target.URL, "/") + path
		return admissionregv1.WebhookClientConfig{URL: &u, CABundle: ca}
	}
	port := r.Target.ServicePort
	if port == 0 {
		port = 443
	}
	return admissionregv1.WebhookClientConfig{CABundle: ca, Service: &admissionregv1.ServiceReference{
		Namespace: r.Target.ServiceNamespace, Name: r.Target.Service, Path: &path, Port: &port}}
}

func rules(e Entry) []admissionregv1.RuleWithOperations {
	ops := make([]admissionregv1.OperationType, len(e.Spec.Operations))
	for i, op := range e.Spec.Operations {
		ops[i] = admissionregv1.OperationType(op)
	}
	out := make([]admissionregv1.RuleWithOperations, 0, len(e.Rules))
	for _, rule := range e.Rules {
		scope := admissionregv1.ClusterScope
		if rule.Namespaced {
			scope = admissionregv1.NamespacedScope
		}
		out = append(out, admissionregv1.RuleWithOperations{Operations: ops, Rule: admissionregv1.Rule{
			APIGroups: []string{rule.Group}, APIVersions: []string{rule.Version}, Resources: resources(rule.Resource, e.Spec.Subresources), Scope: &scope}})
	}
	return out
}

// resources are a rule's resources: the main resource, then its subresources the script
// covers ("deployments/scale").
func resources(resource string, subresources []string) []string {
	out := []string{resource}
	for _, sub := range subresources {
		out = append(out, resource+"/"+sub)
	}
	return out
}

// AlwaysExcluded are the namespaces no webhook entry ever matches, whatever Registrar.Exclude
// or a script's selection says: scripting.ProtectedNamespaces (kube-system, kube-node-lease).
// Do not modify.
var AlwaysExcluded = scripting.ProtectedNamespaces

// namespaceSelector never matches AlwaysExcluded, the excluded namespaces nor the script's
// admission.excludeNamespaces; for a script watching some namespaces only, it matches just
// those; and it requires the script's admission.namespaceSelector (its matchLabels and
// matchExpressions, ANDed with the rest).
func (r *Registrar) namespaceSelector(e Entry) *metav1.LabelSelector {
	const nameLabel = scripting.NamespaceNameLabel
	exclude := slices.Concat(AlwaysExcluded, r.Exclude, e.Spec.ExcludeNamespaces)
	sel := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: nameLabel, Operator: metav1.LabelSelectorOpNotIn, Values: dedupe(exclude)}}}
	if len(e.Namespaces) > 0 {
		sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: nameLabel, Operator: metav1.LabelSelectorOpIn, Values: dedupe(e.Namespaces)})
	}
	if own := e.Spec.NamespaceSelector; own != nil {
		sel.MatchLabels = maps.Clone(own.MatchLabels)
		for _, req := range own.MatchExpressions {
			req.Values = slices.Clone(req.Values)
			sel.MatchExpressions = append(sel.MatchExpressions, req)
		}
	}
	return sel
}

// dedupe is a selector's set of values, sorted: scripts watching the same namespaces in
// another order have identical webhooks, and so share an entry (Groups).
func dedupe(list []string) []string {
	out := slices.Sorted(slices.Values(list))
	return slices.DeleteFunc(slices.Compact(out), func(s string) bool { return s == "" })
}

var notSlug = regexp.MustCompile(`[^a-z0-9-]+`)

// WebhookName is the entry name of a script's webhook of kind: a fully qualified name from
// the script's name, with a hash so that names differing only in punctuation stay apart.
func WebhookName(script, kind string) string {
	sum := sha256.Sum256([]byte(script))
	return fmt.Sprintf("%s.%s.jsinformer.io", slugged(script, hex.EncodeToString(sum[:])[:8]), kind)
}

// slugged is rest after script's slug and a dash, or rest alone when the slug is empty (a
// name without a letter or digit): a DNS label either way, since rest starts with one.
func slugged(script, rest string) string {
	if s := slug(script); s != "" {
		return s + "-" + rest
	}
	return rest
}

// slug is script's name as a DNS label's start: lowercase letters, digits and dashes, at most
// 40, starting and ending with a letter or digit; "" when it has none.
func slug(script string) string {
	s := strings.Trim(notSlug.ReplaceAllString(strings.ToLower(script), "-"), "-")
	if len(s) > 40 {
		s = strings.Trim(s[:40], "-")
	}
	return s
}
