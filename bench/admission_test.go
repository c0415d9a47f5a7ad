package bench

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/jsinformer/jsinformer/admission"
	"github.com/jsinformer/jsinformer/internal/controlplane"
)

// Admission through the API server: ConfigMaps are created at admissionRate a second in one
// namespace per contender, the API server calling the runner's webhooks (wired as cmd/runner
// wires them: the engine, the admission server with its metrics and trace, the registrar):
//
//	none      no webhook matches (the API server's own cost: the baseline)
//	validate  one script whose validate allows (returns undefined)
//	mutate    one script whose mutate adds a label (a JSON Patch)
//	ten       ten scripts, each a trivial validate, matching the same ConfigMaps: one shared
//	          webhook entry, the runner fanning each review out to the ten (admission.Groups)
//	busy      a trivial validate in a script whose reconcile runs 2 s per key, kept busy by
//	          the creates themselves
//	validateh2  validate's script alike, its entry calling a second listener of the same
//	          server that speaks HTTP/2 (--webhook-http2): the runner's default, HTTP/1.1
//	          only, against HTTP/2 in the same run
//
// Contenders alternate slice by slice ($JSINFORMER_ADMISSION_SECONDS per slice, default 10;
// $JSINFORMER_ADMISSION_ROUNDS rounds, default 3; the order rotated each round). Reported per contender: the client's create
// latency p50 and the p50 added over none; the runner's own time per request, from the
// request received by its handler to the answer handed to the connection, p50 and p99 (ten's
// requests each run the ten scripts), and the p99 of its part after the body was read whole
// with a 95 % interval (bootstrap over rounds: $JSINFORMER_ADMISSION_ROUNDS of 5 or more give
// one worth reading); the rate achieved; ten_requests_per_create, the webhook requests the
// API server sent per create of ten (1 with the shared entry, 10 with an entry per script).
// Each slice's ConfigMaps are deleted after it (the deletes are not admitted: the scripts
// match CREATE and UPDATE), so the runner's caches and etcd stay the size of one slice, as in
// a cluster whose object count is steady, instead of growing by ~3,000 objects a slice. Live
// heap and goroutines are read before and after all rounds.

const admissionRate = 300 // creates per second

var admissionContenders = []string{"none", "validate", "mutate", "ten", "busy", "validateh2"}

func admissionScripts() map[string]string {
	watch := func(ns string) string { return `watch: { resource: "v1/configmaps", namespace: "adm-` + ns + `" },` }
	scripts := map[string]string{
		"validate.js":   `export default { ` + watch("validate") + ` validate() {} };`,
		"validateh2.js": `export default { ` + watch("validateh2") + ` validate() {} };`,
		"mutate.js": `export default { ` + watch("mutate") + `
  mutate(obj) { const out = util.clone(obj); out.metadata.labels = { ...(out.metadata.labels || {}), checked: "yes" }; return out; } };`,
		"busy.js": `export default { ` + watch("busy") + ` validate() {},
  reconcile(key, ctx) {
    const [ns, name] = key.split("/");
    const until = Number(ctx.cache.get(ns, name)?.data?.until ?? 0);
    const end = Math.min(Date.now() + 2000, until);
    while (Date.now() < end) {}
  } };`,
	}
	for i := range 10 {
		scripts[fmt.Sprintf("ten-%d.js", i)] = `export default { ` + watch("ten") + ` validate() {} };`
	}
	return scripts
}

// handlerTimes records the runner's own time per request, by contender (the script's
// namespace, read from its name): from the handler called to the answer handed to the
// connection, the part of it after the request's body had been read whole (the handler is
// called on the headers; the rest of the body may still be on its way from the API server),
// and the script's share (Decision.Took: waiting for a free runtime and the call).
type handlerTimes struct {
	mu  sync.Mutex
	by  map[string]*contenderTimes
	srv http.Handler
}

// contenderTimes are one contender's times, in microseconds.
type contenderTimes struct {
	requests, afterBody, scripts []float64
}

