package crawler_test

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/crawler"
	"github.com/politecrawl/crawler/frontier"
)

func validConfig() crawler.Config {
	c := crawler.DefaultConfig()
	c.Seeds = []string{"https://example.com/"}
	return c
}

func TestDefaultConfig(t *testing.T) {
	c := crawler.DefaultConfig()
	// The defaults the README and config.example.yaml give.
	if c.Politeness.Delay != time.Second || c.Politeness.MaxPerHost != 1 || !c.Politeness.HonorCrawlDelay ||
		c.Fetch.Workers != 16 || c.Fetch.Timeout != 30*time.Second || c.Fetch.MaxBody != 10*crawler.MiB ||
		c.Fetch.MaxRedirects != 5 || c.Fetch.Retries != 3 || c.SitemapLimits.MaxURLs != 50000 ||
		c.SitemapLimits.MaxBytes != 10<<20 || c.SitemapLimits.MaxChildren != 1000 || c.StateDir != "./crawl-state" ||
		c.Output.MirrorLinks != "keep" || c.Daemon.Recrawl != 24*time.Hour || c.Daemon.Enabled ||
		c.Scope.MaxDepth != 0 || c.Scope.MaxPages != 0 || c.Daemon.MaxInterval != 0 {
		t.Errorf("DefaultConfig differs from the contract: %+v", c)
	}
	var ce *crawler.ConfigError
	if err := c.Validate(); !errors.As(err, &ce) || len(ce.Problems) != 1 || ce.Problems[0].Key != "seeds" {
		t.Errorf("DefaultConfig().Validate() = %v, want only the lack of seeds", err)
	}
	if err := validConfig().Validate(); err != nil {
		t.Errorf("defaults with a seed: %v", err)
	}
	c = crawler.DefaultConfig()
	c.Sitemaps = []string{"https://example.com/sitemap.xml"}
	if err := c.Validate(); err != nil {
		t.Errorf("defaults with a sitemap: %v", err)
	}
}

