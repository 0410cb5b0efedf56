package crawler

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/frontier/cluster"
	"github.com/politecrawl/crawler/storage/reach"
	"github.com/politecrawl/crawler/storage/report"
)

// MaxURLLengthLimit is the largest scope.max_url_length: a URL is a key of
// the state database, whose keys hold at most 32 KiB, and nothing on the
// web needs more than this.
const MaxURLLengthLimit = 16 << 10

// Config is everything a crawl is told: the keys of the YAML config file
// (config.example.yaml documents every one), whose names the yaml tags give. The
// zero Config is not usable: start from DefaultConfig, change what you need,
// and call Validate. The command line builds one in this order: DefaultConfig,
// then the YAML file, then the flags given, then the seed URLs given as
// arguments, then Validate; so Validate judges the merged result.
//
// A Config holds no state of its own and may be copied freely; its slices
// are shared by copies.
type Config struct {
	// UserAgent is sent with every request. Robots.txt groups are matched on
	// its product token, the leading run of letters, '-' and '_' (see
	// ProductToken): "ExampleBot/1.0 (+https://example.com/bot)" is ExampleBot.
	UserAgent string `yaml:"user_agent"`
	// Seeds are the URLs the crawl starts from, at depth 0.
	Seeds []string `yaml:"seeds"`
	// Sitemaps are sitemap or sitemap-index URLs whose pages are fetched at
	// depth 0. The Sitemap: lines of each robots.txt are added automatically.
	Sitemaps []string `yaml:"sitemaps"`
	// SitemapLimits bound each sitemap file.
	SitemapLimits SitemapLimits `yaml:"sitemap_limits"`
	// StateDir holds the bbolt database and anything else the crawl must keep
	// to resume.
	StateDir string `yaml:"state_dir"`
	// Scope decides which URLs may enter the frontier.
	Scope ScopeConfig `yaml:"scope"`
	// Politeness decides how hard one host may be asked.
	Politeness PolitenessConfig `yaml:"politeness"`
	// Fetch tunes the HTTP requests.
	Fetch FetchConfig `yaml:"fetch"`
	// Links decides which links of a page are followed.
	Links LinksConfig `yaml:"links"`
	// Output says where results go.
	Output OutputConfig `yaml:"output"`
	// Daemon makes the crawl run until stopped and revisit on schedule.
	Daemon DaemonConfig `yaml:"daemon"`
	// Log sets the format and level of the log on stderr.
	Log LogConfig `yaml:"log"`
	// Cluster makes several workers one crawl (README, "Several
	// machines"); without a NATS URL the crawl is this process's alone.
	Cluster cluster.Config `yaml:"cluster"`
	// Report is how `crawler report` judges the crawl (README, "The
	// audit's verdicts and CI").
	Report report.Config `yaml:"report"`
	// Extract are custom extractions run on every 200 HTML page, into the
	// inventory's extracted.
	Extract []ExtractConfig `yaml:"extract"`
	// Render renders HTML pages in a headless browser and follows the
	// links of the rendered page too (README, "Rendering").
	Render RenderConfig `yaml:"render"`
}

// RenderConfig is render: which pages are rendered in a headless
// Chromium, and how (README, "Rendering").
type RenderConfig struct {
	// Enabled renders every 2xx HTML page the crawl fetches (its
	// requisites aside) and takes links from the rendered page too.
	Enabled bool `yaml:"enabled"`
	// Browser is the path of Chromium or Chrome; "" looks for chromium,
	// chromium-browser, google-chrome in PATH.
	Browser string `yaml:"browser"`
	// Tabs is the most pages rendered at once.
	Tabs int `yaml:"tabs"`
	// Timeout bounds one page, from its load to its being settled.
	Timeout time.Duration `yaml:"timeout"`
	// Settle is how long no request must be in flight (after the load)
	// for a page to count as rendered.
	Settle time.Duration `yaml:"settle"`
}

