package crawler

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/politecrawl/crawler"

// allowedImports lists, for each package of the module, the non-standard
// imports its non-test files may use. The arrows point one way: robots and
// sitemap know nothing of the rest, politeness knows robots, frontier and
// storage know bbolt, the root wires them all and cmd/crawler wires the root.
// Go's go/build/deps_test.go is the model.
var allowedImports = map[string][]string{
	"robots":         {},
	"sitemap":        {"github.com/klauspost/compress/"},
	"frontier":       {"go.etcd.io/bbolt", "golang.org/x/net/idna"},
	"politeness":     {module + "/robots", "golang.org/x/time/rate"},
	"storage":        {module + "/robots", module + "/storage/warc", "go.etcd.io/bbolt", "github.com/cespare/xxhash/v2"}, // xxhash: the page's content hash, a leaf library the Prometheus client links in already
	"storage/warc":   {"github.com/klauspost/compress/"},
	"storage/links":  {"github.com/PuerkitoBio/goquery", "github.com/andybalholm/cascadia", "golang.org/x/net/html/"}, // cascadia: goquery's selectors, compiled once
	"storage/mirror": {module + "/storage/links"},
	"storage/relink": {module + "/storage", module + "/storage/links", module + "/storage/mirror", module + "/frontier"},
	"storage/report": {module + "/storage", module + "/frontier"},
	"storage/render": {"github.com/chromedp/"},
	"storage/lru":    {},
	"storage/reach":  {},
	".": {
		module + "/robots", module + "/sitemap", module + "/frontier",
		module + "/politeness", module + "/storage", module + "/storage/", module + "/frontier/cluster",
		"golang.org/x/net/", "golang.org/x/time/rate", "golang.org/x/sys/unix", // x/sys: statfs for /readyz
		"github.com/klauspost/compress/", "github.com/prometheus/client_golang/",
	},
	"cmd/crawler": {
		module, module + "/", "go.yaml.in/yaml/v3", "golang.org/x/term",
		"github.com/prometheus/client_golang/", "github.com/prometheus/exporter-toolkit/web",
	},

	// nats.go's client only: nats-server is imported by _test.go files
	// alone, which these rules do not read, so the binary never links it.
	"frontier/cluster": {module + "/frontier", "github.com/nats-io/nats.go/"},
	// The tests' embedded server; TestOnlyTestsImportClustertest keeps
	// it out of the binary.
	"frontier/cluster/clustertest": {"github.com/nats-io/nats-server/"},
	// The tests' second WARC reader; TestOnlyTestsImportClustertest keeps
	// it out of the binary too.
	"storage/warc/warctest": {"github.com/klauspost/compress/", "github.com/nlnwa/gowarc"},
	"storage/wacz":          {module + "/storage", module + "/storage/warc"},
}

// TestOnlyTestsImportClustertest fails when a package's non-test files
// import clustertest or warctest, which would link nats-server or gowarc
// into the binary.
func TestOnlyTestsImportClustertest(t *testing.T) {
	for dir := range allowedImports {
		for path, file := range parseImports(t, dir) {
			if path == module+"/frontier/cluster/clustertest" || path == module+"/storage/warc/warctest" {
				t.Errorf("%s imports %s, which only tests may", file, path)
			}
		}
	}
}

func TestImportDirections(t *testing.T) {
	for dir, allowed := range allowedImports {
		for path, file := range parseImports(t, dir) {
			if isStandard(path) || permitted(path, allowed) {
				continue
			}
			t.Errorf("%s imports %q, which package %q may not use", file, path, dir)
		}
	}
}

// TestEveryPackageHasImportRules fails on a package allowedImports does
// not list, whose imports TestImportDirections would not check: only
// frontier and the storage packages may use bbolt, and a new package must
// say what it may use.
func TestEveryPackageHasImportRules(t *testing.T) {
	reported := map[string]bool{}
	err := filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (p != "." && strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		if _, ok := allowedImports[dir]; !ok && !reported[dir] {
			t.Errorf("package %q is not in allowedImports", dir)
			reported[dir] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// parseImports returns each import of the non-test Go files in dir, with a
// file that uses it.
func parseImports(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	imports := map[string]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ast, err := parser.ParseFile(fset, f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			imports[strings.Trim(imp.Path.Value, `"`)] = f
		}
	}
	return imports
}

// isStandard reports whether path is in the standard library: its first
// element has no dot.
func isStandard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func permitted(path string, allowed []string) bool {
	return slices.ContainsFunc(allowed, func(a string) bool {
		if strings.HasSuffix(a, "/") {
			return strings.HasPrefix(path, a) || path == strings.TrimSuffix(a, "/")
		}
		return path == a
	})
}
