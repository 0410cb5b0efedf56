package main

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/politecrawl/crawler"
)

const demoUsage = "demo [--addr 127.0.0.1:8089] [--dir demo]"

// demoSite is a small site with the cases a polite crawler meets: a
// robots.txt with groups, a Crawl-delay and a Sitemap line, a sitemap, a
// redirect, a broken link, nofollow, and a link out of scope.
//
//go:embed demosite
var demoSite embed.FS

// runDemo is `crawler demo`: it serves the bundled demo site on a loopback
// address and crawls it with the defaults, writing the state, the inventory,
// the link graph and a mirror under one directory, and ends with the
// command that writes its audit. It needs no network and no setup; run
// it again and it resumes (and, once done, finds nothing left to do).
func runDemo(ctx context.Context, args []string, s stdio) error {
	flags := flag.NewFlagSet("demo", flag.ContinueOnError)
	addr := flags.String("addr", "127.0.0.1:8089", "serve the demo site on `host:port`")
	dir := flags.String("dir", "demo", "keep the crawl state, inventory and mirror under `directory`")
	if rest, err := parseFlags(flags, args, demoUsage, s.out); err != nil {
		return err
	} else if len(rest) > 0 {
		return usageErrorf("demo takes no arguments (usage: crawler %s)", demoUsage)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("serve the demo site: %w (choose another --addr)", err)
	}
	base := "http://" + ln.Addr().String()
	srv := &http.Server{Handler: demoHandler(base), ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	cfg := crawler.DefaultConfig()
	cfg.Seeds = []string{base + "/"}
	cfg.StateDir = filepath.Join(*dir, "state")
	cfg.Output.URLs = filepath.Join(*dir, "urls.jsonl")
	cfg.Output.Links = filepath.Join(*dir, "links.jsonl")
	cfg.Output.MirrorDir = filepath.Join(*dir, "mirror")
	cfg.Politeness.Delay = 100 * time.Millisecond
	if err := cfg.Validate(); err != nil {
		return err
	}
	fmt.Fprintf(s.err, "serving the demo site at %s and crawling it politely (Ctrl-C stops; run again to resume)\n", base)
	if err := crawl(ctx, cfg, crawler.Options{}, s, nil); err != nil {
		return err
	}
	fmt.Fprintf(s.err, "inventory:  %s\nlink graph: %s\nmirror:     %s\nthe audit:  %s\n",
		cfg.Output.URLs, cfg.Output.Links, cfg.Output.MirrorDir, reportCommand(cfg))
	return nil
}

// demoHandler serves the embedded site, with {{base}} in its text replaced
// by the site's own address, and /old-page redirecting to /about.html.
func demoHandler(base string) http.Handler {
	site, _ := fs.Sub(demoSite, "demosite")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old-page" {
			http.Redirect(w, r, "/about.html", http.StatusMovedPermanently)
			return
		}
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if name == "" || strings.HasSuffix(r.URL.Path, "/") {
			name = path.Join(name, "index.html")
		}
		body, err := fs.ReadFile(site, name)
		if err != nil {
			status := http.StatusInternalServerError
			if errors.Is(err, fs.ErrNotExist) {
				status = http.StatusNotFound
			}
			http.Error(w, http.StatusText(status), status)
			return
		}
		body = bytes.ReplaceAll(body, []byte("{{base}}"), []byte(base))
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
	})
}
