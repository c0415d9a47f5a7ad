package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	title := flag.String("title", "phases", "name of the run in the summary")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: phases [-title T] NAME[:DEP,...]=COMMAND...\n\n"+
			"Runs each COMMAND (sh -c) once the phases it depends on have succeeded, phases without a\n"+
			"dependency between them at the same time, and prints each phase's times at the end.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	plan, err := parsePlan(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "phases:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	began, load := time.Now(), loadAverage()
	results := run(ctx, plan, newLineWriter(os.Stdout, plan))
	interrupted := ctx.Err() != nil
	stop()
	summary(os.Stdout, *title, plan, results, began, time.Now(), load)
	os.Exit(exitCode(results, interrupted))
}

// exitCode is 130 when interrupted, 1 when a phase did not succeed, else 0.
func exitCode(results []result, interrupted bool) int {
	if interrupted {
		return 130
	}
	for _, r := range results {
		if r.state != succeeded {
			return 1
		}
	}
	return 0
}
