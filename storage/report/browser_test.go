package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// browserHook is appended to the report's HTML by TestHTMLInBrowser: it
// does what a reader would, once the report's own script has run: clicks
// the hops header of the redirects twice (descending), and types
// "ext.test" into the filter of the broken URLs.
const browserHook = `<script>
(function () {
  var hops = document.querySelectorAll("#redirects th")[3];
  hops.click();
  hops.click();
  var f = document.querySelector("#broken input.filter");
  f.value = "ext.test";
  f.dispatchEvent(new Event("input"));
})();
</script>
</body>`

// TestHTMLInBrowser opens the HTML report in a headless Chromium, from
// disk, sorts and filters it with browserHook, and reads the DOM back. It
// is skipped when no Chromium or Chrome is in PATH.
func TestHTMLInBrowser(t *testing.T) {
	var browser string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no chromium, chromium-browser or google-chrome in PATH: the HTML report is not checked in a browser")
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, build(t, true, false), time.Now()); err != nil {
		t.Fatal(err)
	}
	page := strings.Replace(b.String(), "</body>", browserHook, 1)
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	rows := func(section string) (shown, hidden []string) {
		s := string(dom)
		i := strings.Index(s, `id="`+section+`"`)
		if i < 0 {
			t.Fatalf("no section %s in the DOM:\n%s", section, dom)
		}
		s = s[i:]
		s = s[:strings.Index(s, "</section>")]
		for _, m := range regexp.MustCompile(`<tr( hidden="")?><td>(?:<a href="[^"]*">)?([^<]*)`).FindAllStringSubmatch(s, -1) {
			if m[1] != "" {
				hidden = append(hidden, m[2])
			} else {
				shown = append(shown, m[2])
			}
		}
		return shown, hidden
	}
	shown, _ := rows("redirects")
	want := "https://ex.test/loop1 https://ex.test/loop2 https://ex.test/old https://ex.test/mid https://ex.test/redir-404"
	if got := strings.Join(shown, " "); got != want {
		t.Errorf("redirects by hops, descending:\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(string(dom), `data-dir="desc">hops</th>`) {
		t.Errorf("the hops header is not marked descending")
	}
	shown, hidden := rows("broken")
	if strings.Join(shown, " ") != "https://ext.test/dead" || len(hidden) != 4 {
		t.Errorf("broken filtered by ext.test: shown %q, hidden %q", shown, hidden)
	}
	if !strings.Contains(string(dom), `<span class="shown">1</span>`) {
		t.Errorf("the broken table does not say 1 row shown")
	}
}
