package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// No password a page, a redirect, a sitemap or robots.txt names reaches an
// output, the log or an error (issue 23.5): a link to
// http://user:secretpw@host/ was refused but written with its password to
// the inventory and the link graph.
func TestNoPasswordInOutputs(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := strings.TrimPrefix(srv.URL, "http://")
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: http://u:secretpw@%s/sm.xml\nSitemap: http://%[1]s/sm.xml\n", h)
		case "/sm.xml":
			fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://u:secretpw@%s/fromsm</loc></url><url><loc>http://%[1]s/</loc></url></urlset>`, h)
		case "/":
			fmt.Fprintf(w, `<html><head><title>t</title><link rel=canonical href="http://u:secretpw@%s/"><link rel=alternate hreflang=de href="http://u:secretpw@%[1]s/de"></head>`+
				`<a href="http://user:secretpw@%[1]s/a">x</a><a href="/r">r</a><a href="http://u:secretpw@%[1]s/c">http://u:secretpw@%[1]s/c</a><img src="http://u:secretpw@%[1]s/i.png"></html>`, h)
		case "/r":
			http.Redirect(w, r, "http://u:secretpw@"+h+"/b", http.StatusMovedPermanently)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	urls, links := filepath.Join(dir, "urls.jsonl"), filepath.Join(dir, "links.jsonl")
	outputs := map[string]string{}
	for _, args := range [][]string{
		{"crawl", "--state-dir", filepath.Join(dir, "s"), "--delay", "0", "--out", urls, "--links", links, srv.URL + "/"},
		{"report", "--urls", urls, "--links", links, "--format", "json"},
		{"sitemap", "--json", srv.URL + "/sm.xml"},
		{"sitemap", srv.URL + "/sm.xml"},
		{"robots", "--agent", "x", "http://u:secretpw@" + strings.TrimPrefix(srv.URL, "http://") + "/a"},
		{"discover", "--delay", "0", "http://u:secretpw@example.test/"},
	} {
		out, stderr, _ := runCmd(t, "", args...)
		outputs[args[0]+" stdout"] += out
		outputs[args[0]+" stderr"] += stderr
	}
	for _, f := range []string{urls, links} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		outputs[f] = string(b)
	}
	if !strings.Contains(outputs[urls], "http://user:xxxxx@") {
		t.Errorf("the refused link is not in the inventory, masked:\n%s", outputs[urls])
	}
	for name, text := range outputs {
		if strings.Contains(text, "secretpw") {
			t.Errorf("%s holds the password:\n%s", name, text)
		}
	}
}

// The log masks passwords in messages, strings, errors, Stringers and
// groups, under either format.
func TestLogRedacts(t *testing.T) {
	u, _ := url.Parse("http://a:secretpw@h/")
	for _, format := range []string{"text", "json"} {
		var buf bytes.Buffer
		log := slog.New(redactHandler{slog.NewTextHandler(&buf, nil)})
		if format == "json" {
			log = slog.New(redactHandler{slog.NewJSONHandler(&buf, nil)})
		}
		log.With("seed", "http://b:secretpw@h/").Warn("fetch http://c:secretpw@h/", "url", u,
			"err", errors.New(`get "http://d:secretpw@h/": refused`), slog.Group("g", "u", "http://e:secretpw@h/"))
		if strings.Contains(buf.String(), "secretpw") || strings.Count(buf.String(), ":xxxxx@") != 5 {
			t.Errorf("%s: %s", format, buf.String())
		}
	}
}
