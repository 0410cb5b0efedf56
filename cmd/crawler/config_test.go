package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/crawler"
	"github.com/politecrawl/crawler/frontier/cluster"
	"github.com/politecrawl/crawler/storage/report"
)

// The flag is not -update: other tests of this package may define that one.
var updateConfigs = flag.Bool("update-configs", false, "rewrite testdata/configs/*.want from the messages got")

// TestBadConfigs loads each config of testdata/configs, all of them bad, and
// compares the message with the golden .want file beside it.
func TestBadConfigs(t *testing.T) {
	files, err := filepath.Glob("testdata/configs/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no configs in testdata/configs: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			_, err := loadConfig(file)
			if err == nil {
				t.Fatalf("loadConfig(%s) = nil error, want one", file)
			}
			if code := exitCode(err, io.Discard); code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(file, ".yaml") + ".want"
			if *updateConfigs {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestBadConfigs -update-configs to create it)", err)
			}
			if got != string(want) {
				t.Errorf("message:\n%s\nwant (%s):\n%s", got, golden, want)
			}
		})
	}
}

func TestExampleConfig(t *testing.T) {
	const path = "../../config.example.yaml"
	got, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	want := crawler.DefaultConfig()
	want.Seeds = []string{"https://example.com/"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the example config is not the defaults plus a seed:\n got %+v\nwant %+v", got, want)
	}
	// Every key is written out, so that the example documents it.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, lines, _, _ := decodeConfig(path, data)
	for _, k := range configKeys() {
		if lines[k] == 0 {
			t.Errorf("%s does not set %s", path, k)
		}
	}
}

// allKeysYAML sets every key to a value that is not its default.
const allKeysYAML = `
user_agent: "ExampleBot/2.0"
seeds: [https://example.com/, "http://127.0.0.2:8001/a"]
sitemaps:
  - https://example.com/sitemap.xml.gz
sitemap_limits: {max_urls: 10, max_bytes: 1KB, max_children: 2}
state_dir: /var/lib/crawl
scope:
  hosts: [example.com, "http://127.0.0.2:8001"]
  max_depth: 3
  max_pages: 100
  include: ['^https://example\.com/docs/']
  exclude: ['\.pdf$', '/private/']
  max_url_length: 512
  max_path_depth: 0
  max_repeated_segments: 2
  max_pages_per_host: 50
  max_query_variants: 7
  requisites: [static.example.com, "*.example-cdn.net"]
  max_links_per_page: 500
politeness:
  delay: 250ms
  max_per_host: 2
  honor_crawl_delay: false
  retry_after_max: 10m
  robots_last_wait: 5s
  delay_factor: 1.5
  max_delay: 12s
  max_bytes_per_second: 64KiB
fetch:
  workers: 4
  timeout: 1m30s
  max_body: 1048577
  max_redirects: 0
  retries: 0
  proxy: http://proxy.internal:3128
links:
  honor_nofollow: false
  honor_meta_robots: false
output:
  urls: "-"
  links: links.jsonl
  mirror_dir: mirror
  mirror_links: relative
  warc: warc
  warc_max_size: 1.5GiB
daemon:
  enabled: true
  recrawl: 6h
  max_interval: 0
  keep_gone: true
  listen: 127.0.0.1:9090
log:
  format: json
  level: debug
cluster:
  nats: "nats://10.0.0.1:4222, nats://10.0.0.2:4222"
  name: site-audit
  worker: w1
  partitions: 64
  lease: 20s
report:
  title_max: 70
  description_max: 150
  thin_words: 100
  near_duplicate: 0.95
  slow_ttfb: 1s
  max_depth: 6
  accept: [403, 999]
  disable: [deep-page]
render:
  enabled: true
  browser: /bin/sh
  tabs: 3
  timeout: 30s
  settle: 1s
`

