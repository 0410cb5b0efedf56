package main

import (
	"context"
	"flag"
	"fmt"
)

const validateUsage = "validate -c FILE [flags]"

// runValidate is `crawler validate`: the config a crawl with the same
// file and flags would run, checked the same way (every problem listed,
// each with its file:line:key), without opening the state, an output or
// any connection. It prints "FILE: valid" and exits 0, or the problems
// and exit code 2, as `caddy validate` and `promtool check config` do.
func runValidate(_ context.Context, args []string, s stdio) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	cf := addConfigFlags(fs)
	seeds, err := parseFlags(fs, args, validateUsage, s.out)
	if err != nil {
		return err
	}
	if cf.path == "" {
		return usageErrorf("validate: give the config with -c FILE (usage: crawler %s)", validateUsage)
	}
	if _, err := cf.load(seeds); err != nil {
		return err
	}
	fmt.Fprintf(s.out, "%s: valid\n", cf.path)
	return nil
}
