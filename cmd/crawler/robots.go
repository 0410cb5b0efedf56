package main

import "context"

// runRobots is `crawler robots`; the robots issue replaces this placeholder.
func runRobots(ctx context.Context, args []string, s stdio) error {
	return usageErrorf("robots: not built yet")
}