// TestValidateListsEveryProblem breaks every key at once.
func TestValidateListsEveryProblem(t *testing.T) {
	c := crawler.Config{
		UserAgent: "/1.0",
		Seeds:     []string{"https://example.com/", "example.com/", "http://[::1"},
		Sitemaps:  []string{"file:///etc/passwd"},
		Scope: crawler.ScopeConfig{
			Hosts:    []string{"example.com", "https://example.com/a"},
			MaxDepth: -1, MaxPages: -1,
			Include:      []string{"ok", "a(", "*"},
			Exclude:      []string{"[z-a]"},
			MaxURLLength: -1, MaxPathDepth: -1, MaxRepeatedSegments: -1, MaxPagesPerHost: -1,
			MaxQueryVariants: -1, MaxLinksPerPage: -1,
		},
		Politeness: crawler.PolitenessConfig{Delay: -time.Second, RetryAfterMax: -time.Minute},
		Fetch:      crawler.FetchConfig{MaxBody: -1, MaxRedirects: -1, Retries: -2},
		Output:     crawler.OutputConfig{MirrorLinks: "Keep"},
		Daemon:     crawler.DaemonConfig{Enabled: true, MaxInterval: -time.Hour, Listen: "localhost"},
		Log:        crawler.LogConfig{Format: "JSON", Level: "trace"},
	}
	want := []string{
		`user_agent: must start with a product token (letters, '-' or '_'), got "/1.0"`,
		`seeds[1]: must be an absolute http or https URL, got "example.com/"`,
		`seeds[2]: invalid URL "http://[::1": missing ']' in host`,
		`sitemaps[0]: must be an absolute http or https URL, got "file:///etc/passwd"`,
		`sitemap_limits.max_urls: must be ≥ 1, got 0`,
		`sitemap_limits.max_bytes: must be > 0, got 0B`,
		`sitemap_limits.max_children: must be ≥ 1, got 0`,
		`state_dir: must not be empty`,
		`scope.hosts[1]: must be an origin (https://host[:port]) or a host[:port], got "https://example.com/a"`,
		`scope.max_depth: must be ≥ 0, got -1`,
		`scope.max_pages: must be ≥ 0, got -1`,
		"scope.include[1]: error parsing regexp: missing closing ): `a(`",
		"scope.include[2]: error parsing regexp: missing argument to repetition operator: `*`",
		"scope.exclude[0]: error parsing regexp: invalid character class range: `z-a`",
		`scope.max_url_length: must be from 0 (the default, 2048) to 16384, got -1`,
		`scope.max_path_depth: must be ≥ 0, got -1`,
		`scope.max_repeated_segments: must be ≥ 0, got -1`,
		`scope.max_pages_per_host: must be ≥ 0, got -1`,
		`scope.max_query_variants: must be ≥ 0, got -1`,
		`scope.max_links_per_page: must be ≥ 0, got -1`,
		`politeness.delay: must be ≥ 0, got -1s`,
		`politeness.max_per_host: must be ≥ 1, got 0`,
		`politeness.retry_after_max: must be > 0, got -1m`,
		`politeness.max_delay: must be > 0, got 0s`,
		`fetch.workers: must be ≥ 1, got 0`,
		`fetch.timeout: must be > 0, got 0s`,
		`fetch.max_body: must be > 0, got -1B`,
		`fetch.max_redirects: must be ≥ 0, got -1`,
		`fetch.retries: must be ≥ 0, got -2`,
		`output.mirror_links: must be keep or relative, got "Keep"`,
		`output.warc_max_size: must be > 0, got 0B`,
		`daemon.recrawl: must be > 0 when daemon.enabled is true, got 0s`,
		`daemon.max_interval: must be 0 or ≥ daemon.recrawl (0s), got -1h`,
		`daemon.listen: must be host:port (e.g. 127.0.0.1:9090), got "localhost"`,
		`render.tabs: must be ≥ 1, got 0`,
		`render.timeout: must be > 0, got 0s`,
		`render.settle: must be > 0, got 0s`,
		`log.format: must be text or json, got "JSON"`,
		`log.level: must be debug, info, warn or error, got "trace"`,
	}
	err := c.Validate()
	var ce *crawler.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("Validate() = %v, want a *ConfigError", err)
	}
	var got []string
	for _, p := range ce.Problems {
		got = append(got, p.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err.Error() != strings.Join(want, "\n") {
		t.Errorf("Error() is not one problem per line:\n%s", err)
	}
	// Every key named is a key of the YAML.
	keys := yamlKeys(reflect.TypeFor[crawler.Config](), "")
	for _, p := range ce.Problems {
		k, _, _ := strings.Cut(p.Key, "[")
		if !keys[k] {
			t.Errorf("problem names %q, which is no YAML key", p.Key)
		}
	}
}

// yamlKeys lists the keys of t's yaml tags, with the sections.
func yamlKeys(t reflect.Type, prefix string) map[string]bool {
	keys := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		keys[prefix+name] = true
		if f.Type.Kind() == reflect.Struct {
			for k := range yamlKeys(f.Type, prefix+name+".") {
				keys[k] = true
			}
		}
	}
	return keys
}

