package crawler

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the crawl's Prometheus series, on a registry of the crawl's
// own (no global state): what ../shared/CONTRACT.md promises, and a few more.
type metrics struct {
	reg           *prometheus.Registry
	fetches       *prometheus.CounterVec
	bytes         prometheus.Counter
	duration      prometheus.Histogram
	robots        *prometheus.CounterVec
	politeWait    prometheus.Counter
	rejected      *prometheus.CounterVec
	retries       prometheus.Counter
	disallowed    prometheus.Counter
	notModified   prometheus.Counter
	sitemapURLs   prometheus.Counter
	warnings      *prometheus.CounterVec
	frontierState *prometheus.GaugeVec
	hostState     *prometheus.GaugeVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		fetches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_fetches_total",
			Help: "Requests made (pages, sitemaps, robots.txt), by status class, or error when no response came.",
		}, []string{"code"}),
		bytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_bytes_total",
			Help: "Body bytes received, after decoding.",
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "crawler_fetch_duration_seconds",
			Help:    "Time from sending a request to the end of its body.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
		}),
		robots: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_robots_requests_total",
			Help: "robots.txt fetches, by what the policy made of them.",
		}, []string{"result"}),
		politeWait: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_politeness_wait_seconds_total",
			Help: "Time hosts were held back by delays, Crawl-delay, Retry-After and backoff.",
		}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_urls_rejected_total",
			Help: "URLs kept out of the frontier, by reason.",
		}, []string{"reason"}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_retries_total",
			Help: "Fetches put back to be tried again.",
		}),
		disallowed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_robots_disallowed_total",
			Help: "URLs not fetched because robots.txt disallows them.",
		}),
		notModified: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_not_modified_total",
			Help: "Revisits answered 304 Not Modified.",
		}),
		sitemapURLs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "crawler_sitemap_urls_total",
			Help: "Page URLs read from sitemaps.",
		}),
		warnings: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "crawler_sitemap_warnings_total",
			Help: "Sitemap entries dropped or files cut, by rule.",
		}, []string{"rule"}),
		frontierState: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "crawler_frontier_urls",
			Help: "URLs in the frontier, by state.",
		}, []string{"state"}),
		hostState: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "crawler_hosts",
			Help: "Hosts, by state: active (may be asked now or has requests in flight), waiting, parked.",
		}, []string{"state"}),
	}
	m.reg.MustRegister(m.fetches, m.bytes, m.duration, m.robots, m.politeWait,
		m.rejected, m.retries, m.disallowed, m.notModified, m.sitemapURLs, m.warnings,
		m.frontierState, m.hostState,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, c := range []string{"2xx", "3xx", "4xx", "5xx", "error"} {
		m.fetches.WithLabelValues(c)
	}
	for _, s := range []string{"queued", "leased", "done"} {
		m.frontierState.WithLabelValues(s)
	}
	for _, s := range []string{"active", "waiting", "parked"} {
		m.hostState.WithLabelValues(s)
	}
	return m
}

// statusClass is the code label of a fetch: "2xx" … "5xx", or "error".
func statusClass(status int) string {
	if status < 100 || status > 599 {
		return "error"
	}
	return strconv.Itoa(status/100) + "xx"
}

// fetched counts one request's outcome.
func (m *metrics) fetched(status int, bytes int, d time.Duration) {
	m.fetches.WithLabelValues(statusClass(status)).Inc()
	m.bytes.Add(float64(bytes))
	if status != 0 {
		m.duration.Observe(d.Seconds())
	}
}
