package crawler

import (
	"encoding/json"
	"maps"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/robots"
	"github.com/politecrawl/crawler/sitemap"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// observer hears each event of a crawl once and keeps its counts. The end
// summary, the progress line and /metrics are all read from it (with the
// frontier's and the hosts' own state for what is queued and waiting), so
// they cannot disagree. It is safe for concurrent use.
type observer struct {
	mu           sync.Mutex
	requests     map[string]int64 // every request, robots.txt and hops included, by class
	pages        map[string]int64 // pages and sitemaps fetched, one per visit, by class
	bytes        int64
	done         int64 // URLs completed: fetched, refused by robots.txt, kept out
	disallowed   int64
	rejected     map[string]int64 // URLs kept out, by reason
	retries      int64
	notModified  int64
	robots       map[string]int64 // robots.txt fetches, by what the policy made of them
	sitemapURLs  int64
	warnings     map[string]int64 // sitemap warnings, by rule
	waited       time.Duration
	stateErrors  int64
	outputErrors map[string]int64 // failed writes, by output
	partChanges  map[string]int64 // a shared crawl's partitions gained, handed over, lost
	renders      [2]int64         // pages rendered, and pages whose render failed (render.enabled)
	brokenN      int64            // URLs whose answer was ≥ 400, or none came
	broken       []BrokenURL      // the first maxBroken of them

	duration prometheus.Histogram
	reloads  *prometheus.CounterVec // SIGHUP reloads, by result
	reloaded prometheus.Gauge       // when a reload last succeeded, Unix seconds
	reg      *prometheus.Registry
	// gauges reads what the crawl holds now: set once by the crawler
	// before the first scrape.
	gauges func() gauges
}

// gauges are the crawl's current levels, read at each scrape.
type gauges struct {
	queued, leased, done    int64
	active, waiting, parked int
	partitions              int // held, in a crawl shared by several workers; -1 on one machine
}

// statusClasses are the code labels of crawler_fetches_total: a 304 is a
// class of its own, since a revisit answered "not modified" is neither a
// redirect nor a new page.
var statusClasses = []string{"2xx", "3xx", "304", "4xx", "5xx", "error"}

// statusClass is the class of a status; 0 (no answer) is "error".
func statusClass(status int) string {
	switch {
	case status == 304:
		return "304"
	case status < 100 || status > 599:
		return "error"
	}
	return strconv.Itoa(status/100) + "xx"
}

func newObserver(version string) *observer {
	o := &observer{
		requests: map[string]int64{}, pages: map[string]int64{}, rejected: map[string]int64{},
		robots: map[string]int64{}, warnings: map[string]int64{}, outputErrors: map[string]int64{},
		partChanges: map[string]int64{},
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "crawler_fetch_duration_seconds",
			Help:    "Time from sending a request to the end of its body.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
		}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_config_reloads_total",
			Help: "Config reloads (SIGHUP), by result.",
		}, []string{"result"}),
		reloaded: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "crawler_config_last_reload_success_timestamp_seconds",
			Help: "When the config was last loaded or reloaded successfully, in Unix seconds.",
		}),
		reg:    prometheus.NewRegistry(),
		gauges: func() gauges { return gauges{partitions: -1} },
	}
	o.reloads.WithLabelValues("success")
	o.reloads.WithLabelValues("failure")
	o.reloaded.SetToCurrentTime() // the config New was given, as Prometheus' own metric does
	o.reg.MustRegister(o, o.duration, o.reloads, o.reloaded, buildInfo(version),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return o
}

// buildInfo is crawler_build_info: 1, labelled with the build.
func buildInfo(version string) prometheus.Collector {
	goVersion, revision := runtime.Version(), "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
		if version == "" {
			version = bi.Main.Version
		}
	}
	if version == "" {
		version = "(devel)"
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "crawler_build_info",
		Help:        "A metric with a constant '1' value labelled by the version, Go version and VCS revision the crawler was built from.",
		ConstLabels: prometheus.Labels{"version": version, "goversion": goVersion, "revision": revision},
	})
	g.Set(1)
	return g
}

// reload counts a config reload, and when it succeeded.
func (o *observer) reload(ok bool) {
	if !ok {
		o.reloads.WithLabelValues("failure").Inc()
		return
	}
	o.reloads.WithLabelValues("success").Inc()
	o.reloaded.SetToCurrentTime()
}