func TestValidateValues(t *testing.T) {
	tests := []struct {
		name    string
		change  func(c *crawler.Config)
		problem string // "" for valid
	}{
		{"empty user agent", func(c *crawler.Config) { c.UserAgent = "" }, "user_agent: must not be empty"},
		{"newline in user agent", func(c *crawler.Config) { c.UserAgent = "Bot/1\r\nX: y" }, `user_agent: must not hold control characters, got "Bot/1\r\nX: y"`},
		{"bare token", func(c *crawler.Config) { c.UserAgent = "my_bot-2" }, ""},
		{"http seed", func(c *crawler.Config) { c.Seeds = []string{"HTTP://127.0.0.2:8001/a?b#c"} }, ""},
		{"seed without host", func(c *crawler.Config) { c.Seeds = []string{"https:///a"} }, `seeds[0]: must be an absolute http or https URL, got "https:///a"`},
		{"seed with password", func(c *crawler.Config) { c.Seeds = []string{"http://user:pw@127.0.0.1/"} }, `seeds[0]: must not hold a user name or password (user:password@), got "http://user:xxxxx@127.0.0.1/"`},
		{"sitemap with user", func(c *crawler.Config) { c.Sitemaps = []string{"https://u@example.com/s.xml"} }, `sitemaps[0]: must not hold a user name or password (user:password@), got "https://u@example.com/s.xml"`},
		{"max url length at its limit", func(c *crawler.Config) { c.Scope.MaxURLLength = crawler.MaxURLLengthLimit }, ""},
		{"max url length above its limit", func(c *crawler.Config) { c.Scope.MaxURLLength = 1 << 20 }, "scope.max_url_length: must be from 0 (the default, 2048) to 16384, got 1048576"},
		{"seed with port only", func(c *crawler.Config) { c.Seeds = []string{"http://:80/"} }, `seeds[0]: must be an absolute http or https URL, got "http://:80/"`},
		{"origin host", func(c *crawler.Config) { c.Scope.Hosts = []string{"https://example.com", "http://127.0.0.2:8001/"} }, ""},
		{"bare hosts", func(c *crawler.Config) {
			c.Scope.Hosts = []string{"example.com", "127.0.0.3:8001", "[::1]:80", "bücher.example", "a_b.example"}
		}, ""},
		{"wildcard host", func(c *crawler.Config) { c.Scope.Hosts = []string{"*.example.com"} }, `scope.hosts[0]: must be an origin (https://host[:port]) or a host[:port], got "*.example.com"`},
		{"host with query", func(c *crawler.Config) { c.Scope.Hosts = []string{"https://example.com/?a"} }, `scope.hosts[0]: must be an origin (https://host[:port]) or a host[:port], got "https://example.com/?a"`},
		{"host with user", func(c *crawler.Config) { c.Scope.Hosts = []string{"https://u@example.com"} }, `scope.hosts[0]: must be an origin (https://host[:port]) or a host[:port], got "https://u@example.com"`},
		{"host with bad port", func(c *crawler.Config) { c.Scope.Hosts = []string{"example.com:99999"} }, `scope.hosts[0]: must be an origin (https://host[:port]) or a host[:port], got "example.com:99999"`},
		{"host with empty port", func(c *crawler.Config) { c.Scope.Hosts = []string{"example.com:"} }, `scope.hosts[0]: must be an origin (https://host[:port]) or a host[:port], got "example.com:"`},
		{"ftp origin", func(c *crawler.Config) { c.Scope.Hosts = []string{"ftp://example.com"} }, `scope.hosts[0]: must be an origin (https://host[:port]) or a host[:port], got "ftp://example.com"`},
		{"zero delay", func(c *crawler.Config) { c.Politeness.Delay = 0 }, ""},
		{"daemon off, recrawl 0", func(c *crawler.Config) { c.Daemon.Recrawl = 0 }, ""},
		{"max interval equal", func(c *crawler.Config) { c.Daemon.MaxInterval = 24 * time.Hour }, ""},
		{"max interval short", func(c *crawler.Config) { c.Daemon.MaxInterval = time.Hour }, "daemon.max_interval: must be 0 or ≥ daemon.recrawl (24h), got 1h"},
		{"listen any", func(c *crawler.Config) { c.Daemon.Listen = ":9090" }, ""},
		{"listen v6", func(c *crawler.Config) { c.Daemon.Listen = "[::1]:0" }, ""},
		{"listen name port", func(c *crawler.Config) { c.Daemon.Listen = "localhost:http" }, `daemon.listen: must be host:port (e.g. 127.0.0.1:9090), got "localhost:http"`},
		{"listen big port", func(c *crawler.Config) { c.Daemon.Listen = "127.0.0.1:65536" }, `daemon.listen: must be host:port (e.g. 127.0.0.1:9090), got "127.0.0.1:65536"`},
		{"relative mirror", func(c *crawler.Config) { c.Output.MirrorLinks = crawler.MirrorLinksRelative }, ""},
		{"blank state dir", func(c *crawler.Config) { c.StateDir = "  " }, "state_dir: must not be empty"},
		{"requisites same", func(c *crawler.Config) { c.Scope.Requisites = crawler.Requisites{"same"} }, ""},
		{"requisites none", func(c *crawler.Config) { c.Scope.Requisites = nil }, ""},
		{"requisites patterns", func(c *crawler.Config) {
			c.Scope.Requisites = crawler.Requisites{"*.example-cdn.net", "static.example.com:8080", "https://fonts.example.org", "localhost"}
		}, ""},
		{"requisites misspelt", func(c *crawler.Config) { c.Scope.Requisites = crawler.Requisites{"anyy"} },
			`scope.requisites[0]: want a host[:port], *.domain or an origin (https://host[:port]), got "anyy": a host name with no dot; write "any" or "same" alone, or an origin (http://anyy)`},
		{"requisites any in a list", func(c *crawler.Config) { c.Scope.Requisites = crawler.Requisites{"cdn.example.net", "any"} },
			`scope.requisites[1]: "any" stands alone (scope.requisites: any), not in a list of patterns`},
		{"requisites with a path", func(c *crawler.Config) { c.Scope.Requisites = crawler.Requisites{"https://cdn.example.net/js"} },
			`scope.requisites[0]: want a host[:port], *.domain or an origin (https://host[:port]), got "https://cdn.example.net/js": a pattern names a host, with no path, user or other wildcard`},
		{"report accept", func(c *crawler.Config) { c.Report.Accept = []string{"100", "403", "999"} }, ""},
		{"report accept no status", func(c *crawler.Config) { c.Report.Accept = []string{"403", "1000", "x"} },
			`report.accept[1]: want an HTTP status (100 to 999), got "1000"` + "\n" + `report.accept[2]: want an HTTP status (100 to 999), got "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.change(&c)
			err := c.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.problem {
				t.Errorf("Validate() = %q, want %q", got, tt.problem)
			}
		})
	}
}

func TestProductToken(t *testing.T) {
	for ua, want := range map[string]string{
		"ExampleBot/1.0 (+https://example.com/bot)": "ExampleBot",
		"politecrawl/1.0": "politecrawl",
		"my_bot-2":        "my_bot-",
		"Googlebot":       "Googlebot",
		"1bot":            "",
		"":                "",
	} {
		if got := crawler.ProductToken(ua); got != want {
			t.Errorf("ProductToken(%q) = %q, want %q", ua, got, want)
		}
	}
}

func TestRevisitMax(t *testing.T) {
	d := crawler.DaemonConfig{Recrawl: time.Hour}
	if got := d.RevisitMax(); got != 2*time.Hour {
		t.Errorf("RevisitMax with max_interval 0 = %v, want 2h", got)
	}
	d.MaxInterval = 5 * time.Hour
	if got := d.RevisitMax(); got != 5*time.Hour {
		t.Errorf("RevisitMax = %v, want 5h", got)
	}
}

func TestParseByteSize(t *testing.T) {
	tests := []struct {
		in   string
		want crawler.ByteSize
		err  string
	}{
		{"0", 0, ""},
		{"10485760", 10 << 20, ""},
		{"10MiB", 10 << 20, ""},
		{"10 MiB", 10 << 20, ""},
		{" 10mib ", 10 << 20, ""},
		{"10MB", 10e6, ""},
		{"1KB", 1000, ""},
		{"1kib", 1024, ""},
		{"512B", 512, ""},
		{"1GiB", 1 << 30, ""},
		{"2TB", 2e12, ""},
		{"1TiB", 1 << 40, ""},
		{"1.5GiB", 3 << 29, ""},
		{".5KiB", 512, ""},
		{"1.0001KB", 1000, ""},
		{"8EiB", 0, `invalid size "8EiB": unknown unit "EiB" (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)`},
		{"9223372036854775807", 1<<63 - 1, ""},
		{"9223372036854775808", 0, `invalid size "9223372036854775808": too large`},
		{"8388608TiB", 0, `invalid size "8388608TiB": too large`},
		{"8388608.5TiB", 0, `invalid size "8388608.5TiB": too large`},
		{"8388607.5TiB", 8388607.5 * (1 << 40), ""},
		{"-1", 0, `invalid size "-1": must not be negative`},
		{"-1MiB", 0, `invalid size "-1MiB": must not be negative`},
		{"", 0, `invalid size "": want a number of bytes or a number with a unit, such as 10MiB`},
		{"MiB", 0, `invalid size "MiB": want a number of bytes or a number with a unit, such as 10MiB`},
		{"1.5", 0, `invalid size "1.5": not a whole number of bytes`},
		{"1.5B", 0, `invalid size "1.5B": not a whole number of bytes`},
		{"1..5MiB", 0, `invalid size "1..5MiB": want a number of bytes or a number with a unit, such as 10MiB`},
		{"1e3", 0, `invalid size "1e3": unknown unit "e3" (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)`},
		{"0x10", 0, `invalid size "0x10": unknown unit "x10" (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)`},
		{"+5", 0, `invalid size "+5": want a number of bytes or a number with a unit, such as 10MiB`},
	}
	for _, tt := range tests {
		got, err := crawler.ParseByteSize(tt.in)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if got != tt.want || msg != tt.err {
			t.Errorf("ParseByteSize(%q) = %d, %q; want %d, %q", tt.in, got, msg, tt.want, tt.err)
		}
	}
}

func TestByteSizeString(t *testing.T) {
	for size, want := range map[crawler.ByteSize]string{
		0: "0B", 1: "1B", 1000: "1000B", 1024: "1KiB", 1536: "1536B", 10 << 20: "10MiB",
		1 << 30: "1GiB", 3 << 40: "3TiB", 1<<63 - 1: "9223372036854775807B", -2048: "-2KiB",
	} {
		if got := size.String(); got != want {
			t.Errorf("ByteSize(%d).String() = %q, want %q", int64(size), got, want)
		}
	}
	var b crawler.ByteSize
	if err := b.UnmarshalText([]byte("2KiB")); err != nil || b != 2048 {
		t.Errorf("UnmarshalText(2KiB) = %v, %d", err, b)
	}
	if err := b.UnmarshalText([]byte("lots")); err == nil || b != 2048 {
		t.Errorf("UnmarshalText(lots) = %v and left %d", err, b)
	}
	if text, err := b.MarshalText(); err != nil || string(text) != "2KiB" {
		t.Errorf("MarshalText = %q, %v", text, err)
	}
}

// FuzzParseByteSize: no panic, no negative size, and String reads back.
func FuzzParseByteSize(f *testing.F) {
	for _, s := range []string{"0", "10MiB", "1.5 GB", "-1", "9223372036854775807", "8388607.99TiB", ".", "1e9KB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := crawler.ParseByteSize(s)
		if err != nil {
			return
		}
		if b < 0 {
			t.Fatalf("ParseByteSize(%q) = %d, negative", s, b)
		}
		if back, err := crawler.ParseByteSize(b.String()); err != nil || back != b {
			t.Fatalf("ParseByteSize(%q) = %d; its String %q reads back as %d, %v", s, b, b.String(), back, err)
		}
	})
}

func ExampleConfig_Validate() {
	c := crawler.DefaultConfig()
	c.Seeds = []string{"https://example.com/", "example.org"}
	c.Politeness.Delay = -time.Second
	c.Scope.Include = []string{`^https://example\.com/docs/`, `(`}
	var ce *crawler.ConfigError
	if err := c.Validate(); errors.As(err, &ce) {
		for _, p := range ce.Problems {
			fmt.Println(p)
		}
	}
	// Output:
	// seeds[1]: must be an absolute http or https URL, got "example.org"
	// scope.include[1]: error parsing regexp: missing closing ): `(`
	// politeness.delay: must be ≥ 0, got -1s
}

func ExampleParseByteSize() {
	for _, s := range []string{"10MiB", "10MB", "1.5GiB", "4096"} {
		b, _ := crawler.ParseByteSize(s)
		fmt.Println(s, int64(b), b)
	}
	// Output:
	// 10MiB 10485760 10MiB
	// 10MB 10000000 10000000B
	// 1.5GiB 1610612736 1536MiB
	// 4096 4096 4KiB
}

// scope.max_url_length: 0 is the default length, as documented, in the
// engine's hands too (it passes the key to frontier.Canonicalize).
func TestMaxURLLengthZeroIsTheDefault(t *testing.T) {
	if got := crawler.DefaultConfig().Scope.MaxURLLength; got != frontier.DefaultMaxURLLength {
		t.Errorf("default max_url_length %d, want %d", got, frontier.DefaultMaxURLLength)
	}
	c := validConfig()
	c.Scope.MaxURLLength = 0
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	base := "http://127.0.0.1/"
	fits := base + strings.Repeat("a", frontier.DefaultMaxURLLength-len(base))
	if _, err := frontier.Canonicalize(fits, c.Scope.MaxURLLength); err != nil {
		t.Errorf("a URL of the default length: %v", err)
	}
	if _, err := frontier.Canonicalize(fits+"a", c.Scope.MaxURLLength); err == nil {
		t.Error("a URL one byte over the default length is accepted with max_url_length: 0")
	}
}