// SitemapLimits bound each sitemap file, as the sitemaps.org protocol does.
type SitemapLimits struct {
	// MaxURLs is the most entries read from one file; the rest are dropped
	// with a warning.
	MaxURLs int `yaml:"max_urls"`
	// MaxBytes is the most bytes read from one file after decompression.
	MaxBytes ByteSize `yaml:"max_bytes"`
	// MaxChildren is the most sitemaps read from one sitemap index.
	MaxChildren int `yaml:"max_children"`
}

// ScopeConfig decides which URLs may enter the frontier. A URL is in scope
// when its origin is one of Hosts, it matches one of Include (or Include is
// empty), it matches none of Exclude, and it passes the trap guards. The
// seeds and the sitemaps the config names are taken as given: only their
// hosts are checked.
type ScopeConfig struct {
	// Hosts are the origins that may be fetched. Each entry is an origin
	// ("https://example.com", "http://127.0.0.2:8001"; a path of "/" is
	// allowed, no other) or a bare host[:port] ("example.com",
	// "127.0.0.2:8001"), which means that host over both http and https, on
	// the given port or on each scheme's default port. Empty means the
	// origins of the seeds and sitemaps.
	Hosts []string `yaml:"hosts"`
	// MaxDepth is the most link hops from a seed or sitemap URL; 0 means
	// unlimited.
	MaxDepth int `yaml:"max_depth"`
	// MaxPages is the most pages fetched in all; 0 means unlimited.
	MaxPages int `yaml:"max_pages"`
	// Include are regular expressions (RE2 syntax, unanchored) matched
	// against the absolute URL; when any are given a URL must match one.
	Include []string `yaml:"include"`
	// Exclude are regular expressions like Include; a URL matching any of
	// them is out of scope.
	Exclude []string `yaml:"exclude"`
	// MaxURLLength is a trap guard: longer URLs (in bytes) are out of scope;
	// 0 means the default, 2048 (frontier.DefaultMaxURLLength). It is at
	// most MaxURLLengthLimit: URLs are keys of the state database.
	MaxURLLength int `yaml:"max_url_length"`
	// MaxPathDepth is a trap guard: URLs with more path segments are out of
	// scope; 0 means no limit.
	MaxPathDepth int `yaml:"max_path_depth"`
	// MaxRepeatedSegments is a trap guard: a URL whose path holds one
	// segment more often than this (/a/b/a/b/a/b/a) is out of scope;
	// 0 means no limit.
	MaxRepeatedSegments int `yaml:"max_repeated_segments"`
	// MaxPagesPerHost is a trap guard: the most pages fetched from one host;
	// 0 means unlimited.
	MaxPagesPerHost int `yaml:"max_pages_per_host"`
	// MaxQueryVariants is a trap guard: the most distinct query strings
	// one path (of one origin) is queued with (calendars, session ids,
	// faceted search); a URL with a further one is out of scope. 0 means
	// no limit. The count lives in memory, bounded (see scope.go), and
	// starts again when the crawl restarts or its config is reloaded.
	MaxQueryVariants int `yaml:"max_query_variants"`
	// MaxLinksPerPage is a trap guard: the most references (links and
	// requisites, in document order) read from one page or stylesheet;
	// the rest are counted in its record's links_cut, neither followed nor
	// written to the link graph. It bounds the memory one page costs,
	// whatever its size holds. 0 means no limit.
	MaxLinksPerPage int `yaml:"max_links_per_page"`
	// CheckExternal asks each link to a host out of scope once, politely
	// (its robots.txt and delay), following nothing there, so that a
	// broken external link is found (README, "What it promises").
	CheckExternal bool `yaml:"check_external"`
	// Requisites says which hosts out of Hosts a page's requisites
	// (images, stylesheets, scripts, fonts, media) are fetched from when
	// a mirror or a WARC is kept: RequisitesAny (the default),
	// RequisitesSame, or host and origin patterns (see Requisites). They
	// are fetched as politely as any request, never crawled from, and
	// count toward no page budget (README, "Whole sites").
	Requisites Requisites `yaml:"requisites"`
}

