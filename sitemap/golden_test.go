package sitemap

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

var update = flag.Bool("update", false, "rewrite the golden files' expected output from the current behaviour")

// goldenCase is one file of testdata/golden: NAME.in is the input as a
// server would send it (before the gzip layers the header asks for) and
// NAME.golden holds header lines ("# key: value") then the expected
// events, one per line, in the order Read produced them.
type goldenCase struct {
	name   string
	url    string
	gzip   int
	lim    Limits
	header []string
}

func parseGoldenHeader(t *testing.T, name string, golden []byte) goldenCase {
	t.Helper()
	c := goldenCase{name: name, url: "https://example.com/sitemap.xml"}
	for _, line := range strings.Split(string(golden), "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		c.header = append(c.header, line)
		k, v, _ := strings.Cut(strings.TrimSpace(strings.TrimPrefix(line, "#")), ":")
		v = strings.TrimSpace(v)
		var err error
		switch strings.TrimSpace(k) {
		case "url":
			c.url = v
		case "gzip":
			c.gzip, err = strconv.Atoi(v)
		case "max_urls":
			c.lim.MaxURLs, err = strconv.Atoi(v)
		case "max_bytes":
			c.lim.MaxBytes, err = strconv.ParseInt(v, 10, 64)
		case "max_children":
			c.lim.MaxChildren, err = strconv.Atoi(v)
		case "about":
		default:
			t.Fatalf("%s: unknown header key %q", name, k)
		}
		if err != nil {
			t.Fatalf("%s: header %q: %v", name, line, err)
		}
	}
	return c
}

// gzipN applies gzip n times.
func gzipN(t testing.TB, b []byte, n int) []byte {
	t.Helper()
	for range n {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		if _, err := zw.Write(b); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		b = buf.Bytes()
	}
	return b
}

// render runs Read and returns its events as golden lines.
func render(t testing.TB, in []byte, sitemapURL string, lim Limits) string {
	t.Helper()
	var out strings.Builder
	res, err := Read(bytes.NewReader(in), sitemapURL, lim, func(e Entry) error {
		out.WriteString(formatEntry(e))
		out.WriteByte('\n')
		return nil
	}, func(w Warning) {
		fmt.Fprintf(&out, "warn %s", w.Rule)
		if w.Limit != 0 {
			fmt.Fprintf(&out, " limit=%d", w.Limit)
		}
		if w.URL != "" {
			fmt.Fprintf(&out, " %s", oneLine(w.URL))
		}
		fmt.Fprintf(&out, " | %s\n", w.Detail)
	})
	if err != nil {
		fmt.Fprintf(&out, "error %v\n", err)
	}
	fmt.Fprintf(&out, "result kind=%s pages=%d children=%d dropped=%d bytes=%d gzip=%d cut=%t\n",
		res.Kind, res.Pages, res.Children, res.Dropped, res.Bytes, res.Gzip, res.Cut)
	return out.String()
}

func formatEntry(e Entry) string {
	var b strings.Builder
	if e.Child {
		b.WriteString("child ")
	} else {
		b.WriteString("page ")
	}
	b.WriteString(oneLine(e.Loc))
	if e.LastmodRaw != "" {
		fmt.Fprintf(&b, " lastmod=%s(%s)", e.LastmodRaw, e.Lastmod.Format(time.RFC3339Nano))
	}
	if e.ChangeFreq != "" {
		fmt.Fprintf(&b, " changefreq=%s", e.ChangeFreq)
	}
	if !e.Child {
		fmt.Fprintf(&b, " priority=%g", e.Priority)
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/golden/*.in")
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatal("no golden cases")
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".in")
		t.Run(name, func(t *testing.T) {
			goldenPath := strings.TrimSuffix(in, ".in") + ".golden"
			golden, err := os.ReadFile(goldenPath)
			if err != nil && !(*update && os.IsNotExist(err)) {
				t.Fatal(err)
			}
			c := parseGoldenHeader(t, name, golden)
			body, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			got := render(t, gzipN(t, body, c.gzip), c.url, c.lim)
			if *update {
				var b strings.Builder
				for _, h := range c.header {
					b.WriteString(h + "\n")
				}
				b.WriteString(got)
				if err := os.WriteFile(goldenPath, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want := string(golden)
			for _, h := range c.header {
				want = strings.TrimPrefix(want, h+"\n")
			}
			if got != want {
				t.Errorf("%s: output differs from %s\n--- got\n%s--- want\n%s", in, goldenPath, got, want)
			}
		})
	}
}
