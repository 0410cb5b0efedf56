package report

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Severity is how much a finding matters: Error over Warning over Notice.
type Severity uint8

// The severities, least first, so that a greater one matters more.
const (
	Notice Severity = iota + 1
	Warning
	Error
)

var severityNames = [...]string{Notice: "notice", Warning: "warning", Error: "error"}

// String is the README's name of s: error, warning or notice.
func (s Severity) String() string {
	if int(s) < len(severityNames) && severityNames[s] != "" {
		return severityNames[s]
	}
	return "severity(" + itoa(int(s)) + ")"
}

// ParseSeverity reads error, warning or notice.
func ParseSeverity(s string) (Severity, bool) {
	for i, n := range severityNames {
		if n != "" && n == s {
			return Severity(i), true
		}
	}
	return 0, false
}

// MarshalText writes s's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (s *Severity) UnmarshalText(b []byte) error {
	v, ok := ParseSeverity(string(b))
	if !ok {
		return fmt.Errorf("severity %q: want error, warning or notice", b)
	}
	*s = v
	return nil
}

// RuleInfo is a rule of the README's table "The audit's verdicts".
type RuleInfo struct {
	Name     string
	Severity Severity // the README's; Options.Rules may change it
	Doc      string   // when it fires, in a line
}

// Rules are every rule the report judges, in the README's order.
var Rules = []RuleInfo{
	{"broken-link", Error, "a crawl-host target linked from a fetched page has a final status ≥ 400 or no answer"},
	{"broken-external-link", Warning, "an out-of-scope target asked by check_external has a final status ≥ 400 or no answer"},
	{"broken-fragment", Warning, "a link's #fragment names no id and no <a name> on its 200 HTML target"},
	{"redirect-chain", Warning, "a redirect chain of 2 hops or more"},
	{"redirect-loop", Error, "a redirect chain that comes back to a URL it passed"},
	{"link-to-redirect", Notice, "an a link of a crawl page points at a crawl URL that redirects"},
	{"mixed-content", Warning, "an https page has a requisite over http"},
	{"orphan", Warning, "a URL a sitemap lists that no fetched page links to"},
	{"not-in-sitemap", Notice, "an indexable page reached by links that no sitemap lists"},
	{"sitemap-disallowed", Warning, "a URL a sitemap lists is disallowed by robots.txt"},
	{"sitemap-redirect", Warning, "a URL a sitemap lists redirects"},
	{"sitemap-not-200", Warning, "a URL a sitemap lists does not answer 200"},
	{"sitemap-noindex", Warning, "a URL a sitemap lists is noindex"},
	{"sitemap-canonicalised", Warning, "a URL a sitemap lists has a canonical elsewhere"},
	{"canonical-broken", Error, "the page's canonical's final status is not 200"},
	{"canonical-not-http", Error, "the page's canonical is not http(s)"},
	{"canonical-other-host", Warning, "the page's canonical is on another host"},
	{"canonical-elsewhere", Notice, "the page's canonical is another URL"},
	{"canonical-conflict", Warning, "two canonicals of the page name different URLs"},
	{"noindex", Notice, "meta_robots holds noindex"},
	{"title-missing", Error, "no title or an empty one"},
	{"title-duplicate", Warning, "another page has the same title"},
	{"title-too-long", Notice, "title over 60 characters"},
	{"description-missing", Warning, "no meta description or an empty one"},
	{"description-duplicate", Notice, "another page has the same description"},
	{"description-too-long", Notice, "description over 160 characters"},
	{"h1-missing", Warning, "no <h1> with text"},
	{"h1-multiple", Notice, "more than one <h1>"},
	{"img-alt-missing", Notice, "an <img> without an alt attribute"},
	{"lang-missing", Notice, "<html> has no lang"},
	{"thin-content", Notice, "fewer than 200 words of visible text"},
	{"duplicate-content", Warning, "another page's visible text is identical"},
	{"near-duplicate", Notice, "another page's visible text is at least 90 % similar"},
	{"deep-page", Notice, "link_depth over 4"},
	{"slow-page", Notice, "time to first byte over 800 ms"},
	{"hreflang-no-return", Warning, "a page named in hreflang does not name the page back"},
	{"hreflang-broken", Error, "an hreflang target's final status is not 200"},
	{"hreflang-bad-code", Error, "an hreflang lang that is neither x-default nor a BCP 47 language"},
	{"hsts-missing", Notice, "an https page answered without Strict-Transport-Security"},
}

