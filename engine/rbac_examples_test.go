package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/engine"
	"github.com/jsinformer/jsinformer/permissions"
	"github.com/jsinformer/jsinformer/scripting"
)

// asGenerated runs the engine as a ServiceAccount bound to exactly the RBAC `runner rbac`
// generates for its scripts folder: the example tests that use it prove the generated rules
// suffice for the example's whole scenario (checkGranted then finds no Forbidden).
func asGenerated(t *testing.T) func(*engine.Config) {
	return func(c *engine.Config) {
		t.Helper()
		opts := permissions.Options{Dir: c.ScriptsDir, Namespace: c.Namespace}
		for _, r := range c.Resources {
			opts.Defaults = append(opts.Defaults, scripting.WatchSpec{Resource: r})
		}
		rep, err := permissions.Compute(t.Context(), opts)
		if err != nil {
			t.Fatalf("compute permissions: %v", err)
		}
		if len(rep.Dynamic) > 0 {
			t.Fatalf("calls the generated RBAC cannot cover: %v", rep.Dynamic)
		}
		admin := kubernetes.NewForConfigOrDie(c.RESTConfig)
		id := permissions.Identity{Namespace: uniqueName("rbac-sa"), Name: uniqueName("gen")}
		createRBAC(t, admin, permissions.Objects(permissions.Roles(rep.Needs), id), id.Namespace)
		tr, err := admin.CoreV1().ServiceAccounts(id.Namespace).CreateToken(t.Context(), id.Name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sa := &rest.Config{Host: c.RESTConfig.Host, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
		waitAllowed(t, kubernetes.NewForConfigOrDie(sa), rep.Needs[0])
		c.RESTConfig = sa
	}
}

// createRBAC creates the ServiceAccount's namespace and the generated objects.
func createRBAC(t *testing.T, admin kubernetes.Interface, objs []any, ns string) {
	t.Helper()
	ctx := t.Context()
	if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rbac := admin.RbacV1()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *corev1.ServiceAccount:
			_, err = admin.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.ClusterRole:
			_, err = rbac.ClusterRoles().Create(ctx, o, metav1.CreateOptions{})
			t.Cleanup(func() { _ = rbac.ClusterRoles().Delete(context.Background(), o.Name, metav1.DeleteOptions{}) })
		case *rbacv1.ClusterRoleBinding:
			_, err = rbac.ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
			t.Cleanup(func() { _ = rbac.ClusterRoleBindings().Delete(context.Background(), o.Name, metav1.DeleteOptions{}) })
		case *rbacv1.Role:
			_, err = rbac.Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			_, err = rbac.RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			t.Fatalf("create %T: %v", o, err)
		}
	}
}

// waitAllowed waits for new bindings to reach the authorizer's cache.
func waitAllowed(t *testing.T, sa kubernetes.Interface, n permissions.Need) {
	t.Helper()
	resource, sub, _ := strings.Cut(n.Resource, "/")
	deadline := time.Now().Add(10 * time.Second)
	for {
		review := &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{
			ResourceAttributes: &authorizationv1.ResourceAttributes{Verb: n.Verb, Group: n.Group, Resource: resource, Subresource: sub, Namespace: n.Namespace}}}
		got, err := sa.AuthorizationV1().SelfSubjectAccessReviews().Create(t.Context(), review, metav1.CreateOptions{})
		if err == nil && got.Status.Allowed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the generated RBAC does not allow %s after 10s (%v)", n, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkGranted fails when the runner lacked a permission or the API server refused a call.
func (r *runner) checkGranted(t *testing.T) {
	t.Helper()
	missing, refused := r.engine.Permissions()
	if len(missing) > 0 || len(refused) > 0 {
		t.Errorf("with the generated RBAC: missing %v, refused %v", missing, refused)
	}
	// A write into a namespace being deleted (another test's, on the shared control plane) is
	// answered 403 too, whatever the RBAC: a script whose cache has not yet seen the deletion
	// may try one, and that is no missing permission.
	forbidden := r.log.find(func(rec record) bool { return strings.Contains(strings.ToLower(rec.String()), "forbidden") })
	for _, rec := range forbidden {
		if !r.terminating(t, rec.attrs["namespace"]) {
			t.Errorf("a Forbidden with the generated RBAC:\n%s", r.log.dump())
			return
		}
	}
}

// terminating reports whether the namespace ns is being deleted.
func (r *runner) terminating(t *testing.T, ns string) bool {
	t.Helper()
	if ns == "" {
		return false
	}
	obj, err := r.dyn.Resource(namespacesGVR).Get(context.Background(), ns, metav1.GetOptions{})
	return err == nil && obj.GetDeletionTimestamp() != nil
}
