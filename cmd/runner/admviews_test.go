package main

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/jsinformer/jsinformer/inspection"
	"github.com/jsinformer/jsinformer/internal/browsertest"
	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/status"
)

// admPolicy validates and mutates the ConfigMaps of NS: data.bad is denied, every other
// object gets the label checked=yes.
const admPolicy = `export default {
  watch: { resource: "v1/configmaps", namespace: "NS" },
  validate(obj) {
    if (obj.data && obj.data.bad) return { allowed: false, message: "bad data in " + obj.metadata.name };
  },
  mutate(obj) {
    const out = util.clone(obj);
    out.metadata.labels = { ...(out.metadata.labels || {}), checked: "yes" };
    return out;
  },
  admission: { failurePolicy: "Fail", timeoutSeconds: 5 },
};`

// TestAdmissionDecisionsInViews: objects created through kube-apiserver, which calls the
// runner's webhooks, leave their admission decisions in runner explain (who asked, the
// script, the operation, the outcome, the message or the patch, the duration), runner tail
// streams them, and runner status lists the script's webhook entries.
func TestAdmissionDecisionsInViews(t *testing.T) {
	// Not parallel: runners in one process share klog's global logger.
	cp := controlplane.Require(t, env)
	client := kubernetes.NewForConfigOrDie(cp.Config)
	ns, name := "adm-views", "jsinformer-admviews"
	admissionNamespace(t, client, ns, name)
	scripts := t.TempDir()
	writeScript(t, scripts, "policy.js", strings.ReplaceAll(admPolicy, "NS", ns))
	hook, debugAddr, metricsAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	out, _ := startRunner(t, "--kubeconfig", cp.Kubeconfig, "--scripts", scripts, "--debug-addr", debugAddr,
		"--metrics-addr", metricsAddr, "--webhook-addr", hook, "--webhook-url", "https://"+hook, "--webhook-name", name)
	waitOutput(t, out, "msg=ready")
	d := &debugEnv{addr: debugAddr, ns: ns}

	tail := &syncBuffer{}
	stopTail := runInBackground(t, tail, "tail", "--script", "policy.js", "-o", "json", "--debug-addr", debugAddr)
	cms := client.CoreV1().ConfigMaps(ns)
	n := 0
	eventually(t, "the webhooks are registered and the tail streams", func() string {
		n++
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "good-" + strconv.Itoa(n)}}
		created, err := cms.Create(t.Context(), cm, metav1.CreateOptions{})
		if err != nil || created.Labels["checked"] != "yes" {
			return "not mutated yet"
		}
		if !strings.Contains(tail.String(), `"admission"`) {
			return "tail shows no admission record yet"
		}
		return ""
	})
	_, err := cms.Create(t.Context(), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Data: map[string]string{"bad": "1"}}, metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "bad data in bad") {
		t.Fatalf("create of a bad ConfigMap: %v, want denied", err)
	}

	x := d.explain(t, "bad")
	validate := admissionRecord(x.Records, "validate")
	if validate == nil {
		t.Fatalf("explain of the denied object shows no validate decision: %+v", x.Records)
	}
	a := validate.Admission
	if validate.Result != "denied" || a.Allowed || a.Code != 403 || a.Operation != "CREATE" || a.User == "" ||
		!strings.Contains(a.Message, "bad data in bad") || validate.Version == "" || validate.Resource != "v1/configmaps" {
		t.Errorf("the denial's record: %+v %+v", *validate, *a)
	}
	good := d.explain(t, "good-"+strconv.Itoa(n))
	if m := admissionRecord(good.Records, "mutate"); m == nil || m.Result != "allowed" || !strings.Contains(m.Admission.Patch, "checked") {
		t.Errorf("explain of a mutated object: %+v", good.Records)
	}
	text := d.must(t, "explain", "cm", ns+"/bad")
	for _, want := range []string{"admission CREATE", "validate", "denied 403  bad data in bad", "by " + a.User} {
		if !strings.Contains(text, want) {
			t.Errorf("runner explain lacks %q:\n%s", want, text)
		}
	}

	eventually(t, "tail streams the denial", func() string {
		for line := range strings.Lines(tail.String()) {
			var rec inspection.TraceRecord
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Admission != nil && rec.Object == ns+"/bad" && rec.Result == "denied" {
				return ""
			}
		}
		return "no denial in the tail:\n" + tail.String()
	})
	stopTail()

	// The documented admission series, which the dashboard and the alerts use, are served.
	for _, metric := range documentedMetrics(t) {
		if strings.HasPrefix(metric, "jsinformer_admission_") {
			waitHTTP(t, "http://"+metricsAddr+"/metrics", "\n"+metric+"{")
		}
	}
	waitHTTP(t, "http://"+metricsAddr+"/metrics", `jsinformer_admission_decisions_total{operation="CREATE",outcome="denied",script="policy.js",webhook="validate"} 1`)

	var st status.Status
	d.jsonOf(t, &st, "status")
	if len(st.Webhooks) != 2 {
		t.Fatalf("status lists webhooks %+v, want validate and mutate of policy.js", st.Webhooks)
	}
	for _, w := range st.Webhooks {
		if w.Script != "policy.js" || !strings.HasSuffix(w.Configuration, "WebhookConfiguration/"+name) || w.FailurePolicy != "Fail" ||
			w.Mode != "enforce" || len(w.Rules) != 1 || !strings.Contains(w.Rules[0], "v1/configmaps (Namespaced)") ||
			!strings.HasSuffix(w.Name, "."+w.Webhook+".jsinformer.io") {
			t.Errorf("webhook entry %+v", w)
		}
	}
	if text := d.must(t, "status"); !strings.Contains(text, "Admission webhooks:") || !strings.Contains(text, "ValidatingWebhookConfiguration/"+name) {
		t.Errorf("runner status lacks the webhook entries:\n%s", text)
	}

	// The web page's explain view shows the decision in the object's timeline.
	b := browsertest.New(t)
	b.Do(t, "open the explain view", chromedp.Navigate("http://"+debugAddr+"/explain/configmaps/"+ns+"/bad"))
	b.WaitJS(t, "the timeline shows the denial with who asked and the message", `(() => {
		const items = [...document.querySelectorAll("#timeline li.admission")];
		return items.some(li => li.textContent.includes("CREATE") && li.textContent.includes("validate denied") &&
			li.textContent.includes("by `+a.User+`") && li.textContent.includes("denied 403: bad data in bad"));
	})()`, 30*time.Second)
	b.Screenshot(t, "page-explain-admission")
	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("the page logged errors: %q", errs)
	}
}