// ruleIndex is the place of a rule's name in Rules.
var ruleIndex = func() map[string]int {
	m := make(map[string]int, len(Rules))
	for i, r := range Rules {
		m[r.Name] = i
	}
	return m
}()

// RuleByName returns the rule named name.
func RuleByName(name string) (RuleInfo, bool) {
	i, ok := ruleIndex[name]
	if !ok {
		return RuleInfo{}, false
	}
	return Rules[i], true
}

// Options are how the rules judge: the config's report block. The zero
// value is the README's thresholds, every rule on at its severity.
type Options struct {
	TitleMax       int           // title-too-long: over this many characters; 0 = 60
	DescriptionMax int           // description-too-long: 0 = 160
	ThinWords      int           // thin-content: fewer words than this; 0 = 200
	NearDuplicate  float64       // near-duplicate: at least this similar (0–1]; 0 = 0.9
	SlowTTFB       time.Duration // slow-page: a first byte later than this; 0 = 800ms
	MaxDepth       int           // deep-page: link_depth over this; 0 = 4
	// Accept are statuses that are not broken (bot walls: 403, 429, 999).
	Accept []int
	// Rules change a rule's severity ("error", "warning", "notice") or
	// turn it "off", by its name.
	Rules map[string]string
}

// Check reports the first problem of o, naming its key as the config's
// report block does.
func (o Options) Check() error {
	switch {
	case o.TitleMax < 0:
		return fmt.Errorf("title_max: must be ≥ 0, got %d", o.TitleMax)
	case o.DescriptionMax < 0:
		return fmt.Errorf("description_max: must be ≥ 0, got %d", o.DescriptionMax)
	case o.ThinWords < 0:
		return fmt.Errorf("thin_words: must be ≥ 0, got %d", o.ThinWords)
	case o.NearDuplicate < 0 || o.NearDuplicate > 1:
		return fmt.Errorf("near_duplicate: must be between 0 and 1, got %v", o.NearDuplicate)
	case o.SlowTTFB < 0:
		return fmt.Errorf("slow_ttfb: must be ≥ 0, got %v", o.SlowTTFB)
	case o.MaxDepth < 0:
		return fmt.Errorf("max_depth: must be ≥ 0, got %d", o.MaxDepth)
	}
	for _, s := range o.Accept {
		if s < 100 || s > 999 {
			return fmt.Errorf("accept: %d is no HTTP status", s)
		}
	}
	for _, name := range slices.Sorted(mapKeys(o.Rules)) {
		if _, ok := ruleIndex[name]; !ok {
			return fmt.Errorf("rules: %s: no such rule", name)
		}
		if v := o.Rules[name]; v != "off" {
			if _, ok := ParseSeverity(v); !ok {
				return fmt.Errorf("rules: %s: want off, error, warning or notice, got %q", name, v)
			}
		}
	}
	return nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// withDefaults is o with the README's threshold for each zero one.
func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.TitleMax, 60)
	def(&o.DescriptionMax, 160)
	def(&o.ThinWords, 200)
	def(&o.MaxDepth, 4)
	if o.NearDuplicate == 0 {
		o.NearDuplicate = 0.9
	}
	if o.SlowTTFB == 0 {
		o.SlowTTFB = 800 * time.Millisecond
	}
	return o
}

// accepted reports whether status is one the options say is not broken.
func (o *Options) accepted(status int32) bool { return slices.Contains(o.Accept, int(status)) }

// Finding is one rule's verdict on one URL.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	URL      string   `json:"url"`
	Detail   string   `json:"detail,omitempty"`
	// Baseline is true for a finding the baseline report had too
	// (MarkBaseline): it does not fail a CI run.
	Baseline bool `json:"baseline,omitempty"`
}

// RuleCount is a rule, its severity and how many findings it made.
type RuleCount struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	Count    int      `json:"count"`
	Off      bool     `json:"off,omitempty"` // turned off by the config: judged nothing
}

// judge is the rules being applied: their severities and whether each is
// on, and the findings made so far.
type judge struct {
	opts     Options
	severity []Severity  // by rule index; 0 = off
	findings [][]Finding // by rule index: most rules make theirs in URL order
}

func newJudge(o Options) *judge {
	j := &judge{opts: o.withDefaults(), severity: make([]Severity, len(Rules)), findings: make([][]Finding, len(Rules))}
	for i, r := range Rules {
		j.severity[i] = r.Severity
		switch v := o.Rules[r.Name]; v {
		case "":
		case "off":
			j.severity[i] = 0
		default:
			if s, ok := ParseSeverity(v); ok {
				j.severity[i] = s
			}
		}
	}
	return j
}