func allKeysConfig() crawler.Config {
	return crawler.Config{
		UserAgent:     "ExampleBot/2.0",
		Seeds:         []string{"https://example.com/", "http://127.0.0.2:8001/a"},
		Sitemaps:      []string{"https://example.com/sitemap.xml.gz"},
		SitemapLimits: crawler.SitemapLimits{MaxURLs: 10, MaxBytes: 1000, MaxChildren: 2},
		StateDir:      "/var/lib/crawl",
		Scope: crawler.ScopeConfig{
			Hosts:    []string{"example.com", "http://127.0.0.2:8001"},
			MaxDepth: 3, MaxPages: 100,
			Include:      []string{`^https://example\.com/docs/`},
			Exclude:      []string{`\.pdf$`, `/private/`},
			MaxURLLength: 512, MaxPathDepth: 0, MaxRepeatedSegments: 2, MaxPagesPerHost: 50,
			MaxQueryVariants: 7, Requisites: crawler.Requisites{"static.example.com", "*.example-cdn.net"}, MaxLinksPerPage: 500,
		},
		Politeness: crawler.PolitenessConfig{Delay: 250 * time.Millisecond, MaxPerHost: 2, RetryAfterMax: 10 * time.Minute,
			RobotsLastWait: 5 * time.Second, DelayFactor: 1.5, MaxDelay: 12 * time.Second, MaxBytesPerSecond: 64 * crawler.KiB},
		Fetch: crawler.FetchConfig{Workers: 4, Timeout: 90 * time.Second, MaxBody: 1048577, Proxy: "http://proxy.internal:3128"},
		Output: crawler.OutputConfig{
			URLs: "-", Links: "links.jsonl", MirrorDir: "mirror", MirrorLinks: "relative", WARC: "warc",
			WARCMaxSize: 3 * crawler.GiB / 2,
		},
		Daemon: crawler.DaemonConfig{Enabled: true, Recrawl: 6 * time.Hour, KeepGone: true, Listen: "127.0.0.1:9090"},
		Log:    crawler.LogConfig{Format: "json", Level: "debug"},
		Cluster: cluster.Config{NATS: "nats://10.0.0.1:4222, nats://10.0.0.2:4222", Name: "site-audit", Worker: "w1",
			Partitions: 64, Lease: 20 * time.Second},
		Report: report.Config{TitleMax: 70, DescriptionMax: 150, ThinWords: 100, NearDuplicate: 0.95,
			SlowTTFB: time.Second, MaxDepth: 6, Accept: []string{"403", "999"}, Disable: []string{"deep-page"}},
		Render: crawler.RenderConfig{Enabled: true, Browser: "/bin/sh", Tabs: 3, Timeout: 30 * time.Second, Settle: time.Second},
	}
}

func TestDecodeAllKeys(t *testing.T) {
	got, lines, probs, _ := decodeConfig("all.yaml", []byte(allKeysYAML))
	if len(probs) > 0 {
		t.Fatalf("problems: %v", probs)
	}
	if want := allKeysConfig(); !reflect.DeepEqual(got, want) {
		t.Errorf("decoded:\n %+v\nwant\n %+v", got, want)
	}
	if err := got.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	for key, line := range map[string]int{"user_agent": 2, "scope.exclude[1]": 13, "log.level": 55} {
		if lines[key] != line {
			t.Errorf("line of %s = %d, want %d", key, lines[key], line)
		}
	}
}

// TestConfigTypesDecodable keeps crawler.Config to the types the decoder
// knows, each field with a yaml name.
func TestConfigTypesDecodable(t *testing.T) {
	known := []reflect.Type{
		reflect.TypeFor[string](), reflect.TypeFor[int](), reflect.TypeFor[float64](), reflect.TypeFor[bool](),
		reflect.TypeFor[[]string](), reflect.TypeFor[time.Duration](), reflect.TypeFor[crawler.ByteSize](),
		reflect.TypeFor[crawler.Requisites](),
	}
	var walk func(t reflect.Type, prefix string)
	walk = func(typ reflect.Type, prefix string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue // the decoder cannot set it, and does not try
			}
			name := yamlName(f)
			if name == "" {
				t.Errorf("%s%s has no yaml name", prefix, f.Name)
				continue
			}
			switch {
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, prefix+name+".")
			case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
				walk(f.Type.Elem(), prefix+name+"[].")
			case !slices.Contains(known, f.Type):
				t.Errorf("%s%s has type %s, which the decoder does not know", prefix, name, f.Type)
			}
		}
	}
	walk(reflect.TypeFor[crawler.Config](), "")
}

