package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The CI gate: --fail-on exits 1 on a finding of its severity or above
// or of a rule it names, --baseline leaves out what an earlier report
// had, --accept and report.accept make statuses not broken; the CI
// formats hold every finding.
func TestReportCIGate(t *testing.T) {
	dir := t.TempDir()
	urls := filepath.Join(dir, "u.jsonl")
	links := filepath.Join(dir, "l.jsonl")
	write := func(path, s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const page = `{"url":"https://ex.test/","status":200,"content_type":"text/html","found_via":"seed","link_depth":0,"title":"Home","description":"D","h1":"H"}` + "\n"
	write(urls, page+`{"url":"https://ex.test/wall","status":403,"found_via":"link","link_depth":1}`+"\n")
	write(links, `{"from":"https://ex.test/","to":"https://ex.test/wall","kind":"a"}`+"\n")
	run := func(args ...string) (string, int) {
		t.Helper()
		out, stderr, code := runCmd(t, "", append([]string{"report", "--urls", urls, "--links", links}, args...)...)
		if code == 2 {
			t.Fatalf("%q: exit 2: %s", args, stderr)
		}
		return out, code
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{nil, 0},
		{[]string{"--fail-on", "error"}, 1},
		{[]string{"--fail-on", "notice"}, 1},
		{[]string{"--fail-on", "broken-link"}, 1},
		{[]string{"--fail-on", "title-missing,deep-page"}, 0},
		{[]string{"--fail-on", "error", "--accept", "403,999"}, 0},
		{[]string{"--fail-on", "warning", "-c", writeFile(t, "accept.yaml", "report:\n  accept: [403]\n")}, 0},
		{[]string{"--fail-on", "error", "-c", writeFile(t, "off.yaml", "report:\n  disable: [broken-link]\n")}, 0},
	} {
		if _, code := run(c.args...); code != c.code {
			t.Errorf("%q: exit %d, want %d", c.args, code, c.code)
		}
	}

	// A baseline with the broken link: it fails nothing, and is marked.
	old, _ := run("--format", "json")
	base := filepath.Join(dir, "base.json")
	write(base, old)
	out, code := run("--format", "json", "--baseline", base, "--fail-on", "error")
	if code != 0 || !strings.Contains(out, `"baseline":true`) {
		t.Errorf("with the baseline: exit %d, want 0 and the finding marked:\n%s", code, out)
	}
	// A new broken link is not in the baseline.
	write(urls, page+`{"url":"https://ex.test/wall","status":403,"found_via":"link","link_depth":1}`+"\n"+
		`{"url":"https://ex.test/gone","status":404,"found_via":"link","link_depth":1}`+"\n")
	write(links, `{"from":"https://ex.test/","to":"https://ex.test/wall","kind":"a"}`+"\n"+`{"from":"https://ex.test/","to":"https://ex.test/gone","kind":"a"}`+"\n")
	if _, code := run("--baseline", base, "--fail-on", "error"); code != 1 {
		t.Errorf("a new broken link with the baseline: exit %d, want 1", code)
	}
	for _, args := range [][]string{{"--fail-on", "errors"}, {"--accept", "forbidden"}, {"--baseline", urls}} {
		if _, _, code := runCmd(t, "", append([]string{"report", "--urls", urls}, args...)...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}

	// The formats hold the two findings.
	var rep struct {
		Findings []struct{ Rule, URL string }
	}
	out, _ = run("--format", "json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Findings) != 2 {
		t.Fatalf("json: %v, findings %v", err, rep.Findings)
	}
	out, _ = run("--format", "junit")
	var junit struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &junit); err != nil || junit.Failures != 2 {
		t.Fatalf("junit: %v, %d failures:\n%s", err, junit.Failures, out)
	}
	out, _ = run("--format", "sarif")
	var sarif struct {
		Version string
		Runs    []struct {
			Results []struct {
				RuleID    string
				Level     string
				Locations []struct {
					PhysicalLocation struct{ ArtifactLocation struct{ URI string } }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &sarif); err != nil || sarif.Version != "2.1.0" || len(sarif.Runs[0].Results) != 2 ||
		sarif.Runs[0].Results[0].Level != "error" || sarif.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI != rep.Findings[0].URL {
		t.Fatalf("sarif: %v:\n%s", err, out)
	}
	out, _ = run("--format", "github")
	if n := strings.Count(out, "::error title=broken-link::"); n != 2 {
		t.Errorf("github: %d broken-link lines, want 2:\n%s", n, out)
	}
	if out, _ = run("--format", "markdown"); !strings.Contains(out, "| `broken-link` | error | 2 |") {
		t.Errorf("markdown:\n%s", out)
	}
}
