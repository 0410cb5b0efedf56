package crawler

import (
	"testing"
)

// in_sitemap is true for every URL a sitemap lists, whenever it was
// fetched: the seed, whose visit reads the robots.txt naming the sitemap,
// and pages linked from it, with one request at a time or several.
func TestInSitemapWhateverTheOrder(t *testing.T) {
	for _, perHost := range []int{1, 3} {
		s := newSite(t)
		s.set("/robots.txt", page{ctype: "text/plain", body: "User-agent: *\nSitemap: {{base}}/sitemap.xml\n"})
		s.html("/", "/a", "/b", "/c")
		s.html("/a")
		s.html("/b")
		s.html("/c")
		s.set("/sitemap.xml", page{ctype: "application/xml", body: `<?xml version="1.0"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>{{base}}/</loc></url><url><loc>{{base}}/a</loc></url><url><loc>{{base}}/c</loc></url>
</urlset>`})
		cfg := testConfig(t, s.URL+"/")
		cfg.Politeness.MaxPerHost = perHost
		runCrawl(t, cfg)
		inv := inventory(t, cfg.Output.URLs)
		for p, want := range map[string]bool{"/": true, "/a": true, "/b": false, "/c": true} {
			if r := inv[s.URL+p]; r.Status != 200 || r.InSitemap != want {
				t.Errorf("max_per_host %d: %s: status %d, in_sitemap %v; want 200, %v", perHost, p, r.Status, r.InSitemap, want)
			}
		}
		if h := s.hits(); h["/"] != 1 || h["/sitemap.xml"] != 1 {
			t.Errorf("max_per_host %d: / asked %d times, the sitemap %d; want once each", perHost, h["/"], h["/sitemap.xml"])
		}
	}
}