func TestDecodeValues(t *testing.T) {
	def := crawler.DefaultConfig()
	tests := []struct {
		name, yaml string
		want       func(c *crawler.Config) // changes from the defaults
		problems   []string
	}{
		{name: "empty", yaml: "", want: func(c *crawler.Config) {}},
		{name: "only comments", yaml: "# nothing\n", want: func(c *crawler.Config) {}},
		{name: "null document", yaml: "---\n", want: func(c *crawler.Config) {}},
		{name: "trailing separator", yaml: "state_dir: s\n---\n# end\n---\n", want: func(c *crawler.Config) { c.StateDir = "s" }},
		{name: "bare number duration", yaml: "fetch:\n  timeout: 1.5\n", problems: []string{`x.yaml:2: fetch.timeout: missing unit in duration "1.5" (write 1.5s or 1.5ms)`}},
		{name: "not UTF-8", yaml: "a: \xff\n", problems: []string{`x.yaml: invalid YAML: invalid leading UTF-8 octet`}},
		{name: "empty mapping", yaml: "{}", want: func(c *crawler.Config) {}},
		{name: "null keeps default", yaml: "state_dir:\nseeds:\npoliteness: ~\nfetch: {timeout: null}\n", want: func(c *crawler.Config) {}},
		{name: "empty list is nil", yaml: "seeds: []\n", want: func(c *crawler.Config) {}},
		{name: "empty string", yaml: "output: {urls: ''}\n", want: func(c *crawler.Config) {}},
		{name: "zero duration bare", yaml: "politeness: {delay: 0}\n", want: func(c *crawler.Config) { c.Politeness.Delay = 0 }},
		{name: "size in bytes", yaml: "fetch: {max_body: 4096}\n", want: func(c *crawler.Config) { c.Fetch.MaxBody = 4096 }},
		{name: "size with space", yaml: "fetch: {max_body: 2 MB}\n", want: func(c *crawler.Config) { c.Fetch.MaxBody = 2e6 }},
		{name: "hex int", yaml: "fetch: {workers: 0x10}\n", want: func(c *crawler.Config) { c.Fetch.Workers = 16 }},
		{name: "number as string", yaml: "state_dir: 2024\n", want: func(c *crawler.Config) { c.StateDir = "2024" }},
		{name: "aliases", yaml: "seeds: &s [https://a.example/]\nsitemaps: *s\nfetch: {workers: &w 3}\npoliteness: {max_per_host: *w}\n",
			want: func(c *crawler.Config) {
				c.Seeds = []string{"https://a.example/"}
				c.Sitemaps = []string{"https://a.example/"}
				c.Fetch.Workers, c.Politeness.MaxPerHost = 3, 3
			}},
		{name: "quoted int", yaml: "fetch:\n  workers: \"8\"\n", problems: []string{`x.yaml:2: fetch.workers: want a whole number, got "8"`}},
		{name: "float int", yaml: "fetch:\n  workers: 1.5\n", problems: []string{`x.yaml:2: fetch.workers: want a whole number, got "1.5"`}},
		{name: "huge int", yaml: "fetch:\n  workers: 99999999999999999999\n", problems: []string{`x.yaml:2: fetch.workers: want a whole number, got "99999999999999999999"`}},
		{name: "bool yes", yaml: "links: {honor_nofollow: yes}\n", problems: []string{`x.yaml:1: links.honor_nofollow: want true or false, got "yes"`}},
		{name: "list for scalar", yaml: "state_dir: [a]\n", problems: []string{`x.yaml:1: state_dir: want a string, got a list`}},
		{name: "mapping for duration", yaml: "politeness: {delay: {s: 1}}\n", problems: []string{`x.yaml:1: politeness.delay: want a duration such as 2s, got a mapping`}},
		{name: "list for size", yaml: "fetch: {max_body: [1]}\n", problems: []string{`x.yaml:1: fetch.max_body: want a size such as 10MiB, got a list`}},
		{name: "scalar for section", yaml: "fetch: fast\n", problems: []string{`x.yaml:1: fetch: want a mapping of keys, got "fast"`}},
		{name: "mapping key", yaml: "? [a]\n: 1\n", problems: []string{`x.yaml:1: want a key name, got a list`}},
		{name: "case of a key", yaml: "User_Agent: x\n", problems: []string{`x.yaml:1: User_Agent: unknown key (did you mean user_agent?)`}},
		{name: "merge key", yaml: "base: &b {workers: 2}\nfetch:\n  <<: *b\n", problems: []string{
			`x.yaml:1: base: unknown key`, `x.yaml:3: fetch.<<: unknown key`}},
		{name: "requisites word", yaml: "scope: {requisites: same}\n", want: func(c *crawler.Config) { c.Scope.Requisites = crawler.Requisites{"same"} }},
		{name: "requisites list", yaml: "scope:\n  requisites: ['*.cdn.example', https://fonts.example.org]\n",
			want: func(c *crawler.Config) {
				c.Scope.Requisites = crawler.Requisites{"*.cdn.example", "https://fonts.example.org"}
			}},
		{name: "requisites mapping", yaml: "scope:\n  requisites: {any: 1}\n", problems: []string{`x.yaml:2: scope.requisites: want a list, got a mapping`}},
		{name: "long value cut", yaml: "fetch: {workers: " + strings.Repeat("a", 100) + "}\n", problems: []string{
			`x.yaml:1: fetch.workers: want a whole number, got "` + strings.Repeat("a", 57) + `..."`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, probs, _ := decodeConfig("x.yaml", []byte(tt.yaml))
			var msgs []string
			for _, p := range probs {
				msgs = append(msgs, p.String())
			}
			if !slices.Equal(msgs, tt.problems) {
				t.Errorf("problems:\n %q\nwant\n %q", msgs, tt.problems)
			}
			if tt.want != nil {
				want := def
				tt.want(&want)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("config:\n %+v\nwant\n %+v", got, want)
				}
			}
		})
	}
}