// PolitenessConfig decides how hard one host (origin) may be asked. It
// covers every request: robots.txt, sitemaps, redirect hops and retries.
type PolitenessConfig struct {
	// Delay is the least time between the starts of two requests to one host.
	Delay time.Duration `yaml:"delay"`
	// MaxPerHost is the most requests in flight to one host at once.
	MaxPerHost int `yaml:"max_per_host"`
	// HonorCrawlDelay makes a robots.txt Crawl-delay larger than Delay win.
	HonorCrawlDelay bool `yaml:"honor_crawl_delay"`
	// RetryAfterMax is the give-up: a host that asks (by Retry-After, or by
	// failing again and again) to be left alone for longer is parked and
	// reported instead of waited for.
	RetryAfterMax time.Duration `yaml:"retry_after_max"`
	// RobotsLastWait bounds how long an ad hoc crawl with nothing else
	// left waits for a robots.txt that answers 429 or 5xx, or cannot be
	// reached (RFC 9309 §2.3.1.3–4: nothing else of the host is fetched
	// meanwhile). Until then it is asked again on its backoff; then once
	// more, when the server's Retry-After allows within this wait; then
	// the host's URLs are recorded as not fetched and the crawl ends. A
	// daemon keeps asking on the backoff.
	RobotsLastWait time.Duration `yaml:"robots_last_wait"`
	// DelayFactor, when above 0, makes a host wait after each answer at
	// least this many times as long as the answer took, up to MaxDelay
	// (Heritrix's delay factor): a server that slows down is asked less
	// often. 0 is off.
	DelayFactor float64 `yaml:"delay_factor"`
	// MaxDelay bounds the wait DelayFactor asks for.
	MaxDelay time.Duration `yaml:"max_delay"`
	// MaxBytesPerSecond caps the body bytes received from one host per
	// second, robots.txt and sitemaps included; 0 is no cap.
	MaxBytesPerSecond ByteSize `yaml:"max_bytes_per_second"`
}

// FetchConfig tunes the HTTP requests.
type FetchConfig struct {
	// Workers is the most requests in flight in all.
	Workers int `yaml:"workers"`
	// Timeout bounds one request, from connecting to the end of the body.
	Timeout time.Duration `yaml:"timeout"`
	// MaxBody is the most bytes of a body read, after decompression.
	MaxBody ByteSize `yaml:"max_body"`
	// MaxRedirects is the most redirect hops followed from one URL.
	MaxRedirects int `yaml:"max_redirects"`
	// Retries is how often a 5xx or 429 answer or a network error is
	// retried, each time on the URL's own backoff (README, "Failures are
	// retried without stalling the host").
	Retries int `yaml:"retries"`
	// Proxy is the http, https or socks5 proxy every request goes
	// through; empty means the environment's HTTPS_PROXY, HTTP_PROXY and
	// NO_PROXY, as curl and wget read them (Options.Getenv).
	Proxy string `yaml:"proxy"`
	// CAFile is a PEM file of certificates trusted besides the system's,
	// for internal and staging sites.
	CAFile string `yaml:"ca_file"`
	// Auth gives HTTP basic auth credentials to origins: each is sent
	// only to its origin, never across a redirect to another one.
	Auth []AuthConfig `yaml:"auth"`
}

// AuthConfig is one origin's basic auth. The password lives in a file
// (as a secret mounted by systemd or Kubernetes does), so that the config
// can be shown; it is never logged or written to an output.
type AuthConfig struct {
	// Origin is scheme://host[:port], as requests to it are made.
	Origin string `yaml:"origin"`
	// User is the user name.
	User string `yaml:"user"`
	// PasswordFile holds the password: its first line, the line end
	// dropped.
	PasswordFile string `yaml:"password_file"`
}

