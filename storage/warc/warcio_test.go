package warc_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/crawler/storage/warc"
)

// TestWarcioAgrees has webrecorder's own indexer, warcio.js (npm), read
// the writer's files: it must parse every record and make the very index
// the writer wrote beside them. It needs node and WARCIO_CLI, the path of
// warcio's dist/cli.js (npm install warcio; see the README), and skips
// without them.
func TestWarcioAgrees(t *testing.T) {
	cli := os.Getenv("WARCIO_CLI")
	node, err := exec.LookPath("node")
	if cli == "" || err != nil {
		t.Skip("needs node and WARCIO_CLI=.../node_modules/warcio/dist/cli.js")
	}
	if _, err := os.Stat(cli); err != nil {
		t.Skipf("WARCIO_CLI: %v", err)
	}
	dir := t.TempDir()
	idx := newMemIndex()
	w, err := warc.NewWriter(warc.Options{Dir: dir, Software: "test", Index: idx})
	if err != nil {
		t.Fatal(err)
	}
	html := http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Etag": {`"v1"`}}
	gz := http.Header{"Content-Type": {"text/css"}, "Content-Encoding": {"gzip"}, "Transfer-Encoding": {"chunked"}}
	for _, e := range []warc.Exchange{
		ex("http://www.example.com/", 0, 200, html, []byte("<title>x</title>")),
		ex("http://example.com/style.css?v=2&a=1", time.Second, 200, gz, gzipped(t, "body { color: red }")),
		ex("http://127.0.0.1:8080/same/", 2*time.Second, 200, http.Header{"Content-Type": {"text/plain"}}, []byte("same")),
		ex("http://127.0.0.1:8080/Other", 3*time.Second, 200, http.Header{"Content-Type": {"text/plain"}}, []byte("same")),
		ex("http://www.example.com/", time.Hour, 304, http.Header{"Etag": {`"v1"`}}, nil),
		ex("http://example.com/missing", 4*time.Second, 404, http.Header{"Content-Type": {"text/html"}}, []byte("not here")),
	} {
		if _, err := idx.write(w, e, warc.Ref{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.warc.gz"))
	cmd := exec.Command(node, cli, "cdx-index", files[0])
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("warcio cdx-index: %v", err)
	}
	theirs := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(theirs)
	data, err := os.ReadFile(warc.IndexPath(files[0]))
	if err != nil {
		t.Fatal(err)
	}
	ours := strings.Split(strings.TrimSpace(string(data)), "\n")
	if !slices.Equal(ours, theirs) {
		t.Errorf("our index:\n%s\nwarcio's:\n%s", strings.Join(ours, "\n"), strings.Join(theirs, "\n"))
	}
}