func newHandlerTimes() *handlerTimes {
	return &handlerTimes{by: map[string]*contenderTimes{}}
}

// ServeHTTP times a request until its answer is handed to the connection: over HTTP/1.1 the
// answer would otherwise sit in the connection's buffer until the handler returned, over
// HTTP/2 until the connection's goroutine took it.
func (h *handlerTimes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	body := &timedBody{ReadCloser: r.Body, left: r.ContentLength}
	r.Body = body
	h.srv.ServeHTTP(w, r)
	_ = http.NewResponseController(w).Flush()
	end := time.Now()
	if body.read.IsZero() {
		body.read = start
	}
	h.add(r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:], func(t *contenderTimes) {
		t.requests = append(t.requests, float64(end.Sub(start).Microseconds()))
		t.afterBody = append(t.afterBody, float64(end.Sub(body.read).Microseconds()))
	})
}

// timedBody notes when the last byte of a body of known length was read.
type timedBody struct {
	io.ReadCloser
	left int64
	read time.Time
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.left -= int64(n); b.left <= 0 && b.read.IsZero() {
		b.read = time.Now()
	}
	return n, err
}

// observe records a decision's script time; Config.Observe.
func (h *handlerTimes) observe(o admission.Observation) {
	h.add(o.Script, func(t *contenderTimes) { t.scripts = append(t.scripts, float64(o.Decision.Took.Microseconds())) })
}

func (h *handlerTimes) add(script string, f func(*contenderTimes)) {
	contender := contenderOf(script)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.by[contender] == nil {
		h.by[contender] = &contenderTimes{}
	}
	f(h.by[contender])
}

// contenderOf is the contender a script (or a request's last path element) belongs to:
// ten-3.js is ten's.
func contenderOf(script string) string {
	contender, _, _ := strings.Cut(strings.TrimSuffix(script, ".js"), "-")
	return contender
}

// take returns and forgets the times of contender.
func (h *handlerTimes) take(contender string) contenderTimes {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.by[contender]
	delete(h.by, contender)
	if t == nil {
		return contenderTimes{}
	}
	return *t
}

func BenchmarkAdmission(b *testing.B) {
	cp := controlplane.Require(b, env)
	slice, rounds := envInt(b, "JSINFORMER_ADMISSION_SECONDS", 10), envInt(b, "JSINFORMER_ADMISSION_ROUNDS", 3)
	client := writerClient(b, cp, "adm-", admissionContenders)
	for range b.N {
		handlers, stop := startAdmissionRunner(b, cp, client)
		heap0, goroutines0 := liveHeap(), runtime.NumGoroutine()
		api := map[string][]float64{}
		times := map[string]*contenderTimes{}
		afterBodyByRound := map[string][][]float64{}
		sent := map[string]int{}
		var n atomic.Int64
		for round := range rounds {
			// The order rotates by one each round: no contender always follows busy's slice.
			for _, c := range rotated(admissionContenders, round) {
				stopTrace := traceSlice(b, c, round)
				d := time.Duration(slice) * time.Second
				// busy.js's reconcile spins 2 s per key, but not past this slice's end: the
				// backlog the slice leaves drains at once and does not load the next ones.
				data := map[string]string{"until": strconv.FormatInt(time.Now().Add(d).UnixMilli(), 10)}
				lat, count := createAtRate(b, client.CoreV1().ConfigMaps("adm-"+c), &n, d, data)
				stopTrace()
				clearSlice(b, client.CoreV1().ConfigMaps("adm-"+c))
				api[c] = append(api[c], lat...)
				sent[c] += count
				t, all := handlers.take(c), times[c]
				if all == nil {
					all = &contenderTimes{}
					times[c] = all
				}
				all.requests, all.afterBody = append(all.requests, t.requests...), append(all.afterBody, t.afterBody...)
				all.scripts = append(all.scripts, t.scripts...)
				afterBodyByRound[c] = append(afterBodyByRound[c], t.afterBody)
			}
		}
		heap1, goroutines1 := liveHeap(), runtime.NumGoroutine()
		stop()
		base := percentile(api["none"], 50)
		for _, c := range admissionContenders {
			b.ReportMetric(percentile(api[c], 50), c+"_api_p50_ms")
			b.ReportMetric(float64(sent[c])/float64(rounds*slice), c+"_creates/s")
			if c == "none" {
				continue
			}
			b.ReportMetric(percentile(api[c], 50)-base, c+"_added_p50_ms")
			b.ReportMetric(percentile(times[c].requests, 50), c+"_runner_p50_us")
			b.ReportMetric(percentile(times[c].requests, 99), c+"_runner_p99_us")
			ci := p99CI(afterBodyByRound[c])
			b.ReportMetric(ci.est, c+"_after_body_p99_us")
			b.ReportMetric(ci.lo, c+"_after_body_p99_lo_us")
			b.ReportMetric(ci.hi, c+"_after_body_p99_hi_us")
			b.ReportMetric(percentile(times[c].scripts, 50), c+"_script_p50_us")
			b.ReportMetric(percentile(times[c].scripts, 99), c+"_script_p99_us")
		}
		b.ReportMetric((percentile(api["ten"], 50)-base)/(percentile(api["validate"], 50)-base), "ten_vs_one_added")
		b.ReportMetric(float64(len(times["ten"].requests))/float64(max(sent["ten"], 1)), "ten_requests_per_create")
		b.ReportMetric(mb(heap1-heap0), "heap_growth_MB")
		b.ReportMetric(float64(goroutines1-goroutines0), "goroutine_growth")
	}
}