// LinksConfig decides which links of a page are followed.
type LinksConfig struct {
	// HonorNofollow skips links marked rel=nofollow.
	HonorNofollow bool `yaml:"honor_nofollow"`
	// HonorMetaRobots obeys <meta name=robots> and X-Robots-Tag: nofollow
	// skips the page's links.
	HonorMetaRobots bool `yaml:"honor_meta_robots"`
}

// The values of OutputConfig.MirrorLinks.
const (
	MirrorLinksKeep     = "keep"     // links in mirrored pages are left as they are
	MirrorLinksRelative = "relative" // links are rewritten to browse the mirror offline
)

// OutputConfig says where results go. An empty path means no such output.
type OutputConfig struct {
	// URLs is the JSON Lines inventory of every URL seen; "-" is stdout.
	URLs string `yaml:"urls"`
	// Links is the JSON Lines link graph: one line per link found on a
	// fetched page, followed or not; "-" is stdout.
	Links string `yaml:"links"`
	// MirrorDir receives a browsable mirror of fetched pages as files.
	MirrorDir string `yaml:"mirror_dir"`
	// MirrorLinks is MirrorLinksKeep or MirrorLinksRelative.
	MirrorLinks string `yaml:"mirror_links"`
	// WARC is a directory of WARC 1.1 files (gzip per record).
	WARC string `yaml:"warc"`
	// WARCMaxSize is the size past which a new WARC file is started.
	WARCMaxSize ByteSize `yaml:"warc_max_size"`
}

// DaemonConfig makes the crawl run until stopped and revisit on schedule.
type DaemonConfig struct {
	// Enabled runs until SIGTERM or SIGINT, re-crawling on schedule.
	Enabled bool `yaml:"enabled"`
	// Recrawl is how long after a visit a URL (sitemaps too) is due again.
	Recrawl time.Duration `yaml:"recrawl"`
	// MaxInterval is how far adaptive revisits may stretch; 0 means
	// 2 × Recrawl (see RevisitMax).
	MaxInterval time.Duration `yaml:"max_interval"`
	// KeepGone keeps pages that now answer 404 or 410 in the mirror.
	KeepGone bool `yaml:"keep_gone"`
	// Listen is the host:port serving /metrics, /healthz and /hosts; empty
	// means none.
	Listen string `yaml:"listen"`
	// WebConfig is a Prometheus exporter-toolkit web configuration file
	// (TLS, basic auth) protecting Listen; empty serves plain HTTP.
	WebConfig string `yaml:"web_config"`
}

// RevisitMax is how far adaptive revisits may stretch: MaxInterval, or
// 2 × Recrawl when MaxInterval is 0.
func (d DaemonConfig) RevisitMax() time.Duration {
	if d.MaxInterval == 0 {
		return 2 * d.Recrawl
	}
	return d.MaxInterval
}

// LogConfig sets the log on stderr.
type LogConfig struct {
	// Format is "text" or "json".
	Format string `yaml:"format"`
	// Level is "debug", "info", "warn" or "error".
	Level string `yaml:"level"`
}

