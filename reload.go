package crawler

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/politecrawl/crawler/storage/links"
)

// liveConfig is the config the running crawl reads, with its compiled
// scope and extractions. Reload swaps it whole; readers take it once per
// use with conf.
type liveConfig struct {
	Config
	scope   *scope
	extract []links.Extraction // Extract compiled, once rather than per page
}

// newLiveConfig compiles cfg, which Validate passed, for the running crawl.
func newLiveConfig(cfg Config, now func() time.Time) (*liveConfig, error) {
	sc, err := newScope(cfg, now)
	if err != nil {
		return nil, err
	}
	return &liveConfig{Config: cfg, scope: sc, extract: compileExtract(cfg.Extract)}, nil
}

// conf returns the config in force.
func (c *Crawler) conf() *liveConfig { return c.live.Load() }

// Reload reads a new config with load and applies it to the running crawl
// (SIGHUP), counting the outcome in crawler_config_reloads_total: scope,
// politeness, links, fetch retries, redirects and timeout, sitemap limits
// and the daemon's revisit intervals take effect at once; the state is
// kept. Keys that shape what New built — state_dir, user_agent,
// fetch.workers, fetch.max_body, fetch.proxy, fetch.ca_file, fetch.auth, output.*, daemon.enabled, daemon.listen,
// daemon.web_config, log.*, cluster.*, render.* — keep their old values until a restart, and are named in the
// returned notes. An invalid config is refused whole and nothing changes,
// and so is one that is valid only with its own values of those keys.
func (c *Crawler) Reload(load func() (Config, error)) (notes []string, err error) {
	applied := false
	defer func() { c.obs.reload(applied) }()
	cfg, err := load()
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	old := c.conf().Config
	fixed := []struct {
		key      string
		old, new any
		keep     func(*Config)
	}{
		{"state_dir", old.StateDir, cfg.StateDir, func(n *Config) { n.StateDir = old.StateDir }},
		{"user_agent", old.UserAgent, cfg.UserAgent, func(n *Config) { n.UserAgent = old.UserAgent }},
		{"fetch.workers", old.Fetch.Workers, cfg.Fetch.Workers, func(n *Config) { n.Fetch.Workers = old.Fetch.Workers }},
		{"fetch.max_body", old.Fetch.MaxBody, cfg.Fetch.MaxBody, func(n *Config) { n.Fetch.MaxBody = old.Fetch.MaxBody }},
		{"fetch.proxy", old.Fetch.Proxy, cfg.Fetch.Proxy, func(n *Config) { n.Fetch.Proxy = old.Fetch.Proxy }},
		{"fetch.ca_file", old.Fetch.CAFile, cfg.Fetch.CAFile, func(n *Config) { n.Fetch.CAFile = old.Fetch.CAFile }},
		{"fetch.auth", old.Fetch.Auth, cfg.Fetch.Auth, func(n *Config) { n.Fetch.Auth = old.Fetch.Auth }},
		{"output", old.Output, cfg.Output, func(n *Config) { n.Output = old.Output }},
		{"daemon.enabled", old.Daemon.Enabled, cfg.Daemon.Enabled, func(n *Config) { n.Daemon.Enabled = old.Daemon.Enabled }},
		{"daemon.listen", old.Daemon.Listen, cfg.Daemon.Listen, func(n *Config) { n.Daemon.Listen = old.Daemon.Listen }},
		{"daemon.web_config", old.Daemon.WebConfig, cfg.Daemon.WebConfig, func(n *Config) { n.Daemon.WebConfig = old.Daemon.WebConfig }},
		{"log", old.Log, cfg.Log, func(n *Config) { n.Log = old.Log }},
		{"cluster", old.Cluster, cfg.Cluster, func(n *Config) { n.Cluster = old.Cluster }},
		{"render", old.Render, cfg.Render, func(n *Config) { n.Render = old.Render }},
	}
	var kept []string
	for _, f := range fixed {
		if !reflect.DeepEqual(f.old, f.new) {
			notes = append(notes, fmt.Sprintf("%s: changed, takes effect after a restart", f.key))
			kept = append(kept, f.key)
			f.keep(&cfg)
		}
	}
	// What runs is the new config with those keys as they were, and it
	// must be valid too: daemon.recrawl: 0s passes with daemon.enabled
	// false, not in a daemon that keeps running.
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("with %s unchanged until a restart: %w", strings.Join(kept, ", "), err)
	}
	live, err := newLiveConfig(cfg, c.now)
	if err != nil {
		return nil, err
	}
	c.hosts.reconfigure(cfg, c.now())
	c.live.Store(live)
	applied = true
	select {
	case c.relink.reloaded <- struct{}{}:
	default:
	}
	seeds := c.seedItems()
	c.dueWhenFound(seeds, c.now())
	if _, err := c.queue("", seeds); err != nil {
		return notes, fmt.Errorf("queue new seeds: %w", err)
	}
	c.wake()
	return notes, nil
}
