package crawler

import (
	"fmt"
	"strconv"
	"time"

	"github.com/politecrawl/crawler/storage/links"
)

// ReportConfig is how `crawler report` judges a crawl (README, "The
// audit's verdicts and CI"): the thresholds of its rules, the statuses
// that are not broken, and the rules turned off. A crawl reads none of it.
type ReportConfig struct {
	// TitleMax: a title over this many characters is title-too-long.
	TitleMax int `yaml:"title_max"`
	// DescriptionMax: the same for description-too-long.
	DescriptionMax int `yaml:"description_max"`
	// ThinWords: a page with fewer words of visible text is thin-content.
	ThinWords int `yaml:"thin_words"`
	// NearDuplicate: pages whose visible texts are at least this similar
	// (0 to 1), and not identical, are near-duplicate.
	NearDuplicate float64 `yaml:"near_duplicate"`
	// SlowTTFB: a page whose first byte came later is slow-page.
	SlowTTFB time.Duration `yaml:"slow_ttfb"`
	// MaxDepth: a page with a greater link_depth is deep-page.
	MaxDepth int `yaml:"max_depth"`
	// Accept are HTTP statuses that are not broken (bot walls such as
	// 403, 429, 999); --accept adds to them.
	Accept []string `yaml:"accept"`
	// Disable names rules that are not judged (`crawler report` checks
	// the names).
	Disable []string `yaml:"disable"`
}

// DefaultReportConfig is the README's thresholds.
func DefaultReportConfig() ReportConfig {
	return ReportConfig{TitleMax: 60, DescriptionMax: 160, ThinWords: 200, NearDuplicate: 0.9,
		SlowTTFB: 800 * time.Millisecond, MaxDepth: 4}
}

// AcceptStatuses is Accept as numbers; ok is false when one is no HTTP
// status (Validate says which).
func (r ReportConfig) AcceptStatuses() (statuses []int, ok bool) {
	for _, s := range r.Accept {
		n, ok := httpStatus(s)
		if !ok {
			return nil, false
		}
		statuses = append(statuses, n)
	}
	return statuses, true
}

// httpStatus reads s as an HTTP status, 100 to 999.
func httpStatus(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 100 && n <= 999
}

func (c *configCheck) report(r ReportConfig) {
	// 0 stands for the default, as report.Options has it.
	c.atLeast("report.title_max", r.TitleMax, 0)
	c.atLeast("report.description_max", r.DescriptionMax, 0)
	c.atLeast("report.thin_words", r.ThinWords, 0)
	c.atLeast("report.max_depth", r.MaxDepth, 0)
	if r.NearDuplicate < 0 || r.NearDuplicate > 1 {
		c.addf("report.near_duplicate", "must be from 0 (the default, 0.9) to 1, got %v", r.NearDuplicate)
	}
	if r.SlowTTFB < 0 {
		c.addf("report.slow_ttfb", "must be ≥ 0, got %v", r.SlowTTFB)
	}
	for i, s := range r.Accept {
		if _, ok := httpStatus(s); !ok {
			c.addf(fmt.Sprintf("report.accept[%d]", i), "want an HTTP status (100 to 999), got %q", s)
		}
	}
}

// ExtractConfig is a custom extraction (README, "Custom extraction"): a
// CSS selector run on every 200 HTML page, giving the text of the first
// match, or its attribute Attr, or those of every match with All.
type ExtractConfig struct {
	Name string `yaml:"name"`
	CSS  string `yaml:"css"`
	Attr string `yaml:"attr"`
	All  bool   `yaml:"all"`
}

// compileExtract compiles the extractions of a valid config.
func compileExtract(xs []ExtractConfig) []links.Extraction {
	var out []links.Extraction
	for _, x := range xs {
		if e, err := links.CompileExtraction(x.Name, x.CSS, x.Attr, x.All); err == nil {
			out = append(out, e)
		}
	}
	return out
}

func (c *configCheck) extract(xs []ExtractConfig) {
	seen := map[string]bool{}
	for i, x := range xs {
		key := fmt.Sprintf("extract[%d]", i)
		switch {
		case x.Name == "":
			c.addf(key+".name", "must not be empty")
		case seen[x.Name]:
			c.addf(key+".name", "%q is the name of an earlier extraction", x.Name)
		}
		seen[x.Name] = true
		if _, err := links.CompileExtraction(x.Name, x.CSS, x.Attr, x.All); err != nil || x.CSS == "" {
			c.addf(key+".css", "want a CSS selector, got %q", x.CSS)
		}
	}
}