// DefaultConfig returns the defaults of every key, as the README and
// config.example.yaml give them. It has no seeds, so it does not validate
// until some are added.
func DefaultConfig() Config {
	return Config{
		UserAgent: "politecrawl/1.0 (+https://github.com/politecrawl/crawler)",
		SitemapLimits: SitemapLimits{
			MaxURLs:     50000,
			MaxBytes:    10 * MiB,
			MaxChildren: 1000,
		},
		StateDir: "./crawl-state",
		Scope: ScopeConfig{
			MaxURLLength:        2048,
			MaxPathDepth:        32,
			MaxRepeatedSegments: 3,
			MaxQueryVariants:    1000,
			Requisites:          Requisites{RequisitesAny},
			MaxLinksPerPage:     10_000,
		},
		Politeness: PolitenessConfig{
			Delay:           time.Second,
			MaxPerHost:      1,
			HonorCrawlDelay: true,
			RetryAfterMax:   time.Hour,
			RobotsLastWait:  30 * time.Second,
			MaxDelay:        30 * time.Second,
		},
		Fetch: FetchConfig{
			Workers:      16,
			Timeout:      30 * time.Second,
			MaxBody:      10 * MiB,
			MaxRedirects: 5,
			Retries:      3,
		},
		Links:   LinksConfig{HonorNofollow: true, HonorMetaRobots: true},
		Output:  OutputConfig{MirrorLinks: MirrorLinksKeep, WARCMaxSize: GiB},
		Daemon:  DaemonConfig{Recrawl: 24 * time.Hour},
		Log:     LogConfig{Format: "text", Level: "info"},
		Cluster: cluster.DefaultConfig(),
		Report:  report.DefaultConfig(),
		Render:  RenderConfig{Tabs: 2, Timeout: 20 * time.Second, Settle: 500 * time.Millisecond},
	}
}

// Problem is one thing wrong with a Config: the key at fault, as written in
// YAML ("politeness.delay", "scope.include[2]" for a list item), and what is
// wrong with it.
type Problem struct {
	Key     string // the key at fault, as written in YAML
	Message string // what is wrong, and the value found
}

// String writes the problem as "key: message".
func (p Problem) String() string { return p.Key + ": " + p.Message }

// ConfigError is what Validate returns: every problem found, in the order of
// the keys. Its message has one problem per line.
type ConfigError struct {
	Problems []Problem
}

// Error lists the problems, one "key: message" per line.
func (e *ConfigError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// configCheck collects the problems Validate finds.
type configCheck []Problem

func (c *configCheck) addf(key, format string, a ...any) {
	*c = append(*c, Problem{Key: key, Message: fmt.Sprintf(format, a...)})
}

func (c *configCheck) atLeast(key string, v, least int) {
	if v < least {
		c.addf(key, "must be ≥ %d, got %d", least, v)
	}
}

func (c *configCheck) positiveSize(key string, v ByteSize) {
	if v <= 0 {
		c.addf(key, "must be > 0, got %v", v)
	}
}

// Validate reports every problem of c, each naming its key, as a
// *ConfigError; it returns nil when c is fit to crawl with. Call it after
// every source (file, flags, arguments) is merged: a crawl needs at least one
// seed or sitemap, and a config file alone may lack them. It reads the files
// the config names (fetch.ca_file, fetch.auth's password files), looks for
// the browser when render.enabled, and contacts nothing.
func (c Config) Validate() error {
	var ck configCheck
	ck.userAgent(c.UserAgent)
	for i, s := range c.Seeds {
		ck.httpURL(fmt.Sprintf("seeds[%d]", i), s)
	}
	for i, s := range c.Sitemaps {
		ck.httpURL(fmt.Sprintf("sitemaps[%d]", i), s)
	}
	if len(c.Seeds) == 0 && len(c.Sitemaps) == 0 {
		ck.addf("seeds", "a crawl needs at least one seed or sitemap URL")
	}
	ck.atLeast("sitemap_limits.max_urls", c.SitemapLimits.MaxURLs, 1)
	ck.positiveSize("sitemap_limits.max_bytes", c.SitemapLimits.MaxBytes)
	ck.atLeast("sitemap_limits.max_children", c.SitemapLimits.MaxChildren, 1)
	if strings.TrimSpace(c.StateDir) == "" {
		ck.addf("state_dir", "must not be empty")
	}
	ck.scope(c.Scope)
	ck.politeness(c.Politeness)
	ck.fetch(c.Fetch)
	ck.output(c.Output)
	ck.daemon(c.Daemon)
	ck.report(c.Report)
	ck.extract(c.Extract)
	ck.render(c.Render)
	ck.oneOf("log.format", c.Log.Format, "text", "json")
	ck.oneOf("log.level", c.Log.Level, "debug", "info", "warn", "error")
	var cerr *cluster.ConfigError
	if errors.As(c.Cluster.Validate(), &cerr) {
		for _, p := range cerr.Problems {
			ck.addf(p.Key, "%s", p.Message)
		}
	}
	if len(ck) == 0 {
		return nil
	}
	return &ConfigError{Problems: ck}
}

// ProductToken returns the product token of a User-Agent string: its leading
// run of ASCII letters, '-' and '_', the name robots.txt groups are matched
// on (RFC 9309, section 2.2.1). It is empty when the string starts otherwise.
func ProductToken(userAgent string) string {
	end := strings.IndexFunc(userAgent, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || r == '-' || r == '_')
	})
	if end < 0 {
		return userAgent
	}
	return userAgent[:end]
}

