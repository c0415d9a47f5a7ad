package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newCommand().ExecuteContext(ctx)
	stop()
	var exit *exitError
	switch {
	case errors.As(err, &exit) && exit.code != 2:
		os.Exit(exit.code) // the output already says why
	case err != nil:
		fmt.Fprintln(os.Stderr, "error:", err)
		if exit != nil {
			os.Exit(exit.code)
		}
		os.Exit(1)
	}
}
