package crawler

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// A reload that turns the daemon off and daemon.recrawl to 0 is valid as
// written, but daemon.enabled changes only on restart: the daemon would run
// on with a recrawl of 0, and its relink ticker panic. It is refused, and
// the old config stays.
func TestReloadRefusesRecrawlZeroInARunningDaemon(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html>a</html>`)
	}))
	defer srv.Close()
	c, cfg := newRelinkDaemon(t, 10*time.Millisecond, nil, srv.URL+"/")
	stop := runInBackground(c)
	next := cfg
	next.Daemon.Enabled = false
	next.Daemon.Recrawl = 0
	notes, err := c.Reload(func() (Config, error) { return next, nil })
	if rerr := stop(); rerr != nil {
		t.Error(rerr)
	}
	c.Close()
	if err == nil || !strings.Contains(err.Error(), "daemon.recrawl") || !strings.Contains(err.Error(), "daemon.enabled") {
		t.Errorf("Reload = %v, %v; want refused, naming daemon.recrawl and daemon.enabled", notes, err)
	}
	if got := c.conf().Daemon; !got.Enabled || got.Recrawl != time.Hour {
		t.Errorf("daemon config after the refusal = %+v, want the old one", got)
	}
	if f, s := testutil.ToFloat64(c.obs.reloads.WithLabelValues("failure")), testutil.ToFloat64(c.obs.reloads.WithLabelValues("success")); f != 1 || s != 0 {
		t.Errorf("crawler_config_reloads_total failure %v, success %v; want 1, 0", f, s)
	}
}

// Each reload is counted by its result, a file that cannot be read
// included, and a success moves the last-success time.
func TestReloadCounted(t *testing.T) {
	cfg := testConfig(t, "http://example.test/")
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := testutil.ToFloat64(c.obs.reloaded)
	if _, err := c.Reload(func() (Config, error) { return Config{}, errors.New("open my.yaml: no such file") }); err == nil {
		t.Error("a config that cannot be read was applied")
	}
	next := cfg
	next.Politeness.Delay = 2 * time.Second
	if _, err := c.Reload(func() (Config, error) { return next, nil }); err != nil {
		t.Fatal(err)
	}
	if f, s := testutil.ToFloat64(c.obs.reloads.WithLabelValues("failure")), testutil.ToFloat64(c.obs.reloads.WithLabelValues("success")); f != 1 || s != 1 {
		t.Errorf("crawler_config_reloads_total failure %v, success %v; want 1, 1", f, s)
	}
	if after := testutil.ToFloat64(c.obs.reloaded); after <= before {
		t.Errorf("last reload success %v, not after %v", after, before)
	}
}

// The relink period is never ≤ 0, which time.Ticker.Reset refuses with a
// panic, whatever daemon.recrawl the config in force has.
func TestRelinkPeriodPositive(t *testing.T) {
	cfg := testConfig(t, "http://example.test/")
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, r := range []time.Duration{0, -time.Second, time.Millisecond, time.Hour} {
		live := *c.conf()
		live.Daemon.Recrawl = r
		c.live.Store(&live)
		if p := c.relink.relinkPeriod(); p <= 0 || p > c.relink.relinkWait {
			t.Errorf("recrawl %s: relink period %s, want in (0, %s]", r, p, c.relink.relinkWait)
		}
	}
}

// daemon.web_config is read once, when the listener starts: a reload that
// changes it (to protect /metrics and /hosts, say) keeps the old one and
// says so, rather than leave the endpoints as they were without a word.
func TestReloadNamesWebConfig(t *testing.T) {
	cfg := testConfig(t, "http://example.test/")
	c, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	next := cfg
	next.Daemon.WebConfig = "/etc/crawler/web.yml"
	notes, err := c.Reload(func() (Config, error) { return next, nil })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "daemon.web_config") {
		t.Errorf("Reload notes %q; want daemon.web_config named as needing a restart", notes)
	}
	if got := c.conf().Daemon.WebConfig; got != "" {
		t.Errorf("daemon.web_config in force after the reload = %q, want the old one (\"\")", got)
	}
}
