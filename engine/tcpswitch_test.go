package engine_test

import (
	"errors"
	"io"
	"net"
	"sync"
	"testing"
)

// tcpSwitch is a TCP proxy on one loopback address, as a load balancer in front of API
// servers: each connection it accepts is piped to the backend current at that moment;
// switchTo changes the backend for later connections, leaving open ones where they are.
type tcpSwitch struct {
	l  net.Listener
	wg sync.WaitGroup

	mu      sync.Mutex
	backend string
	conns   map[net.Conn]bool
	closed  bool
}

// startSwitch listens on a free loopback port, forwards to backend (host:port) until the test
// ends, then closes every connection and waits for its goroutines.
func startSwitch(t *testing.T, backend string) *tcpSwitch {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	s := &tcpSwitch{l: l, backend: backend, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	t.Cleanup(s.close)
	return s
}

func (s *tcpSwitch) addr() string { return s.l.Addr().String() }

func (s *tcpSwitch) switchTo(backend string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backend = backend
}

func (s *tcpSwitch) accept() {
	defer s.wg.Done()
	for {
		c, err := s.l.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			continue
		}
		s.mu.Lock()
		backend := s.backend
		s.mu.Unlock()
		up, err := net.Dial("tcp", backend)
		if err != nil {
			_ = c.Close()
			continue
		}
		if !s.track(c, up) {
			return
		}
		s.wg.Add(2)
		go s.pipe(c, up)
		go s.pipe(up, c)
	}
}

// track remembers both ends of a connection so close can end them; false once closed.
func (s *tcpSwitch) track(conns ...net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		s.conns[c] = true
	}
	return true
}

// pipe copies one direction; when it ends, both ends close, which ends the other direction.
func (s *tcpSwitch) pipe(dst, src net.Conn) {
	defer s.wg.Done()
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}

func (s *tcpSwitch) close() {
	_ = s.l.Close()
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}