func (c *configCheck) userAgent(ua string) {
	switch {
	case ua == "":
		c.addf("user_agent", "must not be empty")
	case strings.ContainsFunc(ua, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }):
		c.addf("user_agent", "must not hold control characters, got %q", ua)
	case ProductToken(ua) == "":
		c.addf("user_agent", "must start with a product token (letters, '-' or '_'), got %q", ua)
	}
}

// httpURL checks that s is an absolute http or https URL with a host and
// no user name or password, which the crawl would refuse to fetch (see
// frontier.Canonicalize) and the inventory would record. The message
// shows the URL with its password masked.
func (c *configCheck) httpURL(key, s string) {
	u, err := url.Parse(s)
	if err != nil {
		c.addf(key, "invalid URL %q: %v", s, unwrapURLError(err))
		return
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		c.addf(key, "must be an absolute http or https URL, got %q", u.Redacted())
		return
	}
	if u.User != nil {
		c.addf(key, "must not hold a user name or password (user:password@), got %q", u.Redacted())
	}
}

// unwrapURLError drops the "parse "…":" prefix of a *url.Error, whose URL the
// message already quotes.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// hostPattern checks a scope.hosts entry: an origin or a bare host[:port].
func (c *configCheck) hostPattern(key, s string) {
	bad := func() {
		c.addf(key, "must be an origin (https://host[:port]) or a host[:port], got %q", s)
	}
	raw := s
	if !strings.Contains(s, "://") {
		raw = "http://" + s
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || !validHostname(u.Hostname()) ||
		u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		bad()
		return
	}
	if p := u.Port(); p != "" || strings.HasSuffix(u.Host, ":") {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			bad()
		}
	}
}

// validHostname reports whether h is an IP address or a DNS name (letters of
// any script, digits, '-', '_' and '.'); so no wildcards.
func validHostname(h string) bool {
	if strings.Contains(h, ":") {
		return net.ParseIP(h) != nil
	}
	return h != "" && !strings.ContainsFunc(h, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' && r != '.'
	})
}

func (c *configCheck) scope(s ScopeConfig) {
	for i, h := range s.Hosts {
		c.hostPattern(fmt.Sprintf("scope.hosts[%d]", i), h)
	}
	c.atLeast("scope.max_depth", s.MaxDepth, 0)
	c.atLeast("scope.max_pages", s.MaxPages, 0)
	c.regexps("scope.include", s.Include)
	c.regexps("scope.exclude", s.Exclude)
	if s.MaxURLLength < 0 || s.MaxURLLength > MaxURLLengthLimit {
		c.addf("scope.max_url_length", "must be from 0 (the default, %d) to %d, got %d",
			frontier.DefaultMaxURLLength, MaxURLLengthLimit, s.MaxURLLength)
	}
	c.atLeast("scope.max_path_depth", s.MaxPathDepth, 0)
	c.atLeast("scope.max_repeated_segments", s.MaxRepeatedSegments, 0)
	c.atLeast("scope.max_pages_per_host", s.MaxPagesPerHost, 0)
	c.atLeast("scope.max_query_variants", s.MaxQueryVariants, 0)
	c.requisites(s.Requisites)
	c.atLeast("scope.max_links_per_page", s.MaxLinksPerPage, 0)
}

