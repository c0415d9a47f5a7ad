// The Node.js peer of BenchmarkInitialSync: an @kubernetes/client-node informer on the seeded
// Deployments, with a handler reading the same two fields as the runner's script.
// Usage: node --expose-gc informer.mjs KUBECONFIG [NAMESPACE]
// Prints "all-handled" as soon as the initial list is in the cache and every add was handled
// (the end of a whole-process measurement), then one JSON line:
// {"syncMs": wall time from start(), "heapMB": V8 heapUsed after GC above the baseline,
//  "externalMB": the same for memory outside the V8 heap, "adds": adds handled}.
import * as k8s from '@kubernetes/client-node';
import { readFileSync } from 'node:fs';

const [kubeconfig, namespace = 'bench'] = process.argv.slice(2);
if (!kubeconfig || typeof global.gc !== 'function') {
  console.error('usage: node --expose-gc informer.mjs KUBECONFIG [NAMESPACE]');
  process.exit(2);
}

const mb = (bytes) => bytes / (1 << 20);

function live() {
  global.gc();
  global.gc();
  return process.memoryUsage();
}

const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const apps = kc.makeApiClient(k8s.AppsV1Api);
const informer = k8s.makeInformer(
  kc,
  `/apis/apps/v1/namespaces/${namespace}/deployments`,
  () => apps.listNamespacedDeployment({ namespace }),
);

let adds = 0;
let n = 0;
let x = '';
informer.on('add', (d) => {
  n += d.spec.replicas;
  x = d.metadata.name;
  adds++;
});
let stopping = false;
informer.on('error', (err) => {
  if (stopping) return; // stop() aborts the watch, which reports an AbortError
  console.error('informer error:', err);
  process.exit(1);
});

const base = live();
const start = performance.now();
// start() resolves after the list has been put in the cache, with every add handler called,
// and the watch has been opened.
await informer.start();
const syncMs = performance.now() - start;
console.log('all-handled'); // stdout is a pipe: written synchronously
const after = live();
console.log(JSON.stringify({
  syncMs,
  heapMB: mb(after.heapUsed - base.heapUsed),
  externalMB: mb(after.external - base.external),
  adds,
  check: n > 0 && x !== '',
}));
stopping = true;
await informer.stop();
// Its own peak RSS: a child's ru_maxrss includes its parent's (procSample.hwm in process_test.go).
const hwm = readFileSync('/proc/self/status', 'utf8').match(/VmHWM:\s+(\d+) kB/);
console.log(`own-peak-rss-kb ${hwm ? hwm[1] : 0}`);
process.exit(0);