// admissionRecord is the last admission record of webhook kind in recs.
func admissionRecord(recs []inspection.TraceRecord, kind string) *inspection.TraceRecord {
	var out *inspection.TraceRecord
	for i, r := range recs {
		if r.Admission != nil && r.Admission.Webhook == kind {
			out = &recs[i]
		}
	}
	return out
}

// runInBackground runs a runner subcommand until the returned func is called (also at cleanup).
func runInBackground(t *testing.T, out *syncBuffer, args ...string) func() {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		cmd := newCommand()
		cmd.SetOut(out)
		cmd.SetErr(out)
		cmd.SetArgs(args)
		done <- cmd.ExecuteContext(ctx)
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("runner %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	}
	t.Cleanup(stop)
	return stop
}

// deleteWebhookConfigs removes the configurations a test's runner left (they stay when it stops).
// admissionNamespace creates namespace ns for an admission test (a second -count reuses it)
// and removes, when the test ends, what a runner registered under --webhook-name name.
func admissionNamespace(t *testing.T, client kubernetes.Interface, ns, name string) {
	t.Helper()
	_, err := client.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteWebhookConfigs(client, name) })
}

func deleteWebhookConfigs(client kubernetes.Interface, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
	_ = client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, name, metav1.DeleteOptions{})
	_ = client.CoreV1().Secrets("default").Delete(ctx, name+"-tls", metav1.DeleteOptions{})
}
