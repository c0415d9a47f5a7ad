package engine

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// BenchmarkFanoutNotify: one update notification handed to a subscriber's queue (the
// fanout's hot path, once per notification per subscriber), drained every 256.
func BenchmarkFanoutNotify(b *testing.B) {
	objs := make([]*unstructured.Unstructured, 256)
	for i := range objs {
		objs[i] = benchObject(i)
	}
	a := benchSubscription()
	h := benchHandler(a)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.OnUpdate(objs[i%256], objs[i%256])
		if i%256 == 255 {
			for a.Queue.Len() > 0 {
				a.Queue.Pop(nil)
			}
		}
	}
}

// BenchmarkFanoutJoin: a version joining a synced informer of 20,000 objects is given them
// from the fanout's record in one burst (a reload's subscribe), drained, and leaves.
func BenchmarkFanoutJoin(b *testing.B) {
	const objects = 20000
	fi := newBenchInformer(b, objects)
	var fans benchRegistry
	stay := benchSubscription()
	stay.Handle = fi
	if err := benchSubscribe(&fans, stay); err != nil {
		b.Fatal(err)
	}
	<-stay.Synced
	b.ReportAllocs()
	for b.Loop() {
		s := benchSubscription()
		s.Handle = fi
		if err := benchSubscribe(&fans, s); err != nil {
			b.Fatal(err)
		}
		n := 0
		for s.Queue.Len() > 0 {
			s.Queue.Pop(nil)
			n++
		}
		if n != objects {
			b.Fatalf("joined with %d objects, want %d", n, objects)
		}
		if err := benchUnsubscribe(&fans, s); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	_ = benchUnsubscribe(&fans, stay)
}
