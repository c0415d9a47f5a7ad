package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/spf13/cobra"

	"github.com/jsinformer/jsinformer/debugapi"
	"github.com/jsinformer/jsinformer/debugapi/web"
	"github.com/jsinformer/jsinformer/engine"
)

// serveDebug binds --debug-addr before the engine starts (a taken explicit address is a
// start-up error) and serves the debug API until the returned func is called, which joins it.
//
// It writes this runner's discovery record (discovery.go) for runner list, removed when the
// returned func is called.
//
// On a non-loopback address every request is authenticated and authorized by the API server
// (debugapi.NewDelegatingAuthorizer) and served over TLS.
func (o *options) serveDebug(cmd *cobra.Command, e *engine.Engine, hooks *webhooks, restConfig *rest.Config, level *slog.LevelVar, logger *slog.Logger) (func(), error) {
	l, err := debugapi.Listen(o.debugAddr, !cmd.Flags().Changed("debug-addr"), logger)
	if err != nil || l == nil {
		return func() {}, err
	}
	info := runnerInfo(o.scripts, l.Addr().String())
	opts := debugapi.Options{
		Source: e, Status: func() any { st := e.Status(); st.Runner, st.Webhooks = &info, hooks.status(e); return st }, LogLevel: level, Logger: logger,
		Pprof: o.pprof, Loopback: debugapi.IsLoopback(l.Addr().String()),
	}
	if !opts.Loopback {
		if l, opts.Auth, err = o.secureDebug(l, restConfig, logger); err != nil {
			return func() {}, err
		}
	}
	srv := debugapi.New(opts)
	page := web.New(web.Options{Source: e, CanAct: web.CanAct(opts.Auth), ScriptsDir: o.scripts, Logger: logger})
	page.Register(srv.Handle)
	logger.Info("debug API", "debug_addr", l.Addr().String(), "page", pageURL(l.Addr().String(), !opts.Loopback),
		"pprof", o.pprof, "authorized_by_api_server", !opts.Loopback)
	unregister := register(info, logger)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = page.Run(ctx) })
	wg.Go(func() {
		if err := srv.Serve(ctx, l); err != nil {
			logger.Error("debug API stopped", "error", err.Error())
		}
	})
	return func() {
		unregister()
		cancel()
		wg.Wait()
	}, nil
}

// secureDebug wraps a non-loopback listener in TLS and builds its authorizer.
func (o *options) secureDebug(l net.Listener, restConfig *rest.Config, logger *slog.Logger) (net.Listener, debugapi.Authorizer, error) {
	fail := func(err error) (net.Listener, debugapi.Authorizer, error) {
		_ = l.Close()
		return nil, nil, err
	}
	client, err := kubernetes.NewForConfig(restConfig)
	if err != nil {
		return fail(fmt.Errorf("create the debug API's client: %w", err))
	}
	auth, err := debugapi.NewDelegatingAuthorizer(client, logger)
	if err != nil {
		return fail(err)
	}
	host, _, _ := net.SplitHostPort(l.Addr().String())
	tl, err := debugapi.TLSListener(l, o.debugTLSCert, o.debugTLSKey, host)
	if err != nil {
		return fail(err)
	}
	return tl, auth, nil
}

// traceRecords maps --trace-records (0 is off) to engine.Config.TraceRecords (negative is off).
func traceRecords(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// pageURL is the web page's address on the debug listener.
func pageURL(addr string, tls bool) string {
	if tls {
		return "https://" + addr + "/"
	}
	return "http://" + addr + "/"
}