// request counts one request: its answer's status (0 for none), the body
// bytes read and how long it took.
func (o *observer) request(status, bytes int, took time.Duration) {
	if status != 0 {
		o.duration.Observe(took.Seconds())
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests[statusClass(status)]++
	o.bytes += int64(bytes)
}

// page counts a page or sitemap visit that made its request, by the
// answer's status (0 for none).
func (o *observer) page(status int) { o.add(o.pages, statusClass(status)) }

func (o *observer) urlDone()              { o.inc(&o.done) }
func (o *observer) disallow()             { o.inc(&o.disallowed) }
func (o *observer) retry()                { o.inc(&o.retries) }
func (o *observer) notModifiedAnswer()    { o.inc(&o.notModified) }
func (o *observer) sitemapURL()           { o.inc(&o.sitemapURLs) }
func (o *observer) stateError()           { o.inc(&o.stateErrors) }
func (o *observer) reject(reason string)  { o.add(o.rejected, reason) }
func (o *observer) robotsResult(r string) { o.add(o.robots, r) }
func (o *observer) sitemapWarning(rule string) {
	o.add(o.warnings, rule)
}
func (o *observer) outputError(output string) { o.add(o.outputErrors, output) }

// render counts a page rendered, or whose render failed.
func (o *observer) render(ok bool) {
	if ok {
		o.inc(&o.renders[0])
	} else {
		o.inc(&o.renders[1])
	}
}

// partitionChange counts a shared crawl's partition gained (clean or not),
// handed over or lost.
func (o *observer) partitionChange(kind string) { o.add(o.partChanges, kind) }

// maxBroken is how many broken URLs the summary names; the inventory has
// them all.
const maxBroken = 10

// brokenURL counts a URL whose answer was an error status or that got no
// answer, and keeps the first maxBroken for the summary.
func (o *observer) brokenURL(b BrokenURL) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.brokenN++
	if len(o.broken) < maxBroken {
		o.broken = append(o.broken, b)
	}
}

// wait counts time a host with work was held back by politeness.
func (o *observer) wait(d time.Duration) {
	if d <= 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.waited += d
}

func (o *observer) inc(n *int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	*n++
}

func (o *observer) add(m map[string]int64, k string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	m[k]++
}

// errors is how many requests got no answer, and how many writes failed.
func (o *observer) errors() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := o.requests["error"]
	for _, e := range o.outputErrors {
		n += e
	}
	return n
}

// fill copies the counts into a summary.
func (o *observer) fill(s *Summary) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s.Done, s.Bytes, s.Disallowed, s.Retries = o.done, o.bytes, o.disallowed, o.retries
	s.Pages, s.Requests, s.Rejected = maps.Clone(o.pages), maps.Clone(o.requests), maps.Clone(o.rejected)
	s.StateErrors, s.OutputErrors = o.stateErrors, maps.Clone(o.outputErrors)
	s.PoliteWait = o.waited
	s.BrokenURLs, s.Broken = o.brokenN, slices.Clone(o.broken)
}

