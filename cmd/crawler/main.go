// Command crawler is a polite web crawler: see README.md and `crawler help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

func main() {
	// A crawl keeps its state on disk and little on the heap, so at Go's
	// default GOGC of 100 the collector runs so often that it took a
	// quarter of the CPU of a one-host crawl; at 400 it takes a fraction of
	// that for about 12 MB more memory. GOGC in the environment wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop) // after the first signal, a second one ends the process at once
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}