// on reports whether the rule is judged.
func (j *judge) on(rule string) bool { return j.severity[mustRule(rule)] != 0 }

// mustRule is the index of the rule named rule in Rules. A name that is
// none is the report's own mistake, not its input's: it panics rather
// than read as index 0 and make the finding a broken-link.
func mustRule(rule string) int {
	i, ok := ruleIndex[rule]
	if !ok {
		panic("report: no rule " + rule)
	}
	return i
}

// add makes a finding of rule on url, when the rule is on.
func (j *judge) add(rule, url, detail string) {
	i := mustRule(rule)
	if s := j.severity[i]; s != 0 {
		j.findings[i] = append(j.findings[i], Finding{Rule: Rules[i].Name, Severity: s, URL: url, Detail: detail})
	}
}

// done puts the findings in rep by rule then URL, one per (rule, URL),
// the first made kept, and counts them by rule.
func (j *judge) done(rep *Report) {
	total := 0
	for _, fs := range j.findings {
		total += len(fs)
	}
	rep.Findings = make([]Finding, 0, total)
	rep.Rules = make([]RuleCount, len(Rules))
	byURL := func(a, b Finding) int { return strings.Compare(a.URL, b.URL) }
	for _, i := range rulesByName {
		fs := j.findings[i]
		if !slices.IsSortedFunc(fs, byURL) {
			slices.SortStableFunc(fs, byURL)
		}
		fs = slices.CompactFunc(fs, func(a, b Finding) bool { return a.URL == b.URL })
		rep.Findings = append(rep.Findings, fs...)
		j.findings[i] = nil // each rule's freed as it is copied
		rep.Rules[i] = RuleCount{Rule: Rules[i].Name, Severity: cmpOr(j.severity[i], Rules[i].Severity), Count: len(fs), Off: j.severity[i] == 0}
	}
}

// rulesByName is the indexes of Rules in the order of their names.
var rulesByName = func() []int {
	idx := make([]int, len(Rules))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(Rules[a].Name, Rules[b].Name) })
	return idx
}()

func cmpOr(a, b Severity) Severity {
	if a != 0 {
		return a
	}
	return b
}

// MarkBaseline marks the findings of rep that the earlier report base
// had (the same rule and URL) and returns how many it marked. base is a
// report's JSON as WriteJSON writes it.
func MarkBaseline(rep *Report, base []byte) (int, error) {
	var old struct {
		Findings []struct {
			Rule string `json:"rule"`
			URL  string `json:"url"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(base, &old); err != nil {
		return 0, fmt.Errorf("not a report's JSON: %w", err)
	}
	if old.Findings == nil {
		return 0, fmt.Errorf("not a report's JSON: no findings member")
	}
	type key struct{ rule, url string }
	had := make(map[key]bool, len(old.Findings))
	for _, f := range old.Findings {
		had[key{f.Rule, f.URL}] = true
	}
	n := 0
	rep.Baselined = true
	for i := range rep.Findings {
		f := &rep.Findings[i]
		if had[key{f.Rule, f.URL}] {
			f.Baseline = true
			n++
		}
	}
	return n, nil
}

// FailOn is a CI gate: a least severity, or rules by name, or both.
type FailOn struct {
	Severity Severity // 0 for none
	Rules    []string
}

// ParseFailOn reads --fail-on: a severity (error, warning, notice) or
// rule names, separated by commas.
func ParseFailOn(s string) (FailOn, error) {
	var f FailOn
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if sev, ok := ParseSeverity(part); ok {
			if f.Severity == 0 || sev < f.Severity {
				f.Severity = sev
			}
			continue
		}
		if _, ok := ruleIndex[part]; !ok {
			return FailOn{}, fmt.Errorf("%q is neither a severity (error, warning, notice) nor a rule", part)
		}
		f.Rules = append(f.Rules, part)
	}
	return f, nil
}

// Failing returns the findings of rep that fail the gate f: of its
// severity or above, or of a rule it names, and not in the baseline.
func (f FailOn) Failing(rep *Report) []Finding {
	var out []Finding
	for _, x := range rep.Findings {
		if !x.Baseline && (f.Severity != 0 && x.Severity >= f.Severity || slices.Contains(f.Rules, x.Rule)) {
			out = append(out, x)
		}
	}
	return out
}