// The series of /metrics (see README, "Metrics").
var (
	descFetches = prometheus.NewDesc("crawler_fetches_total",
		"Requests made (pages, sitemaps, robots.txt, redirect hops), by status class (304 on its own), or error when no answer came.", []string{"code"}, nil)
	descPages = prometheus.NewDesc("crawler_pages_fetched_total",
		"Page and sitemap URLs fetched, one per visit that made its request, by the answer's status class.", []string{"code"}, nil)
	descBytes = prometheus.NewDesc("crawler_bytes_total",
		"Body bytes received, after decoding.", nil, nil)
	descDone = prometheus.NewDesc("crawler_urls_done_total",
		"URLs completed: fetched, refused by robots.txt or kept out.", nil, nil)
	descRobots = prometheus.NewDesc("crawler_robots_requests_total",
		"robots.txt fetches, by what the policy made of them.", []string{"result"}, nil)
	descWait = prometheus.NewDesc("crawler_politeness_wait_seconds_total",
		"Time hosts with URLs to fetch were held back by delays, Crawl-delay, Retry-After and backoff.", nil, nil)
	descRejected = prometheus.NewDesc("crawler_urls_rejected_total",
		"URLs kept out of the frontier, by reason.", []string{"reason"}, nil)
	descRetries = prometheus.NewDesc("crawler_retries_total",
		"Fetches put back to be tried again.", nil, nil)
	descDisallowed = prometheus.NewDesc("crawler_robots_disallowed_total",
		"URLs not fetched because robots.txt disallows them.", nil, nil)
	descNotModified = prometheus.NewDesc("crawler_not_modified_total",
		"Revisits answered 304 Not Modified.", nil, nil)
	descSitemapURLs = prometheus.NewDesc("crawler_sitemap_urls_total",
		"Page URLs read from sitemaps.", nil, nil)
	descWarnings = prometheus.NewDesc("crawler_sitemap_warnings_total",
		"Sitemap entries dropped or files cut, by rule.", []string{"rule"}, nil)
	descStateErrors = prometheus.NewDesc("crawler_state_errors_total",
		"Failed writes of the crawl's state that the crawl carried on after.", nil, nil)
	descOutputErrors = prometheus.NewDesc("crawler_output_errors_total",
		"Failed writes of the outputs (inventory, mirror, WARC), by output.", []string{"output"}, nil)
	descFrontier = prometheus.NewDesc("crawler_frontier_urls",
		"URLs in the frontier, by state.", []string{"state"}, nil)
	descHosts = prometheus.NewDesc("crawler_hosts",
		"Hosts, by state: active (may be asked now or has requests in flight), waiting, parked.", []string{"state"}, nil)
	descPartitions = prometheus.NewDesc("crawler_cluster_partitions",
		"Partitions of a shared crawl this worker holds.", nil, nil)
	descPartChanges = prometheus.NewDesc("crawler_cluster_partition_changes_total",
		"Partitions of a shared crawl gained (after a clean handover or not), handed over and lost.", []string{"change"}, nil)
	descRenders = prometheus.NewDesc("crawler_renders_total",
		"Pages rendered in the browser (render.enabled), and pages whose render failed.", []string{"result"}, nil)
)

// The label values of the labelled counters that are known beforehand:
// each series is there at zero from the start, so that an alert on it
// (rate(crawler_output_errors_total[5m]) > 0) sees it before its first
// increment. Values found later (a rule added to sitemap) join when
// counted.
var (
	robotsResults = []string{string(robots.ResultOK), string(robots.ResultMissing), string(robots.ResultUnreachable)}
	rejectReasons = []string{
		string(frontier.ReasonScheme), string(frontier.ReasonUserinfo), string(frontier.ReasonHost),
		string(frontier.ReasonTooLong), string(frontier.ReasonParse), string(frontier.ReasonControl),
		rejectInclude, rejectExclude, // rejectHost is frontier.ReasonHost's "host"
		rejectDepth, rejectLength, rejectPathDepth,
		rejectRepeated, rejectCalendar, rejectQueries, rejectNesting, "nofollow", "max-pages", "redirects", "host-budget",
	}
	sitemapRules = []string{
		string(sitemap.RuleMaxURLs), string(sitemap.RuleMaxBytes), string(sitemap.RuleMaxChildren),
		string(sitemap.RuleScope), string(sitemap.RuleTooLong), string(sitemap.RuleScheme),
		string(sitemap.RuleInvalidURL), string(sitemap.RuleControl), string(sitemap.RuleLastmod),
		string(sitemap.RuleChangefreq), string(sitemap.RulePriority), string(sitemap.RuleMalformed),
		string(sitemap.RuleFormat), string(sitemap.RuleNestedIndex), string(sitemap.RuleDuplicate),
		string(sitemap.RuleFetch),
	}
	outputKeys = []string{"output.urls", "output.links", "output.mirror_dir", "output.warc"}
)

// Describe is prometheus.Collector's.
func (o *observer) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(o, ch) }

