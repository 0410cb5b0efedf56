package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/politecrawl/crawler"
	"github.com/politecrawl/crawler/frontier/cluster"
	"github.com/politecrawl/crawler/storage"
)

const clusterStatusUsage = "cluster status -c FILE [--json]"

// clusterStatusTimeout bounds `crawler cluster status` as a whole: a server
// that accepts the connection and then never answers must not hang a
// script that asks.
const clusterStatusTimeout = 30 * time.Second

// runCluster is `crawler cluster`: commands about a crawl shared by several
// workers through NATS (the config's cluster block; README, "Several
// machines"). It has one subcommand, status.
func runCluster(ctx context.Context, args []string, s stdio) error {
	if len(args) == 0 {
		return usageErrorf("cluster: give a subcommand (usage: crawler %s)", clusterStatusUsage)
	}
	switch args[0] {
	case "-h", "-help", "--help":
		fmt.Fprintf(s.out, "Usage: crawler %s\n\nSubcommands:\n"+
			"  status   print the workers of the config's crawl, which partitions each holds, and the URLs queued and done\n"+
			"\nRun 'crawler cluster status -h' for its flags.\n", clusterStatusUsage)
		return flag.ErrHelp
	case "status":
		return runClusterStatus(ctx, args[1:], s)
	}
	return usageErrorf("cluster: unknown subcommand %q (usage: crawler %s)", args[0], clusterStatusUsage)
}

// runClusterStatus is `crawler cluster status`: it reads the state of the
// crawl the config's cluster block names, without joining it, and prints
// it as a table or, with --json, as one JSON object.
//
// Exit status: 0 when the status was printed, 1 when the server could not
// be reached, has no JetStream or no such crawl, 2 for bad usage or a bad
// config (one without cluster.nats included).
func runClusterStatus(ctx context.Context, args []string, s stdio) error {
	fs := flag.NewFlagSet("cluster status", flag.ContinueOnError)
	var cfgPath string
	fs.StringVar(&cfgPath, "c", "", "read the cluster block of the YAML config `FILE` (the workers' config)")
	fs.StringVar(&cfgPath, "config", "", "same as -c `FILE`")
	asJSON := fs.Bool("json", false, "print one JSON object (workers, partitions, queued, done) instead of the table")
	pos, err := parseFlags(fs, args, clusterStatusUsage, s.out)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usageErrorf("cluster status: takes no arguments, got %q (usage: crawler %s)", pos[0], clusterStatusUsage)
	case cfgPath == "":
		return usageErrorf("cluster status: give the workers' config with -c FILE (usage: crawler %s)", clusterStatusUsage)
	}
	cfg, err := clusterConfig(cfgPath)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, clusterStatusTimeout)
	defer cancel()
	ov, err := cluster.Status(ctx, cfg)
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("cluster status: cluster.nats: %s did not answer within %v", cfg.Redacted(), clusterStatusTimeout)
	}
	if err != nil {
		return fmt.Errorf("cluster status: %w", err)
	}
	if *asJSON {
		err = json.NewEncoder(storage.JSONWriter(s.out)).Encode(overviewJSON(ov))
	} else {
		err = ov.Write(s.out)
	}
	if err != nil {
		return fmt.Errorf("cluster status: write: %w", err)
	}
	return nil
}

// clusterConfig reads the cluster block of the config at path. The file is
// read as crawl reads it (unknown keys and bad values refused, each named
// with its line), but only the cluster block is validated: status crawls
// nothing, so a config without seeds will do.
func clusterConfig(path string) (cluster.Config, error) {
	data, err := readConfigFile(path)
	if err != nil {
		return cluster.Config{}, usageErrorf("%v", err)
	}
	cfg, lines, probs, _ := decodeConfig(path, data)
	if len(probs) > 0 {
		return cluster.Config{}, configError(probs)
	}
	var ce *crawler.ConfigError
	if errors.As(cfg.Validate(), &ce) {
		for _, p := range ce.Problems {
			if strings.HasPrefix(p.Key, "cluster.") {
				probs = append(probs, placeProblem(p, path, lines, nil))
			}
		}
	}
	if len(probs) > 0 {
		return cluster.Config{}, configError(probs)
	}
	if !cfg.Cluster.Enabled() {
		return cluster.Config{}, usageErrorf("cluster status: %s: cluster.nats is not set: the config crawls on one machine, with no cluster to show", path)
	}
	return cfg.Cluster, nil
}

// statusJSON is what --json prints: the Overview with the names of the
// project's other JSON (lower case, words joined by '_'), every list
// present even when empty, and the totals the table's last line shows.
type statusJSON struct {
	Name       string       `json:"name"`
	Partitions int          `json:"partitions"`
	Workers    []workerJSON `json:"workers"`
	Unheld     []int        `json:"unheld"`      // partitions no live worker holds
	Queued     int64        `json:"queued"`      // the workers' queued URLs, summed
	Done       int64        `json:"done"`        // the workers' done URLs, summed
	PagesTaken int64        `json:"pages_taken"` // from the scope.max_pages budget
	Sequence   uint64       `json:"sequence"`    // the stream's last sequence
	Entries    uint64       `json:"entries"`     // in the stream, not yet folded into snapshots
}

type workerJSON struct {
	Worker     string `json:"worker"`
	Partitions []int  `json:"partitions"`
	cluster.Load
	Seen time.Time `json:"seen"` // its last heartbeat
}

func overviewJSON(ov cluster.Overview) statusJSON {
	out := statusJSON{
		Name: ov.Name, Partitions: ov.Partitions, Workers: []workerJSON{}, Unheld: nonNil(ov.Unheld),
		PagesTaken: ov.Pages, Sequence: ov.Sequence, Entries: ov.Entries,
	}
	for _, w := range ov.Workers {
		out.Workers = append(out.Workers, workerJSON{Worker: w.Worker, Partitions: nonNil(w.Partitions), Load: w.Load, Seen: w.Seen})
		out.Queued += w.Load.Queued
		out.Done += w.Load.Done
	}
	return out
}

func nonNil(ps []int) []int {
	if ps == nil {
		return []int{}
	}
	return ps
}
