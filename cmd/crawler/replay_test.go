package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"golang.org/x/net/websocket"
)

// TestReplayWebPageShowsTheArchive crawls two pages with one body (so
// that one is an identical-payload revisit of the other) whose colour
// comes from their stylesheet, all sent gzip and with ETags, then again
// with --refresh (304s, archived as revisits), packages the crawl with
// `crawler wacz`, stops the site, and opens the package in replayweb.page
// in headless Chromium: each page's latest capture (revisits resolved to
// the gzip originals) must show in its stylesheet's colour. It needs chromium and
// REPLAYWEBPAGE_DIR, a directory holding replayweb.page's ui.js and sw.js
// (`npm pack replaywebpage`, unpacked; see the README), and skips without
// them.
func TestReplayWebPageShowsTheArchive(t *testing.T) {
	rwp := os.Getenv("REPLAYWEBPAGE_DIR")
	browser, err := exec.LookPath("chromium")
	if rwp == "" || err != nil {
		t.Skip("needs chromium and REPLAYWEBPAGE_DIR (replayweb.page's ui.js and sw.js)")
	}
	for _, f := range []string{"ui.js", "sw.js"} {
		if _, err := os.Stat(filepath.Join(rwp, f)); err != nil {
			t.Skipf("REPLAYWEBPAGE_DIR: %v", err)
		}
	}
	page := `<html><head><title>Blue</title><link rel="stylesheet" href="/style.css"></head><body><h1>archived</h1><a href="/two">two</a></body></html>`
	files := map[string][2]string{
		"/":          {"text/html", page},
		"/two":       {"text/html", page}, // the same body: an identical-payload revisit
		"/style.css": {"text/css", "html, body { background: rgb(0, 128, 255); height: 100%; }"},
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		}
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", `"`+r.URL.Path+`"`)
		if r.Header.Get("If-None-Match") == `"`+r.URL.Path+`"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", f[0])
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		fmt.Fprint(zw, f[1])
		zw.Close()
	}))
	dir := t.TempDir()
	inv, warcDir, pkg := filepath.Join(dir, "urls.jsonl"), filepath.Join(dir, "warc"), filepath.Join(dir, "site.wacz")
	cfg := filepath.Join(dir, "crawl.yaml")
	yaml := fmt.Sprintf("seeds: [%s/]\nstate_dir: %s\npoliteness: {delay: 0s}\noutput: {urls: %s, warc: %s}\n",
		site.URL, filepath.Join(dir, "state"), inv, warcDir)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, refresh := range []string{"--refresh=false", "--refresh"} {
		if _, stderr, code := runCmd(t, "", "crawl", "-c", cfg, refresh); code != 0 {
			t.Fatalf("crawl %s: exit %d; stderr:\n%s", refresh, code, stderr)
		}
	}
	if _, stderr, code := runCmd(t, "", "wacz", "--warc", warcDir, "--urls", inv, "--out", pkg); code != 0 {
		t.Fatalf("wacz: exit %d; stderr:\n%s", code, stderr)
	}
	live := site.URL + "/"
	site.Close() // what shows comes from the package

	mux := http.NewServeMux()
	mux.HandleFunc("/ui.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, filepath.Join(rwp, "ui.js")) })
	mux.HandleFunc("/replay/sw.js", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, filepath.Join(rwp, "sw.js")) })
	mux.HandleFunc("/site.wacz", func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, pkg) }) // with Range
	mux.HandleFunc("/embed.html", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<!doctype html><html><body style="margin:0"><script src="/ui.js"></script>
<replay-web-page source="/site.wacz" url="%s" embed="replayonly" style="display:block;width:800px;height:600px"></replay-web-page></body></html>`,
			html.EscapeString(r.URL.Query().Get("url")))
	})
	viewer := httptest.NewServer(mux)
	defer viewer.Close()

	for _, page := range []string{live, live + "two"} {
		embed := viewer.URL + "/embed.html?url=" + url.QueryEscape(page)
		if !showsColour(t, browser, embed, 0, 128, 255) {
			t.Errorf("replayweb.page did not show %s with its stylesheet within 90 s", page)
		}
	}
}

