package store

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// shard is one ConfigMap of a script's store: the writes queued for it and the last document
// read from it.
type shard struct {
	sc   *Scope
	idx  int
	name string

	mu       sync.Mutex
	pending  []*op // queued writes, in call order
	flushing bool  // a flush goroutine runs for this shard and will take pending
	// lastFlush is when the shard's last update ended: a write within a window of it waits.
	lastFlush time.Time
	// seenRV and seen are the last document decoded, reused while the resourceVersion is the
	// same; never modified (writes decode their own copy).
	seenRV string
	seen   *document
}

// read gets the shard's ConfigMap from the API server and returns its document.
func (sh *shard) read(ctx context.Context) (*document, error) {
	cm, err := sh.get(ctx)
	if err != nil {
		return nil, err
	}
	return sh.remember(cm)
}

// get returns the ConfigMap, nil when it does not exist yet.
func (sh *shard) get(ctx context.Context) (*corev1.ConfigMap, error) {
	cm, err := sh.sc.st.client.ConfigMaps(sh.sc.st.opts.Namespace).Get(ctx, sh.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read store configmap %s: %w", sh.name, err)
	}
	return cm, nil
}

// remember decodes cm unless it is the version last decoded, and records its usage.
func (sh *shard) remember(cm *corev1.ConfigMap) (*document, error) {
	rv := ""
	if cm != nil {
		rv = cm.ResourceVersion
	}
	sh.mu.Lock()
	if sh.seen != nil && rv == sh.seenRV {
		doc := sh.seen
		sh.mu.Unlock()
		return doc, nil
	}
	sh.mu.Unlock()
	doc, err := decodeDocument(cm)
	if err != nil {
		return nil, err
	}
	sh.mu.Lock()
	sh.seenRV, sh.seen = rv, doc
	sh.mu.Unlock()
	sh.sc.setUsage(sh.idx, doc.usage(sh.sc.st.opts.Now()))
	return doc, nil
}

// write creates or updates the ConfigMap with doc; an update carries cm's resourceVersion, so
// it fails with Conflict when another writer came between.
func (sh *shard) write(ctx context.Context, cm *corev1.ConfigMap, doc *document) (*corev1.ConfigMap, error) {
	data, err := encodeDocument(sh.name, doc)
	if err != nil {
		return nil, err
	}
	cms := sh.sc.st.client.ConfigMaps(sh.sc.st.opts.Namespace)
	if cm == nil {
		return cms.Create(ctx, sh.newConfigMap(data), metav1.CreateOptions{})
	}
	cm = cm.DeepCopy()
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[DataKey] = data
	return cms.Update(ctx, cm, metav1.UpdateOptions{})
}

func (sh *shard) newConfigMap(data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: sh.name, Namespace: sh.sc.st.opts.Namespace,
			Labels:      map[string]string{LabelScript: sh.sc.id, labelManagedBy: "jsinformer"},
			Annotations: map[string]string{sh.sc.annotation(): sh.sc.script},
		},
		Data: map[string]string{DataKey: data},
	}
}
