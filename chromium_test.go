package crawler

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage/mirror"
)

// TestMirrorShowsRequisitesInChromium opens a mirrored page from disk in
// headless Chromium (skipped when there is none in PATH): its stylesheet,
// image and script, all on a CDN host, load from the mirror, so the page
// looks as the live one does. The CDN's script writes what the browser
// computed into the page, which --dump-dom prints.
func TestMirrorShowsRequisitesInChromium(t *testing.T) {
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" || testing.Short() {
		t.Skip("no chromium, chromium-browser or google-chrome in PATH")
	}
	var img bytes.Buffer
	pic := image.NewRGBA(image.Rect(0, 0, 3, 2))
	pic.Set(0, 0, color.RGBA{R: 255, A: 255})
	if err := png.Encode(&img, pic); err != nil {
		t.Fatal(err)
	}
	www, cdn := newSite(t), newSite(t)
	www.set("/robots.txt", page{ctype: "text/plain"})
	www.set("/", page{body: `<!DOCTYPE html><html><head><link rel="stylesheet" href="` + cdn.URL + `/css/site.css"></head>
<body><img id="logo" src="` + cdn.URL + `/img/logo.png"><script src="` + cdn.URL + `/js/check.js"></script></body></html>`})
	cdn.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nCrawl-delay: 0.1\n"})
	cdn.set("/css/site.css", page{ctype: "text/css", body: `body { background-color: rgb(0, 128, 0) } #logo { width: 30px }`})
	cdn.set("/img/logo.png", page{ctype: "image/png", body: img.String()})
	cdn.set("/js/check.js", page{ctype: "text/javascript", body: `window.addEventListener("load", function () {
  var logo = document.getElementById("logo");
  document.body.setAttribute("data-seen", getComputedStyle(document.body).backgroundColor + "|" + logo.naturalWidth + "x" + logo.naturalHeight + "|" + logo.width);
});`})
	cfg := testConfig(t, www.URL+"/")
	cfg.Output.MirrorDir = t.TempDir()
	cfg.Output.MirrorLinks = MirrorLinksRelative
	runCrawl(t, cfg)
	www.Close() // from disk only: nothing may load from the live hosts
	cdn.Close()

	home := filepath.Join(cfg.Output.MirrorDir, filepath.FromSlash(mirror.Path(frontier.MustParse(www.URL+"/"), "text/html")))
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget=5000", "--dump-dom",
		(&url.URL{Scheme: "file", Path: home}).String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, stderr.String())
	}
	if want := `data-seen="rgb(0, 128, 0)|3x2|30"`; !strings.Contains(string(out), want) {
		t.Errorf("the mirrored page, opened from disk, lacks %s (its stylesheet, image or script did not load):\n%s", want, out)
	}
}
