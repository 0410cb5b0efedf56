package crawler

import (
	"fmt"
	"strconv"
	"time"
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
		n, err := strconv.Atoi(s)
		if err != nil || n < 100 || n > 999 {
			return nil, false
		}
		statuses = append(statuses, n)
	}
	return statuses, true
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
		if n, err := strconv.Atoi(s); err != nil || n < 100 || n > 999 {
			c.addf(fmt.Sprintf("report.accept[%d]", i), "want an HTTP status (100 to 999), got %q", s)
		}
	}
}
