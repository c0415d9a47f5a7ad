package audit

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// BenchmarkWriterApplies writes 48 reports of 157 results each (3 scripts, 16 namespaces), all
// changed, to a real kube-apiserver, one at a time and DefaultParallel at a time, alternating
// over rounds: the time of a publish and its ratio.
//
//	go test -run '^$' -bench BenchmarkWriterApplies -benchtime 1x ./engine/internal/audit/
func BenchmarkWriterApplies(b *testing.B) {
	cp, err := controlplane.Start(b.Context(), controlplane.Options{})
	if err != nil {
		b.Fatalf("start a control plane (bin/kube-apiserver and bin/etcd, see DESIGN.md): %v", err)
	}
	b.Cleanup(func() { _ = cp.Stop() })
	dyn := dynamic.NewForConfigOrDie(cp.Config)
	installCRDs(b, dyn)
	const namespaces = 16
	for i := range namespaces {
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": fmt.Sprint("ns-", i)}}}
		if _, err := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(b.Context(), ns, metav1.CreateOptions{}); err != nil {
			b.Fatalf("create namespace: %v", err)
		}
	}
	elapsed := map[int]time.Duration{}
	for b.Loop() {
		for round := range 6 {
			parallel := []int{1, DefaultParallel}[round%2]
			s := NewResults(nil)
			fill(s, []string{"a.js", "b.js", "c.js"}, namespaces, 157, Outcomes[round%2])
			w := NewWriter(WriterConfig{Client: dyn, Results: s, Window: time.Hour, Parallel: parallel,
				Owns: func(string) bool { return true }, Logger: slog.New(slog.DiscardHandler)})
			cpu := procCPU(b, cp.APIServerPID()) + procCPU(b, cp.EtcdPID())
			start := time.Now()
			if err := w.publish(b.Context()); err != nil {
				b.Fatalf("publish: %v", err)
			}
			elapsed[parallel] += time.Since(start)
			if w.Writes() != 3*namespaces {
				b.Fatalf("round %d: %d writes, want %d", round, w.Writes(), 3*namespaces)
			}
			cpu = procCPU(b, cp.APIServerPID()) + procCPU(b, cp.EtcdPID()) - cpu
			b.Logf("round %d, %d at a time: %s; kube-apiserver and etcd CPU %s (%.0f ms a write)",
				round, parallel, time.Since(start), cpu, float64(cpu.Milliseconds())/float64(3*namespaces))
		}
	}
	b.ReportMetric(float64(elapsed[1].Milliseconds())/3, "ms-one-at-a-time")
	b.ReportMetric(float64(elapsed[DefaultParallel].Milliseconds())/3, "ms-parallel")
	b.ReportMetric(float64(elapsed[1])/float64(elapsed[DefaultParallel]), "ratio")
}

func installCRDs(b *testing.B, dyn dynamic.Interface) {
	data, err := os.ReadFile("../../../deploy/crds/openreports.yaml")
	if err != nil {
		b.Fatal(err)
	}
	crd := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	for _, doc := range strings.Split(string(data), "\n---\n")[1:] {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			b.Fatalf("parse CRD: %v", err)
		}
		if _, err := dyn.Resource(crd).Create(b.Context(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			b.Fatalf("install CRD: %v", err)
		}
	}
	for end := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if _, err := dyn.Resource(ReportGVR).Namespace("default").List(b.Context(), metav1.ListOptions{}); err == nil {
			return
		} else if time.Now().After(end) {
			b.Fatalf("reports not served: %v", err)
		}
	}
}

// procCPU is process pid's user and system CPU time (/proc/PID/stat, 100 ticks a second).
func procCPU(b *testing.B, pid int) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("read the CPU time of %d: %v", pid, err)
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	var ut, st int64
	if _, err := fmt.Sscan(f[11], &ut); err != nil {
		b.Fatal(err)
	}
	if _, err := fmt.Sscan(f[12], &st); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ut+st) * 10 * time.Millisecond
}
