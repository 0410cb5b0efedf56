package report

import (
	"bytes"
	"fmt"
	"testing"
)

// ciReport is a report with what a SARIF log or JUnit says of each finding: a
// detail, the baseline, a rule turned off, text JSON would escape as HTML
// and a control that storage.JSONWriter escapes.
func ciReport() *Report {
	r := &Report{Baselined: true}
	for i, ri := range Rules[:4] {
		n := 3 * i
		if i == 3 {
			n = 0 // off: judged nothing
		}
		r.Rules = append(r.Rules, RuleCount{Rule: ri.Name, Severity: ri.Severity, Count: n, Off: i == 3})
		for k := range n {
			f := Finding{Rule: ri.Name, Severity: ri.Severity, URL: fmt.Sprintf("https://ex.test/%s/%d?a=1&b=<%c>", ri.Name, k, 0x85), Baseline: k == 1}
			if k%2 == 0 {
				f.Detail = "a detail"
			}
			r.Findings = append(r.Findings, f)
		}
	}
	return r
}

// WriteSARIF writes each result as it goes, the same log as encoding it
// whole did (testdata/report.golden.sarif, written by that encoding).
func TestWriteSARIFGolden(t *testing.T) {
	var got bytes.Buffer
	if err := WriteSARIF(&got, ciReport(), "v1.2.3"); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.golden.sarif", got.Bytes())
}

// WriteJUnit writes each suite and case as it goes, the same XML as
// encoding it whole did (testdata/report.golden.junit.xml, written by
// that encoding).
func TestWriteJUnitGolden(t *testing.T) {
	var got bytes.Buffer
	if err := WriteJUnit(&got, ciReport()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.golden.junit.xml", got.Bytes())
}
