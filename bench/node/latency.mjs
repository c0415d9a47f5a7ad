// The Node.js peer of BenchmarkEventLatency: an @kubernetes/client-node informer on the
// ConfigMaps of NAMESPACE; each update carrying the annotation bench/t (the writer's send time,
// Unix nanoseconds) records the time from that write to this handler running. When the
// ConfigMap named "done" is updated, it prints one JSON line {"latenciesMs": [...]} and exits.
// Prints "ready" once the informer has listed and watches.
// Usage: node latency.mjs KUBECONFIG NAMESPACE
import * as k8s from '@kubernetes/client-node';

const [kubeconfig, namespace] = process.argv.slice(2);
if (!kubeconfig || !namespace) {
  console.error('usage: node latency.mjs KUBECONFIG NAMESPACE');
  process.exit(2);
}

const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/configmaps`,
  () => core.listNamespacedConfigMap({ namespace }));

const nowNs = () => (performance.timeOrigin + performance.now()) * 1e6;
const latenciesMs = [];
informer.on('update', (cm) => {
  const t = cm.metadata.annotations?.['bench/t'];
  if (t) latenciesMs.push((nowNs() - Number(t)) / 1e6);
  if (cm.metadata.name === 'done') {
    // A pipe is written asynchronously: exit only once the line is out.
    process.stdout.write(JSON.stringify({ latenciesMs }) + '\n', () => process.exit(0));
  }
});
informer.on('error', (err) => {
  console.error('informer error:', err);
  process.exit(1);
});
await informer.start();
console.log('ready');