func TestLoadConfigFileErrors(t *testing.T) {
	if _, err := loadConfig(filepath.Join(t.TempDir(), "missing.yaml")); err == nil ||
		!strings.Contains(err.Error(), "no such file") || exitCode(err, io.Discard) != 2 {
		t.Errorf("missing file: %v", err)
	}
	big := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(big, make([]byte, maxConfigSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadConfig(big); err == nil || !strings.Contains(err.Error(), "larger than 4MiB") {
		t.Errorf("big file: %v", err)
	}
}

// TestClusterBlock loads a valid cluster block: its keys land in
// cfg.Cluster, durations parsed, and keys left out keep their defaults.
func TestClusterBlock(t *testing.T) {
	path := writeConfig(t, `seeds: [https://example.com/]
cluster:
  nats: nats://10.0.0.1:4222,nats://10.0.0.2:4222
  name: shop-audit
  lease: 1m30s
`)
	got, err := loadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	want := cluster.DefaultConfig()
	want.NATS, want.Name, want.Lease = "nats://10.0.0.1:4222,nats://10.0.0.2:4222", "shop-audit", 90*time.Second
	if got.Cluster != want || !got.Cluster.Enabled() {
		t.Errorf("cluster block:\n %+v\nwant\n %+v", got.Cluster, want)
	}
}

func TestManyProblemsCut(t *testing.T) {
	var b strings.Builder
	for i := range maxProblemsShown + 5 {
		b.WriteString("k" + strings.Repeat("x", i) + ": 1\n")
	}
	path := filepath.Join(t.TempDir(), "many.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := loadConfig(path)
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != maxProblemsShown+2 || lines[0] != "invalid config (56 problems):" || lines[len(lines)-1] != "  and 6 more" {
		t.Errorf("got %d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}

// parseConfigArgs parses args as crawl would and loads the config.
func parseConfigArgs(t *testing.T, args ...string) (crawler.Config, error) {
	t.Helper()
	fs := flag.NewFlagSet("crawl", flag.ContinueOnError)
	cf := addConfigFlags(fs)
	seeds, err := parseFlags(fs, args, "crawl [flags] [SEED_URL...]", io.Discard)
	if err != nil {
		return crawler.Config{}, err
	}
	return cf.load(seeds)
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigFlags(t *testing.T) {
	file := writeConfig(t, "seeds: [https://example.com/]\nfetch: {workers: 4}\npoliteness: {delay: 2s}\ndaemon: {enabled: true}\nsitemaps: [https://example.com/s.xml]\n"+
		"scope: {hosts: [old.example], include: [/old/], exclude: [/old/x]}\n") // lists the list flags replace
	tests := []struct {
		flag string   // the flag the case covers, "" for none
		args []string // after -c file
		want func(c *crawler.Config)
	}{
		{"", nil, func(c *crawler.Config) {}},
		{"user-agent", []string{"--user-agent", "OtherBot/1"}, func(c *crawler.Config) { c.UserAgent = "OtherBot/1" }},
		{"sitemap", []string{"--sitemap", "https://a.example/1.xml", "-sitemap=https://a.example/2.xml"},
			func(c *crawler.Config) { c.Sitemaps = []string{"https://a.example/1.xml", "https://a.example/2.xml"} }},
		{"state-dir", []string{"--state-dir", "/tmp/s"}, func(c *crawler.Config) { c.StateDir = "/tmp/s" }},
		{"max-depth", []string{"--max-depth=2"}, func(c *crawler.Config) { c.Scope.MaxDepth = 2 }},
		{"max-pages", []string{"--max-pages", "10"}, func(c *crawler.Config) { c.Scope.MaxPages = 10 }},
		{"delay", []string{"--delay", "0"}, func(c *crawler.Config) { c.Politeness.Delay = 0 }},
		{"max-per-host", []string{"--max-per-host", "3"}, func(c *crawler.Config) { c.Politeness.MaxPerHost = 3 }},
		{"workers", []string{"-workers", "32"}, func(c *crawler.Config) { c.Fetch.Workers = 32 }},
		{"timeout", []string{"--timeout", "5s"}, func(c *crawler.Config) { c.Fetch.Timeout = 5 * time.Second }},
		{"max-body", []string{"--max-body", "1MiB"}, func(c *crawler.Config) { c.Fetch.MaxBody = 1 << 20 }},
		{"max-redirects", []string{"--max-redirects", "0"}, func(c *crawler.Config) { c.Fetch.MaxRedirects = 0 }},
		{"retries", []string{"--retries=1"}, func(c *crawler.Config) { c.Fetch.Retries = 1 }},
		{"host", []string{"--host", "example.com", "--host", "https://b.example"},
			func(c *crawler.Config) { c.Scope.Hosts = []string{"example.com", "https://b.example"} }},
		{"include", []string{"--include", "/docs/"}, func(c *crawler.Config) { c.Scope.Include = []string{"/docs/"} }},
		{"exclude", []string{"--exclude", `\.pdf$`, "--exclude", "/tmp/"},
			func(c *crawler.Config) { c.Scope.Exclude = []string{`\.pdf$`, "/tmp/"} }},
		{"mirror-links", []string{"--mirror-links", "relative"}, func(c *crawler.Config) { c.Output.MirrorLinks = "relative" }},
		{"urls", []string{"--urls", "urls.jsonl"}, func(c *crawler.Config) { c.Output.URLs = "urls.jsonl" }},
		{"out", []string{"--out", "-"}, func(c *crawler.Config) { c.Output.URLs = "-" }},
		{"links", []string{"--links", "links.jsonl"}, func(c *crawler.Config) { c.Output.Links = "links.jsonl" }},
		{"check-external", []string{"--check-external"}, func(c *crawler.Config) { c.Scope.CheckExternal = true }},
		{"mirror", []string{"--mirror", "m"}, func(c *crawler.Config) { c.Output.MirrorDir = "m" }},
		{"warc", []string{"--warc", "w"}, func(c *crawler.Config) { c.Output.WARC = "w" }},
		{"daemon", []string{"--daemon=false"}, func(c *crawler.Config) { c.Daemon.Enabled = false }},
		{"render", []string{"--render=false"}, func(c *crawler.Config) { c.Render.Enabled = false }},
		{"recrawl", []string{"--recrawl", "1h"}, func(c *crawler.Config) { c.Daemon.Recrawl = time.Hour }},
		{"listen", []string{"--listen", "127.0.0.1:0"}, func(c *crawler.Config) { c.Daemon.Listen = "127.0.0.1:0" }},
		{"log-format", []string{"--log-format", "json"}, func(c *crawler.Config) { c.Log.Format = "json" }},
		{"log-level", []string{"--log-level", "warn"}, func(c *crawler.Config) { c.Log.Level = "warn" }},
		{"", []string{"https://b.example/", "--workers", "2", "https://c.example/"}, func(c *crawler.Config) {
			c.Seeds = []string{"https://b.example/", "https://c.example/"} // arguments replace the file's seeds
			c.Fetch.Workers = 2
		}},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.flag] = true
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			got, err := parseConfigArgs(t, append([]string{"-c", file}, tt.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			want := crawler.DefaultConfig()
			want.Seeds = []string{"https://example.com/"}
			want.Sitemaps = []string{"https://example.com/s.xml"}
			want.Scope.Hosts, want.Scope.Include, want.Scope.Exclude = []string{"old.example"}, []string{"/old/"}, []string{"/old/x"}
			want.Fetch.Workers = 4
			want.Politeness.Delay = 2 * time.Second
			want.Daemon.Enabled = true
			tt.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("config:\n %+v\nwant\n %+v", got, want)
			}
		})
	}
	for name := range addConfigFlags(flag.NewFlagSet("x", flag.ContinueOnError)).keys {
		if !covered[name] {
			t.Errorf("no test case for --%s", name)
		}
	}
}

func TestConfigFlagsWithoutFile(t *testing.T) {
	got, err := parseConfigArgs(t, "--daemon", "--config=", "https://example.com/")
	if err != nil {
		t.Fatal(err)
	}
	want := crawler.DefaultConfig()
	want.Seeds = []string{"https://example.com/"}
	want.Daemon.Enabled = true
	if !reflect.DeepEqual(got, want) {
		t.Errorf("config:\n %+v\nwant\n %+v", got, want)
	}
}

func TestConfigFlagProblems(t *testing.T) {
	file := writeConfig(t, "seeds: [https://example.com/]\nfetch:\n  workers: 0\n  timeout: 0s\n")
	missing := filepath.Join(t.TempDir(), "none.yaml")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--delay", "fast"}, `crawl: invalid value "fast" for flag -delay: invalid duration "fast"`},
		{[]string{"--workers", "many"}, `crawl: invalid value "many" for flag -workers: want a whole number`},
		{[]string{"--max-body", "huge"}, `crawl: invalid value "huge" for flag -max-body: invalid size "huge"`},
		{[]string{"--include", "(", "https://example.com/"}, `--include: scope.include[0]: error parsing regexp`},
		{[]string{"--daemon=maybe"}, `crawl: invalid boolean value "maybe" for -daemon: want true or false`},
		{[]string{"-c", file, "--delay", "-1s", "--workers", "2"},
			"invalid config (2 problems):\n  " + file + ":4: fetch.timeout: must be > 0, got 0s\n  --delay: politeness.delay: must be ≥ 0, got -1s"},
		{[]string{"--log-format", "yaml", "https://example.com/"}, `--log-format: log.format: must be text or json, got "yaml"`},
		{[]string{"example.com"}, `command line: seeds[0]: must be an absolute http or https URL, got "example.com"`},
		{nil, `seeds: a crawl needs at least one seed or sitemap URL`},
		{[]string{"-c", missing}, "open " + missing + ": no such file"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, err := parseConfigArgs(t, tt.args...)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error:\n%v\nwant\n%s", err, tt.want)
			}
			if code := exitCode(err, io.Discard); code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
		})
	}
}

func TestConfigFlagsHelp(t *testing.T) {
	fs := flag.NewFlagSet("crawl", flag.ContinueOnError)
	addConfigFlags(fs)
	var out strings.Builder
	_, err := parseFlags(fs, []string{"-h"}, "crawl -c FILE [flags] [SEED_URL...]", &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{
		"-delay duration\n", "(overrides politeness.delay) (default 1s)",
		"-daemon\n", "-c FILE\n", "-sitemap URL\n", "(overrides fetch.workers) (default 16)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"", "abc", 3}, {"delay", "dealy", 2}, {"max_per_hots", "max_per_host", 2}, {"workers", "worker", 1}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func Example_loadConfig() {
	_, err := loadConfig("testdata/configs/bad_duration.yaml")
	exitCode(err, os.Stdout)
	// Output:
	// crawler: testdata/configs/bad_duration.yaml:3: politeness.delay: invalid duration "fast"
}

// FuzzDecodeConfig feeds arbitrary bytes to the config decoder: it must not
// panic, and every problem must say something.
func FuzzDecodeConfig(f *testing.F) {
	files, _ := filepath.Glob("testdata/configs/*.yaml")
	for _, file := range append(files, "../../config.example.yaml") {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(allKeysYAML))
	f.Add([]byte("a: &a [*a]\nseeds: *a\n"))
	f.Add([]byte("\xff\xfe\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, _, probs, _ := decodeConfig("f.yaml", data)
		for _, p := range probs {
			if p.msg == "" {
				t.Errorf("empty problem message: %+v", p)
			}
		}
		_ = cfg.Validate()
	})
}
