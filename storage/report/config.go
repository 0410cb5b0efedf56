package report

import (
	"strconv"
	"time"
)

// Config is the report block of the crawler's config: how `crawler
// report` judges a crawl (README, "The audit's verdicts and CI"), the
// thresholds of its rules, the statuses that are not broken, and the
// rules turned off. A crawl reads none of it.
type Config struct {
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

// DefaultConfig is the README's thresholds.
func DefaultConfig() Config {
	return Config{TitleMax: 60, DescriptionMax: 160, ThinWords: 200, NearDuplicate: 0.9,
		SlowTTFB: 800 * time.Millisecond, MaxDepth: 4}
}

// AcceptStatuses is Accept as numbers; ok is false when one is no HTTP
// status (the config's validation says which).
func (c Config) AcceptStatuses() (statuses []int, ok bool) {
	for _, s := range c.Accept {
		n, ok := HTTPStatus(s)
		if !ok {
			return nil, false
		}
		statuses = append(statuses, n)
	}
	return statuses, true
}

// HTTPStatus reads s as an HTTP status, 100 to 999.
func HTTPStatus(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 100 && n <= 999
}
