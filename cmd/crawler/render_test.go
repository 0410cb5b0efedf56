package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// With render.enabled and no browser at render.browser, neither a crawl
// nor validate starts: exit 2 naming the key (README, "Rendering").
func TestRenderWithoutBrowserExits2(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-chromium")
	path := writeFile(t, "render.yaml", "seeds: [http://127.0.0.1:1/]\nstate_dir: "+filepath.Join(dir, "state")+
		"\nrender:\n  enabled: true\n  browser: "+missing+"\n")
	for _, args := range [][]string{
		{"crawl", "-c", path},
		{"validate", "-c", path},
		{"crawl", "--render", "--state-dir", filepath.Join(dir, "s2"), "-c", writeFile(t, "b.yaml", "render:\n  browser: "+missing+"\n"), "http://127.0.0.1:1/"},
	} {
		_, stderr, code := runCmd(t, "", args...)
		if code != 2 || !strings.Contains(stderr, "render.browser") {
			t.Errorf("%s: exit %d, stderr %q; want 2 naming render.browser", strings.Join(args, " "), code, stderr)
		}
	}
}
