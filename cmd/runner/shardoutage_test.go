package main

import (
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jsinformer/jsinformer/internal/controlplane"
	"github.com/jsinformer/jsinformer/sharding"
)

// outageProxy forwards loopback connections to the API server while up; down closes every
// connection and closes each new one at once, as an API server that is gone, until up.
type outageProxy struct {
	l  net.Listener
	wg sync.WaitGroup

	mu     sync.Mutex
	isDown bool
	conns  map[net.Conn]bool
}

func newOutageProxy(t *testing.T, target string) *outageProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &outageProxy{l: l, conns: map[net.Conn]bool{}}
	p.wg.Go(func() { p.accept(target) })
	t.Cleanup(func() { _ = p.l.Close(); p.down(); p.wg.Wait() })
	return p
}

func (p *outageProxy) addr() string { return p.l.Addr().String() }

func (p *outageProxy) accept(target string) {
	for {
		in, err := p.l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		if !p.open(in) {
			_ = in.Close()
			continue
		}
		out, err := net.Dial("tcp", target)
		if err != nil || !p.open(out) {
			_ = in.Close()
			continue
		}
		p.wg.Go(func() { _, _ = io.Copy(out, in); _ = out.Close() })
		p.wg.Go(func() { _, _ = io.Copy(in, out); _ = in.Close() })
	}
}

// open registers c, or reports false while the proxy is down.
func (p *outageProxy) open(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.isDown {
		return false
	}
	p.conns[c] = true
	return true
}

// down closes every connection and refuses new ones until up.
func (p *outageProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isDown = true
	for c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}

func (p *outageProxy) up() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.isDown = false
}

const fenceLog = "shard lease not renewed within the renew deadline: handling no key until the ring is joined again"

// handledSince waits until every name had a call begun after since by its owner in ring, and
// returns how long after since the last of them began.
func (se *shardEnv) handledSince(t *testing.T, names []string, since time.Time, ring sharding.Ring, within time.Duration) time.Duration {
	t.Helper()
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		first := map[string]time.Time{}
		for _, c := range se.allCalls(t) {
			if c.begin.After(since) && c.replica == ring.Owner(se.key(c.name)) {
				if b, ok := first[c.name]; !ok || c.begin.Before(b) {
					first[c.name] = c.begin
				}
			}
		}
		var missing []string
		last := time.Duration(0)
		for _, n := range names {
			b, ok := first[n]
			if !ok {
				missing = append(missing, n)
			} else if d := b.Sub(since); d > last {
				last = d
			}
		}
		if len(missing) == 0 {
			return last
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d objects not handled by their owner within %v after %s, e.g. %v", len(missing), len(names),
				within, since.Format("15:04:05.000"), missing[:min(5, len(missing))])
		}
	}
}

// An API server outage of 60s: every replica stops handling at its renew deadline and keeps
// running; once the API server is back they rejoin and every key is owned and handled again
// (replayed) within the lease duration plus 5s; the changes made during the outage follow.
func TestShardedOutage(t *testing.T) {
	cp := controlplane.Require(t, env)
	se := newShardEnv(t, cp, shardScript)
	proxy := newOutageProxy(t, strings.TrimPrefix(cp.Config.Host, "https://"))
	kubeconfig := kubeconfigWith(t, "https://"+proxy.addr(), cp.Config.BearerToken)
	ids := []string{"shard-a", "shard-b", "shard-c"}
	for _, id := range ids {
		se.startWith(t, id, kubeconfig)
	}
	se.waitMembers(t, ids...)
	names := make([]string, 90)
	for i := range names {
		names[i] = objectName(i)
	}
	se.apply(t, names, "1", true)
	se.waitHandled(t, names, "1", 60*time.Second)

	proxy.down()
	downAt := time.Now()
	se.apply(t, names, "2", false) // the replicas cannot see these until the API server is back
	for time.Since(downAt) < 60*time.Second {
		for _, id := range ids {
			select {
			case <-se.replicas[id].done:
				t.Fatalf("%s exited %v into the outage: %v", id, time.Since(downAt).Round(time.Millisecond), se.replicas[id].err)
			default:
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	fenced := map[string]time.Time{}
	for _, id := range ids {
		fenced[id] = se.replicas[id].waitLog(t, fenceLog, "", time.Second).Time
		if d := fenced[id].Sub(downAt); d > testRenew+leaderSlack {
			t.Errorf("%s fenced itself %v into the outage, want at its renew deadline (%v)", id, d, testRenew)
		}
	}
	proxy.up()
	upAt := time.Now()
	for _, id := range ids {
		for _, c := range se.replicas[id].calls(t) {
			if c.begin.After(fenced[id]) && c.begin.Before(upAt) {
				t.Errorf("%s began a call on %s at %v, fenced since %v", id, c.name, c.begin.Format("15:04:05.000"), fenced[id].Format("15:04:05.000"))
			}
		}
	}
	took := se.handledSince(t, names, upAt, sharding.NewRing(ids...), testLease+5*time.Second)
	t.Logf("after a 60s outage, every object was handled again by its owner %v after the API server came back", took.Round(time.Millisecond))
	se.waitHandled(t, names, "2", 60*time.Second)
	for _, id := range ids {
		select {
		case <-se.replicas[id].done:
			t.Errorf("%s exited after the outage: %v", id, se.replicas[id].err)
		default:
		}
	}
	noOverlap(t, se.allCalls(t))
}
