package main

import (
	"context"
	"log/slog"
	"sync"

	"github.com/spf13/cobra"

	"github.com/jsinformer/jsinformer/debugapi"
	"github.com/jsinformer/jsinformer/debugapi/web"
	"github.com/jsinformer/jsinformer/engine"
)

// serveDebug binds --debug-addr before the engine starts (a taken explicit address is a
// start-up error) and serves the debug API until the returned func is called, which joins it.
func (o *options) serveDebug(cmd *cobra.Command, e *engine.Engine, level *slog.LevelVar, logger *slog.Logger) (func(), error) {
	l, err := debugapi.Listen(o.debugAddr, !cmd.Flags().Changed("debug-addr"), logger)
	if err != nil || l == nil {
		return func() {}, err
	}
	srv := debugapi.New(debugapi.Options{
		Source: e, Status: func() any { return interimStatus(e) }, LogLevel: level, Logger: logger,
		Pprof: o.pprof, Loopback: debugapi.IsLoopback(l.Addr().String()),
	})
	page := web.New(web.Options{Source: e, Logger: logger})
	page.Register(srv.Handle)
	logger.Info("debug API", "debug_addr", l.Addr().String(), "page", "http://"+l.Addr().String()+"/", "pprof", o.pprof)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { _ = page.Run(ctx) })
	wg.Go(func() {
		if err := srv.Serve(ctx, l); err != nil {
			logger.Error("debug API stopped", "error", err.Error())
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}, nil
}

// traceRecords maps --trace-records (0 is off) to engine.Config.TraceRecords (negative is off).
func traceRecords(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// interimStatus stands in for the engine's state API until it is merged: live versions and
// informers.
func interimStatus(e *engine.Engine) any {
	q, _ := e.Queue("")
	ready := "ready"
	if err := e.Ready(); err != nil {
		ready = err.Error()
	}
	return map[string]any{"ready": ready, "versions": q.Scripts, "informers": e.ActiveInformers()}
}
