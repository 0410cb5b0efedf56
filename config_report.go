package crawler

import (
	"fmt"

	"github.com/politecrawl/crawler/storage/links"
	"github.com/politecrawl/crawler/storage/report"
)

func (c *configCheck) report(r report.Config) {
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
		if _, ok := report.HTTPStatus(s); !ok {
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
