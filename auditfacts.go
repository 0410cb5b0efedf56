package crawler

import (
	"fmt"
	"net/url"

	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/links"
)

// bodyFacts puts in rec what the audit judges of an HTML page's body and
// answer (README, "The audit's verdicts and CI"): its text's words and
// hashes, lang, h1s, images without alt, fragment targets, time to the
// first byte and, for an https page, whether it sent HSTS.
func bodyFacts(rec *storage.Record, f links.Facts, resp *response, u *url.URL) {
	rec.WordCount = f.WordCount
	rec.ContentHash = fmt.Sprintf("%016x", f.ContentHash)
	rec.SimHash = fmt.Sprintf("%016x", f.SimHash)
	rec.Lang, rec.H1Count, rec.ImgNoAlt, rec.Anchors = f.Lang, f.H1Count, f.ImgNoAlt, f.IDs
	rec.TTFBMS = resp.ttfb.Milliseconds()
	rec.HSTS = u.Scheme == "https" && resp.header.Get("Strict-Transport-Security") != ""
}

// extracted runs the config's custom extractions on an HTML page; nil
// when there are none (the page is then not parsed again).
func (c *Crawler) extracted(body []byte, contentType string) map[string]any {
	return links.Extract(body, contentType, c.conf().extract)
}
