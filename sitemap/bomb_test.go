package sitemap

import (
	"bytes"
	"io"
	"runtime"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// bomb returns a gzip file that inflates to size bytes: head, then filler
// bytes. It is built from one member of 1 MiB repeated (gzip(1) reads
// concatenated members as one file), so it is small and quick to make.
func bomb(t testing.TB, head []byte, filler byte, size int64) []byte {
	t.Helper()
	const chunk = 1 << 20
	block := bytes.Repeat([]byte{filler}, chunk)
	member := func(b []byte) []byte {
		var buf bytes.Buffer
		zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	first := member(append(bytes.Clone(head), block[len(head):]...))
	rest := member(block)
	out := bytes.NewBuffer(first)
	for n := int64(chunk); n < size; n += chunk {
		out.Write(rest)
	}
	return out.Bytes()
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestBomb reads gzip files that inflate to 1 GiB: reading stops at the
// byte cap, having taken a sliver of the compressed file, and the memory
// allocated is a small constant, not a share of the gigabyte.
func TestBomb(t *testing.T) {
	const gib = 1 << 30
	xmlBomb := bomb(t, []byte(`<?xml version="1.0"?><urlset><url><loc>https://example.com/a</loc></url>`), ' ', gib)
	cases := []struct {
		name  string
		data  []byte
		pages int
		rule  Rule
	}{
		{"zeros", bomb(t, nil, 0, gib), 0, RuleFormat},
		{"urlset and spaces", xmlBomb, 1, RuleMaxBytes},
		{"gzip in gzip", gzipN(t, xmlBomb, 1), 1, RuleMaxBytes},
		{"text lines", bomb(t, nil, '\n', gib), 0, RuleMaxBytes},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if len(c.data) > 2<<20 {
				t.Fatalf("the bomb is %d bytes, not small", len(c.data))
			}
			src := &countingReader{r: bytes.NewReader(c.data)}
			var rules []Rule
			pages := 0
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err := Read(src, "https://example.com/sitemap.xml", Limits{}, func(Entry) error { pages++; return nil },
				func(w Warning) { rules = append(rules, w.Rule) })
			runtime.ReadMemStats(&after)
			if err != nil || pages != c.pages || len(rules) != 1 || rules[0] != c.rule {
				t.Errorf("got %d pages, warnings %v, error %v; want %d pages and a %s warning", pages, rules, err, c.pages, c.rule)
			}
			if res.Bytes > DefaultMaxBytes {
				t.Errorf("read %d uncompressed bytes, more than the cap", res.Bytes)
			}
			// 10 MiB of 1 GiB is about 1% of the compressed file; and
			// there is a read-ahead buffer.
			if src.n > int64(len(c.data))/20+64<<10 {
				t.Errorf("read %d of %d compressed bytes: more than the cap needs", src.n, len(c.data))
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
				t.Errorf("allocated %d bytes reading the bomb, want less than 4 MiB", alloc)
			}
		})
	}
}