func (c *configCheck) regexps(key string, list []string) {
	for i, re := range list {
		if _, err := regexp.Compile(re); err != nil {
			c.addf(fmt.Sprintf("%s[%d]", key, i), "%v", err)
		}
	}
}

func (c *configCheck) politeness(p PolitenessConfig) {
	if p.Delay < 0 {
		c.addf("politeness.delay", "must be ≥ 0, got %s", shortDuration(p.Delay))
	}
	c.atLeast("politeness.max_per_host", p.MaxPerHost, 1)
	if p.RetryAfterMax <= 0 {
		c.addf("politeness.retry_after_max", "must be > 0, got %s", shortDuration(p.RetryAfterMax))
	}
	if p.RobotsLastWait < 0 {
		c.addf("politeness.robots_last_wait", "must be ≥ 0, got %s", shortDuration(p.RobotsLastWait))
	}
	if p.DelayFactor < 0 || p.DelayFactor > 1000 {
		c.addf("politeness.delay_factor", "must be between 0 (off) and 1000, got %v", p.DelayFactor)
	}
	if p.MaxDelay <= 0 {
		c.addf("politeness.max_delay", "must be > 0, got %s", shortDuration(p.MaxDelay))
	}
	if p.MaxBytesPerSecond < 0 {
		c.addf("politeness.max_bytes_per_second", "must be ≥ 0 (0 = no cap), got %v", p.MaxBytesPerSecond)
	}
}

func (c *configCheck) fetch(f FetchConfig) {
	c.atLeast("fetch.workers", f.Workers, 1)
	if f.Timeout <= 0 {
		c.addf("fetch.timeout", "must be > 0, got %s", shortDuration(f.Timeout))
	}
	c.positiveSize("fetch.max_body", f.MaxBody)
	c.atLeast("fetch.max_redirects", f.MaxRedirects, 0)
	c.atLeast("fetch.retries", f.Retries, 0)
	if f.Proxy != "" {
		if _, err := reach.ParseProxy(f.Proxy); err != nil {
			c.addf("fetch.proxy", "%v", err)
		}
	}
	if f.CAFile != "" {
		if _, err := reach.LoadCAs(f.CAFile); err != nil {
			c.addf("fetch.ca_file", "%v", err)
		}
	}
	seen := map[string]bool{}
	for i, a := range f.Auth {
		key := fmt.Sprintf("fetch.auth[%d]", i)
		origin, err := reach.Origin(a.Origin)
		switch {
		case err != nil:
			c.addf(key+".origin", "%v", err)
		case seen[origin]:
			c.addf(key+".origin", "%s is given twice", origin)
		}
		seen[origin] = true
		if a.User == "" || strings.Contains(a.User, ":") {
			c.addf(key+".user", "must be a user name without ':', got %q", a.User)
		}
		if _, err := reach.ReadPassword(a.PasswordFile); err != nil {
			c.addf(key+".password_file", "%v", err)
		}
	}
}

func (c *configCheck) output(o OutputConfig) {
	c.oneOf("output.mirror_links", o.MirrorLinks, MirrorLinksKeep, MirrorLinksRelative)
	c.positiveSize("output.warc_max_size", o.WARCMaxSize)
}

func (c *configCheck) daemon(d DaemonConfig) {
	if d.Enabled && d.Recrawl <= 0 {
		c.addf("daemon.recrawl", "must be > 0 when daemon.enabled is true, got %s", shortDuration(d.Recrawl))
	}
	if d.MaxInterval < 0 || (d.MaxInterval > 0 && d.MaxInterval < d.Recrawl) {
		c.addf("daemon.max_interval", "must be 0 or ≥ daemon.recrawl (%s), got %s",
			shortDuration(d.Recrawl), shortDuration(d.MaxInterval))
	}
	if d.Listen != "" {
		host, port, err := net.SplitHostPort(d.Listen)
		n, perr := strconv.Atoi(port)
		if err != nil || perr != nil || n < 0 || n > 65535 || strings.ContainsAny(host, " /") {
			c.addf("daemon.listen", "must be host:port (e.g. 127.0.0.1:9090), got %q", d.Listen)
		}
	}
}