// writerClient is a client for the writer, its rate limit out of the way of admissionRate,
// with a namespace prefix+c for each of contenders.
func writerClient(b *testing.B, cp *controlplane.ControlPlane, prefix string, contenders []string) kubernetes.Interface {
	b.Helper()
	cfg := rest.CopyConfig(cp.Config)
	cfg.QPS, cfg.Burst = 2000, 2000
	client := kubernetes.NewForConfigOrDie(cfg)
	for _, c := range contenders {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: prefix + c}}
		if _, err := client.CoreV1().Namespaces().Create(b.Context(), ns, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
			b.Fatal(err)
		}
	}
	return client
}

// rotated is contenders rotated left by round: no contender always follows the same one.
func rotated(contenders []string, round int) []string {
	k := round % len(contenders)
	return append(slices.Clone(contenders[k:]), contenders[:k]...)
}

// p99CI is the p99 of every round's times pooled, with a 95 % bootstrap interval over rounds
// drawn with replacement (a round's times stay together: they shared the machine's state).
func p99CI(rounds [][]float64) interval {
	rng := rand.New(rand.NewPCG(1, 2))
	resamples := make([]float64, bootstrapResamples)
	var pooled []float64
	for i := range resamples {
		pooled = pooled[:0]
		for range rounds {
			pooled = append(pooled, rounds[rng.IntN(len(rounds))]...)
		}
		resamples[i] = percentile(pooled, 99)
	}
	return withCI(percentile(slices.Concat(rounds...), 99), resamples)
}

func envInt(b *testing.B, name string, def int) int {
	b.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		b.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}

// traceSlice writes a runtime/trace of the first round's "validate" slice into the file
// $JSINFORMER_ADMISSION_TRACE names (the runner and the writer share this process), and
// returns what ends it; without the variable it does nothing. Read the scheduler's share with
// go tool trace -pprof=sched FILE.
func traceSlice(b *testing.B, contender string, round int) func() {
	path := os.Getenv("JSINFORMER_ADMISSION_TRACE")
	if path == "" || contender != "validate" || round != 0 {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatalf("create the trace: %v", err)
	}
	if err := trace.Start(f); err != nil {
		b.Fatalf("start the trace: %v", err)
	}
	return func() {
		trace.Stop()
		if err := f.Close(); err != nil {
			b.Fatalf("write the trace: %v", err)
		}
	}
}