// showsColour opens page in headless Chromium and reports whether a tenth
// of it or more shows the colour r, g, b within 90 seconds. With
// REPLAY_SCREENSHOT set, the last screenshot is written there.
func showsColour(t *testing.T, browser, page string, r, g, b uint32) bool {
	t.Helper()
	// Not in t.TempDir, whose removal fails while the browser's helper
	// processes, which outlive it a little, still write to the profile.
	profile, err := os.MkdirTemp("", "crawler-replay-")
	if err != nil {
		t.Fatal(err)
	}
	defer removeProfile(t, profile) // after the browser is waited for (below)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+profile, "--remote-debugging-port=0", "--remote-allow-origins=*", "--window-size=800,600", page)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	port := devtoolsPort(t, stderr)
	ws := pageSocket(ctx, t, port)
	defer ws.Close()
	var shot image.Image
	defer func() {
		if out := os.Getenv("REPLAY_SCREENSHOT"); out != "" && shot != nil {
			f, _ := os.Create(out)
			png.Encode(f, shot)
			f.Close()
		}
	}()
	for id := 1; ctx.Err() == nil; id++ {
		shot = screenshot(t, ws, id)
		if hasColour(shot, r, g, b) {
			return true
		}
		time.Sleep(500 * time.Millisecond) // polling the browser, not asserting a time
	}
	return false
}

// removeProfile removes a browser's profile once its helper processes have
// stopped writing to it, trying again for a while; before, it was left to
// a timer that a test binary ending first never ran, and each run left a
// profile of some megabytes in the temporary directory.
func removeProfile(t *testing.T, dir string) {
	var err error
	for range 60 {
		if err = os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(500 * time.Millisecond) // waiting for the helpers to end, not asserting a time
	}
	t.Logf("browser profile %s not removed: %v", dir, err)
}

// devtoolsPort reads the port Chromium's DevTools listen on from its
// stderr, and drains the rest.
func devtoolsPort(t *testing.T, r interface{ Read([]byte) (int, error) }) string {
	t.Helper()
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		_, rest, ok := strings.Cut(sc.Text(), "DevTools listening on ws://127.0.0.1:")
		if ok {
			port, _, _ := strings.Cut(rest, "/")
			go func() {
				for sc.Scan() {
				}
			}()
			return port
		}
	}
	t.Fatal("chromium did not say where DevTools listen")
	return ""
}

// pageSocket connects to the DevTools socket of the browser's page.
func pageSocket(ctx context.Context, t *testing.T, port string) *websocket.Conn {
	t.Helper()
	for ctx.Err() == nil {
		resp, err := http.Get("http://127.0.0.1:" + port + "/json/list")
		if err == nil {
			var targets []struct{ Type, WebSocketDebuggerURL string }
			json.NewDecoder(resp.Body).Decode(&targets)
			resp.Body.Close()
			for _, tg := range targets {
				if tg.Type == "page" && tg.WebSocketDebuggerURL != "" {
					ws, err := websocket.Dial(tg.WebSocketDebuggerURL, "", "http://127.0.0.1/")
					if err != nil {
						t.Fatal(err)
					}
					return ws
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no page target in chromium")
	return nil
}

// screenshot asks the page for a PNG screenshot (message id).
func screenshot(t *testing.T, ws *websocket.Conn, id int) image.Image {
	t.Helper()
	if err := websocket.JSON.Send(ws, map[string]any{"id": id, "method": "Page.captureScreenshot"}); err != nil {
		t.Fatal(err)
	}
	for {
		var msg struct {
			ID     int
			Result struct{ Data string }
		}
		if err := websocket.JSON.Receive(ws, &msg); err != nil {
			t.Fatal(err)
		}
		if msg.ID != id {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(msg.Result.Data)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
}

// hasColour reports whether a tenth of img or more is the colour r, g, b.
func hasColour(img image.Image, r, g, b uint32) bool {
	bounds, n := img.Bounds(), 0
	for y := bounds.Min.Y; y < bounds.Max.Y; y += 4 {
		for x := bounds.Min.X; x < bounds.Max.X; x += 4 {
			pr, pg, pb, _ := img.At(x, y).RGBA()
			if pr>>8 == r && pg>>8 == g && pb>>8 == b {
				n++
			}
		}
	}
	return n*16*10 >= bounds.Dx()*bounds.Dy()
}
