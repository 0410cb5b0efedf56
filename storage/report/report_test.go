package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write the testdata/report.golden.* files from what the package writes")

// open opens a file of testdata.
func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// build makes the report of testdata's inventory, link graph and, with
// previous, the earlier inventory.
func build(t *testing.T, links, previous bool) *Report {
	t.Helper()
	in := Inputs{Inventory: open(t, "urls.jsonl")}
	if links {
		in.Links = open(t, "links.jsonl")
	}
	if previous {
		in.Previous = open(t, "previous.jsonl")
	}
	r, err := Build(in, Names{Inventory: "urls.jsonl", Links: "links.jsonl", Previous: "previous.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestGolden(t *testing.T) {
	r := build(t, true, true)
	var compact, got bytes.Buffer
	if err := WriteJSON(&compact, r); err != nil {
		t.Fatal(err)
	}
	if err := json.Indent(&got, compact.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.golden.json", got.Bytes())
	wantWarnings := []string{
		"urls.jsonl: skipped 2 malformed lines (the first is line 7)",
		"links.jsonl: skipped 1 malformed line (line 24)",
	}
	if len(r.Warnings) != len(wantWarnings) {
		t.Fatalf("warnings %q, want %d", r.Warnings, len(wantWarnings))
	}
	for i, w := range wantWarnings {
		if !strings.HasPrefix(r.Warnings[i], w) {
			t.Errorf("warning %q, want it to start %q", r.Warnings[i], w)
		}
	}
}

// decode is the report as a consumer of its JSON sees it.
func decode(t *testing.T, r *Report) map[string]any {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// checkGolden compares got with testdata/name, which -update writes
// from got instead.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update to accept):\n%s", golden, got)
	}
}
