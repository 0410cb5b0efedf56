package crawler

import "testing"

// Every labelled counter whose label values are known is there at zero
// before its first increment, so that an alert on it can see it.
func TestLabelledCountersStartAtZero(t *testing.T) {
	o := newObserver("")
	families, err := o.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]bool{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if got[f.GetName()] == nil {
					got[f.GetName()] = map[string]bool{}
				}
				got[f.GetName()][l.GetValue()] = m.GetCounter().GetValue() == 0
			}
		}
	}
	for name, labels := range map[string][]string{
		"crawler_output_errors_total":    {"output.urls", "output.links", "output.mirror_dir", "output.warc"},
		"crawler_sitemap_warnings_total": {"max_urls", "scope", "malformed", "fetch"},
		"crawler_robots_requests_total":  {"ok", "missing", "unreachable"},
		"crawler_urls_rejected_total":    {"host", "scheme", "nofollow", "depth", "requisite-nesting"},
		"crawler_fetches_total":          {"2xx", "error"},
		"crawler_renders_total":          {"rendered", "failed"},
	} {
		for _, l := range labels {
			if zero, ok := got[name][l]; !ok || !zero {
				t.Errorf("%s{%s}: present %v, zero %v; want present at 0", name, l, ok, zero)
			}
		}
	}
}
