package links

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkReadDocsPages reads every page of the PostgreSQL 15 and Python
// 3.11 documentation as Debian installs them (postgresql-doc-15,
// python3.11-doc) through ReadHTMLLimit, as a crawl of them reads each
// (nginx serves them as text/html, no charset; the default limit). It is
// skipped where they are not installed.
func BenchmarkReadDocsPages(b *testing.B) {
	var bodies [][]byte
	size := 0
	for _, dir := range []string{"/usr/share/doc/postgresql-doc-15/html", "/usr/share/doc/python3.11/html"} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".html") {
				if body, err := os.ReadFile(p); err == nil {
					bodies = append(bodies, body)
					size += len(body)
				}
			}
			return nil
		})
	}
	if len(bodies) == 0 {
		b.Skip("no PostgreSQL or Python documentation installed")
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, body := range bodies {
			ReadHTMLLimit(body, "text/html", 10000)
		}
	}
	b.ReportMetric(float64(len(bodies)), "pages")
}
