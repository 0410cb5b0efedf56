// Command crawler is a polite web crawler: see README.md and `crawler help`.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop() // a second signal now ends the process at once
	os.Exit(exitCode(err, os.Stderr))
}