// shortDuration writes d as the config would: 24h, not 24h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

func (c *configCheck) oneOf(key, v string, allowed ...string) {
	for _, a := range allowed {
		if v == a {
			return
		}
	}
	c.addf(key, "must be %s, got %q", orList(allowed), v)
}

// orList writes "a, b or c".
func orList(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// ByteSize is a number of bytes. It is written (in YAML and on the command
// line) as a whole number of bytes, "10485760", or as a number with a unit:
// B; KB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB (powers of 1024).
// Units are matched without regard to case and always mean bytes, never bits;
// a space may separate the number from the unit; a fraction ("1.5GiB") is
// rounded down to whole bytes. Negative sizes are refused.
type ByteSize int64

// Units of ByteSize.
const (
	B   ByteSize = 1
	KB  ByteSize = 1000
	MB  ByteSize = 1000 * KB
	GB  ByteSize = 1000 * MB
	TB  ByteSize = 1000 * GB
	KiB ByteSize = 1 << 10
	MiB ByteSize = 1 << 20
	GiB ByteSize = 1 << 30
	TiB ByteSize = 1 << 40
)

// byteUnit is one unit of ByteSize.
type byteUnit struct {
	name string
	size ByteSize
}

// byteUnits lists the units, binary ones first so that String picks them.
func byteUnits() [9]byteUnit {
	return [9]byteUnit{
		{"TiB", TiB}, {"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB},
		{"TB", TB}, {"GB", GB}, {"MB", MB}, {"KB", KB}, {"B", B},
	}
}

// ParseByteSize parses a size as ByteSize documents.
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "-") {
		return 0, fmt.Errorf("invalid size %q: must not be negative", s)
	}
	end := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if end < 0 {
		end = len(t)
	}
	num, unit := t[:end], strings.TrimSpace(t[end:])
	if num == "" {
		return 0, fmt.Errorf("invalid size %q: want a number of bytes or a number with a unit, such as 10MiB", s)
	}
	mult := B
	if unit != "" {
		mult = 0
		for _, u := range byteUnits() {
			if strings.EqualFold(unit, u.name) {
				mult = u.size
			}
		}
		if mult == 0 {
			return 0, fmt.Errorf("invalid size %q: unknown unit %q (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)", s, unit)
		}
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64) // digits only: it can fail only by range
		if err != nil || n > math.MaxInt64/int64(mult) {
			return 0, fmt.Errorf("invalid size %q: too large", s)
		}
		return ByteSize(n) * mult, nil
	}
	if mult == B {
		return 0, fmt.Errorf("invalid size %q: not a whole number of bytes", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: want a number of bytes or a number with a unit, such as 10MiB", s)
	}
	f *= float64(mult)
	if f >= math.MaxInt64 {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return ByteSize(f), nil
}

// String writes b in the largest binary unit that holds it exactly
// ("10MiB"), or in bytes ("1000B"); ParseByteSize reads it back.
func (b ByteSize) String() string {
	units := byteUnits()
	for _, u := range units[:4] {
		if b != 0 && b%u.size == 0 {
			return strconv.FormatInt(int64(b/u.size), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(b), 10) + "B"
}

// MarshalText writes b as String does.
func (b ByteSize) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText reads a size as ParseByteSize does.
func (b *ByteSize) UnmarshalText(text []byte) error {
	v, err := ParseByteSize(string(text))
	if err != nil {
		return err
	}
	*b = v
	return nil
}
