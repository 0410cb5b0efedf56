package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/politecrawl/crawler/storage"
)

// githubPerRule is how many findings of one rule WriteGitHub annotates;
// GitHub shows only so many annotations of a step anyway.
const githubPerRule = 10

// markdownPerRule is how many findings of one rule WriteMarkdown lists.
const markdownPerRule = 10

// byRule yields each rule of r.Rules with its findings (r.Findings is
// sorted by rule, not in r.Rules' order).
func (r *Report) byRule(yield func(rc RuleCount, fs []Finding) bool) {
	at := map[string][2]int{}
	for i := 0; i < len(r.Findings); {
		j := i
		for j < len(r.Findings) && r.Findings[j].Rule == r.Findings[i].Rule {
			j++
		}
		at[r.Findings[i].Rule] = [2]int{i, j}
		i = j
	}
	for _, rc := range r.Rules {
		span := at[rc.Rule]
		if !yield(rc, r.Findings[span[0]:span[1]]) {
			return
		}
	}
}

// JUnit's shapes, as CI servers (GitLab, Jenkins) read them: testsuites
// holds a testsuite per rule, with these attributes, which holds
// testcases.
type (
	junitCase struct {
		Name      string        `xml:"name,attr"`
		ClassName string        `xml:"classname,attr"`
		Failure   *junitFailure `xml:"failure"`
		Skipped   *struct{}     `xml:"skipped"`
	}
	junitFailure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes r as JUnit XML: a testsuite per rule, a failed
// testcase (named by the URL) per finding, and one passing testcase
// named by the rule for a rule with none (a skipped one for a rule
// turned off). A finding the baseline had says so in its message. The
// cases are written one by one, not held whole: a large crawl has
// millions of findings.
func WriteJUnit(w io.Writer, r *Report) error {
	// The totals head the document: counted first.
	cases := func(rc RuleCount, fs []Finding) int { // a turned-off rule's: one, skipped
		if rc.Off {
			return 1
		}
		return max(len(fs), 1)
	}
	tests, failures := 0, 0
	for rc, fs := range r.byRule {
		tests += cases(rc, fs)
		failures += len(fs)
	}
	attr := func(name string, v any) xml.Attr { return xml.Attr{Name: xml.Name{Local: name}, Value: fmt.Sprint(v)} }
	bw := bufio.NewWriter(w)
	bw.WriteString(xml.Header)
	enc := xml.NewEncoder(bw)
	enc.Indent("", "  ")
	suites := xml.StartElement{Name: xml.Name{Local: "testsuites"},
		Attr: []xml.Attr{attr("name", "crawler report"), attr("tests", tests), attr("failures", failures)}}
	if err := enc.EncodeToken(suites); err != nil {
		return err
	}
	caseElem := xml.StartElement{Name: xml.Name{Local: "testcase"}}
	for rc, fs := range r.byRule {
		skipped := 0
		if rc.Off {
			skipped = 1
		}
		suite := xml.StartElement{Name: xml.Name{Local: "testsuite"},
			Attr: []xml.Attr{attr("name", rc.Rule), attr("tests", cases(rc, fs)), attr("failures", len(fs)), attr("skipped", skipped)}}
		if err := enc.EncodeToken(suite); err != nil {
			return err
		}
		switch {
		case rc.Off:
			fs = nil
			if err := enc.EncodeElement(junitCase{Name: rc.Rule, ClassName: rc.Rule, Skipped: &struct{}{}}, caseElem); err != nil {
				return err
			}
		case len(fs) == 0:
			if err := enc.EncodeElement(junitCase{Name: rc.Rule, ClassName: rc.Rule}, caseElem); err != nil {
				return err
			}
		}
		for _, f := range fs {
			msg := f.Severity.String() + ": " + f.Rule
			if f.Detail != "" {
				msg += ": " + f.Detail
			}
			if f.Baseline {
				msg += " (in the baseline)"
			}
			c := junitCase{Name: xmlText(f.URL), ClassName: rc.Rule,
				Failure: &junitFailure{Message: xmlText(msg), Type: f.Severity.String(), Text: xmlText(f.URL + "\n" + msg)}}
			if err := enc.EncodeElement(c, caseElem); err != nil {
				return err
			}
		}
		if err := enc.EncodeToken(suite.End()); err != nil {
			return err
		}
	}
	if err := enc.EncodeToken(suites.End()); err != nil {
		return err
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	bw.WriteString("\n")
	return bw.Flush()
}

// xmlText is s with the characters XML 1.0 cannot hold (most C0
// controls, U+FFFE, U+FFFF, invalid UTF-8) as U+FFFD: encoding/xml
// escapes markup but writes those as they are.
func xmlText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20, r == 0xFFFE, r == 0xFFFF, r == 0xFFFD:
			return 0xFFFD
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// sarifLevel is SARIF's level of a severity.
func sarifLevel(s Severity) string {
	switch s {
	case Error:
		return "error"
	case Warning:
		return "warning"
	}
	return "note"
}

// WriteSARIF writes r as a SARIF 2.1.0 log: one run whose tool's rules
// are the report's (each with its severity as its default level), a
// result per finding located at its URL. With a baseline, each result's
// baselineState is "unchanged" (the baseline had it) or "new". The
// results are written one by one, as WriteJSON writes long lists, not
// held whole: a large crawl has millions.
func WriteSARIF(w io.Writer, r *Report, version string) error {
	type msg struct {
		Text string `json:"text"`
	}
	type rule struct {
		ID                   string         `json:"id"`
		ShortDescription     msg            `json:"shortDescription"`
		DefaultConfiguration map[string]any `json:"defaultConfiguration"`
	}
	type location struct {
		PhysicalLocation struct {
			ArtifactLocation struct {
				URI string `json:"uri"`
			} `json:"artifactLocation"`
		} `json:"physicalLocation"`
	}
	type result struct {
		RuleID        string     `json:"ruleId"`
		RuleIndex     int        `json:"ruleIndex"`
		Level         string     `json:"level"`
		Message       msg        `json:"message"`
		Locations     []location `json:"locations"`
		BaselineState string     `json:"baselineState,omitempty"`
	}
	rules := make([]rule, len(r.Rules))
	index := map[string]int{}
	for i, rc := range r.Rules {
		doc := rc.Rule
		if info, ok := RuleByName(rc.Rule); ok {
			doc = info.Doc
		}
		conf := map[string]any{"level": sarifLevel(rc.Severity)}
		if rc.Off {
			conf["enabled"] = false
		}
		rules[i] = rule{ID: rc.Rule, ShortDescription: msg{doc}, DefaultConfiguration: conf}
		index[rc.Rule] = i
	}
	bw := bufio.NewWriter(w)
	out := storage.JSONWriter(bw) // no C1 or bidi control raw
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	put := func(head string, v any) error { // head, then v's JSON without Encode's newline
		buf.Reset()
		buf.WriteString(head)
		if err := enc.Encode(v); err != nil {
			return err
		}
		_, err := out.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		return err
	}
	// The members in the order encoding/json gives a map's: by name.
	if _, err := io.WriteString(out, `{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","runs":[{"results":[`); err != nil {
		return err
	}
	res := result{Locations: make([]location, 1)}
	for k, f := range r.Findings {
		text := f.URL
		if f.Detail != "" {
			text += ": " + f.Detail
		}
		res.RuleID, res.RuleIndex, res.Level, res.Message = f.Rule, index[f.Rule], sarifLevel(f.Severity), msg{text}
		res.Locations[0].PhysicalLocation.ArtifactLocation.URI = f.URL
		if r.Baselined {
			res.BaselineState = "new"
			if f.Baseline {
				res.BaselineState = "unchanged"
			}
		}
		head := ","
		if k == 0 {
			head = ""
		}
		if err := put(head, &res); err != nil {
			return err
		}
	}
	tool := map[string]any{"driver": map[string]any{
		"name": "crawler report", "informationUri": "https://github.com/politecrawl/crawler",
		"version": version, "rules": rules,
	}}
	if err := put(`],"tool":`, tool); err != nil {
		return err
	}
	if _, err := io.WriteString(out, `}],"version":"2.1.0"}`+"\n"); err != nil {
		return err
	}
	return bw.Flush()
}

// WriteGitHub writes r as GitHub Actions workflow commands: a
// ::error, ::warning or ::notice line per finding (titled by its rule),
// at most githubPerRule per rule and then a plain line saying how many
// more. A finding the baseline had says so.
func WriteGitHub(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	for rc, fs := range r.byRule {
		for i, f := range fs {
			if i == githubPerRule {
				fmt.Fprintf(bw, "%s: %d more findings (crawler report --format json lists them all)\n", rc.Rule, len(fs)-i)
				break
			}
			text := f.URL
			if f.Detail != "" {
				text += ": " + f.Detail
			}
			if f.Baseline {
				text += " (in the baseline)"
			}
			fmt.Fprintf(bw, "::%s title=%s::%s\n", f.Severity, ghProperty(f.Rule), ghData(text))
		}
	}
	return bw.Flush()
}

// ghData escapes a workflow command's message as GitHub's toolkit does;
// C1 and bidi controls, which a terminal or a log viewer may act on,
// are written as \uXXXX.
func ghData(s string) string { return printable(ghDataEscapes.Replace(s)) }

// ghProperty escapes a workflow command's property value.
func ghProperty(s string) string { return ghPropertyEscapes.Replace(ghData(s)) }

// The escapes of ghData and ghProperty, made once: a Replacer builds its
// tables on its first use, which a Replacer per finding did again each time.
var (
	ghDataEscapes     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	ghPropertyEscapes = strings.NewReplacer(":", "%3A", ",", "%2C")
)

// WriteMarkdown writes r for a CI job's summary: the findings counted by
// severity and by rule, then each rule's first findings.
func WriteMarkdown(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	var bySev [Error + 1]int
	newOnes := 0
	for _, f := range r.Findings {
		bySev[f.Severity]++
		if !f.Baseline {
			newOnes++
		}
	}
	fmt.Fprintf(bw, "## Crawl audit\n\n%d findings: %d errors, %d warnings, %d notices", len(r.Findings), bySev[Error], bySev[Warning], bySev[Notice])
	if r.Baselined {
		fmt.Fprintf(bw, " (%d new since the baseline)", newOnes)
	}
	fmt.Fprintf(bw, ".\n\n| rule | severity | findings |\n| --- | --- | ---: |\n")
	for _, rc := range r.Rules {
		if rc.Count > 0 {
			fmt.Fprintf(bw, "| `%s` | %s | %d |\n", rc.Rule, rc.Severity, rc.Count)
		}
	}
	for rc, fs := range r.byRule {
		if len(fs) == 0 {
			continue
		}
		fmt.Fprintf(bw, "\n### `%s` (%s, %d)\n\n", rc.Rule, rc.Severity, len(fs))
		for i, f := range fs {
			if i == markdownPerRule {
				fmt.Fprintf(bw, "- … and %d more\n", len(fs)-i)
				break
			}
			line := "- " + mdText(f.URL)
			if f.Detail != "" {
				line += " — " + mdText(f.Detail)
			}
			if f.Baseline {
				line += " (in the baseline)"
			}
			fmt.Fprintln(bw, line)
		}
	}
	return bw.Flush()
}

// mdText is s as Markdown text that shows as written: what a crawled
// site wrote (a URL, a title in a detail) makes no markup, link or HTML.
func mdText(s string) string {
	var b strings.Builder
	for _, r := range printable(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)) {
		if strings.ContainsRune("\\`*_[]<>|~&", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