// Collect is prometheus.Collector's: the counts as they are now.
func (o *observer) Collect(ch chan<- prometheus.Metric) {
	g := o.gauges()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	byLabel := func(d *prometheus.Desc, m map[string]int64, known ...string) {
		for _, k := range known {
			if _, ok := m[k]; !ok {
				counter(d, 0, k) // there from the start, for an alert to see
			}
		}
		for k, v := range m {
			counter(d, float64(v), k)
		}
	}
	o.mu.Lock()
	for _, c := range statusClasses {
		counter(descFetches, float64(o.requests[c]), c)
		counter(descPages, float64(o.pages[c]), c)
	}
	counter(descBytes, float64(o.bytes))
	counter(descDone, float64(o.done))
	byLabel(descRobots, o.robots, robotsResults...)
	counter(descWait, o.waited.Seconds())
	byLabel(descRejected, o.rejected, rejectReasons...)
	counter(descRetries, float64(o.retries))
	counter(descDisallowed, float64(o.disallowed))
	counter(descNotModified, float64(o.notModified))
	counter(descSitemapURLs, float64(o.sitemapURLs))
	byLabel(descWarnings, o.warnings, sitemapRules...)
	counter(descStateErrors, float64(o.stateErrors))
	byLabel(descOutputErrors, o.outputErrors, outputKeys...)
	counter(descRenders, float64(o.renders[0]), "rendered")
	counter(descRenders, float64(o.renders[1]), "failed")
	if g.partitions >= 0 {
		for _, k := range []string{"gained_clean", "gained_unclean", "handover", "lost"} {
			counter(descPartChanges, float64(o.partChanges[k]), k)
		}
	}
	o.mu.Unlock()
	gauge(descFrontier, float64(g.queued), "queued")
	gauge(descFrontier, float64(g.leased), "leased")
	gauge(descFrontier, float64(g.done), "done")
	gauge(descHosts, float64(g.active), "active")
	gauge(descHosts, float64(g.waiting), "waiting")
	gauge(descHosts, float64(g.parked), "parked")
	if g.partitions >= 0 {
		gauge(descPartitions, float64(g.partitions))
	}
}

// Summary is what a run did, for the report at its end.
//
// Its JSON (the log's summary record under log.format: json) gives the
// two durations in seconds, as elapsed_s and politeness_wait_s.
type Summary struct {
	Elapsed time.Duration `json:"-"` // elapsed_s in JSON
	// Done counts the URLs completed this run: fetched, refused by
	// robots.txt or kept out.
	Done int64 `json:"done"`
	// Pages counts the page and sitemap URLs fetched, by the status class
	// of their answer ("2xx" … "5xx", "304", "error").
	Pages map[string]int64 `json:"pages"`
	// Requests counts every request made, robots.txt and redirect hops
	// included, by class: crawler_fetches_total.
	Requests     map[string]int64 `json:"requests"`
	Bytes        int64            `json:"bytes"`
	Disallowed   int64            `json:"disallowed_by_robots"`
	Rejected     map[string]int64 `json:"rejected"` // URLs kept out, by reason
	Retries      int64            `json:"retries,omitempty"`
	PoliteWait   time.Duration    `json:"-"` // politeness_wait_s in JSON
	Parked       []ParkedHost     `json:"parked_hosts,omitempty"`
	Queued       int64            `json:"queued"` // left in the frontier
	StateErrors  int64            `json:"state_errors,omitempty"`
	OutputErrors map[string]int64 `json:"output_errors,omitempty"`
	BrokenLinks  int              `json:"broken_mirror_links,omitempty"` // after relinking the mirror
	// BrokenURLs counts the URLs whose answer was 4xx or 5xx, or that got
	// no answer; Broken names the first few, each with a page linking
	// to it.
	BrokenURLs int64       `json:"broken_urls"`
	Broken     []BrokenURL `json:"broken,omitempty"`
	// Stopped says why the run ended: "drained" (nothing left to do),
	// "max_pages", "signal" (ctx cancelled), "time" (ctx's deadline) or
	// "error" (a failed write; Run returns it).
	Stopped string `json:"stopped"`
}

// MarshalJSON writes the summary with its durations in seconds
// (elapsed_s, politeness_wait_s): a log reader wants a number of a known
// unit, not Go's nanoseconds.
func (s Summary) MarshalJSON() ([]byte, error) {
	type fields Summary // without this method
	return json.Marshal(struct {
		ElapsedS float64 `json:"elapsed_s"`
		fields
		PoliteWaitS float64 `json:"politeness_wait_s"`
	}{s.Elapsed.Seconds(), fields(s), s.PoliteWait.Seconds()})
}

// BrokenURL is a URL that answered 4xx or 5xx, or did not answer.
type BrokenURL struct {
	URL      string `json:"url"`
	Status   int    `json:"status,omitempty"`
	Error    string `json:"error,omitempty"`
	Referrer string `json:"referrer,omitempty"` // a page linking to it (or the redirect to it)
}

// ParkedHost is a host the crawl gave up on, and why.
type ParkedHost struct {
	Origin string `json:"origin"`
	Reason string `json:"reason"`
}

// Fetched is how many pages and sitemaps got an answer.
func (s Summary) Fetched() int64 {
	var n int64
	for class, v := range s.Pages {
		if class != "error" {
			n += v
		}
	}
	return n
}
