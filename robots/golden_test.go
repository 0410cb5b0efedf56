package robots

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func testdataFile(name string) ([]byte, error) {
	return os.ReadFile(filepath.Join("testdata", name))
}

// TestGolden checks each testdata/NAME.robots against NAME.golden: for
// every agent named on the "# agents:" line of NAME.urls and every URL
// there, the verdict, and the sitemaps, crawl-delays and stats. Run with
// -update to rewrite the golden files, then review the diff.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.robots"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".robots")
		t.Run(name, func(t *testing.T) {
			body, err := testdataFile(name + ".robots")
			if err != nil {
				t.Fatal(err)
			}
			urls, err := testdataFile(name + ".urls")
			if err != nil {
				t.Fatal(err)
			}
			got := goldenReport(Parse(body), string(urls))
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the verdicts now:\n%s", path, lineDiff(want, got))
			}
		})
	}
}

func goldenReport(r *Rules, urls string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# stats: %+v\n", r.Stats())
	for _, s := range r.Sitemaps() {
		fmt.Fprintf(&b, "# sitemap: %s\n", s)
	}
	lines := strings.Split(strings.TrimSpace(urls), "\n")
	agents := strings.Fields(strings.TrimPrefix(lines[0], "# agents:"))
	for _, a := range agents {
		g := r.ForAgent(a)
		if d, ok := g.CrawlDelay(); ok {
			fmt.Fprintf(&b, "# %s: crawl-delay %v\n", a, d)
		}
		for _, u := range lines[1:] {
			verdict := "disallowed"
			if g.Allowed(u) {
				verdict = "allowed"
			}
			fmt.Fprintf(&b, "%s\t%s\t%s\n", a, verdict, u)
		}
	}
	return b.Bytes()
}

// lineDiff lists the lines that differ, for a readable failure.
func lineDiff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %q\n  got  %q\n", i+1, wl, gl)
		}
	}
	return b.String()
}

// TestGoldenAgainstGoogle checks the golden verdicts that are in the common
// domain against the oracle of Google's algorithm.
func TestGoldenAgainstGoogle(t *testing.T) {
	n := 0
	for _, name := range []string{"realistic", "rfc9309", "edge"} {
		body, err := testdataFile(name + ".robots")
		if err != nil {
			t.Fatal(err)
		}
		urls, err := testdataFile(name + ".urls")
		if err != nil {
			t.Fatal(err)
		}
		r := Parse(body)
		lines := strings.Split(strings.TrimSpace(string(urls)), "\n")
		for _, agent := range strings.Fields(strings.TrimPrefix(lines[0], "# agents:")) {
			tok := ProductToken(agent)
			for _, u := range lines[1:] {
				if !inCommonDomain(string(body), tok, u) {
					continue
				}
				n++
				if got, want := r.Allowed(agent, u), googleAllowed(string(body), tok, u); got != want {
					t.Errorf("%s: agent %q url %q: allowed %v, Google %v", name, agent, u, got, want)
				}
			}
		}
	}
	if n < 300 {
		t.Errorf("only %d verdicts checked", n)
	}
}
