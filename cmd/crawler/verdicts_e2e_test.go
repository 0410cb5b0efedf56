package main

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// verdictSite serves a site where each rule the crawl can meet over
// plain http fires on a page, beside a near miss that must not make it
// fire: the truth in TestVerdictsEndToEnd is worked out page by page
// from the README's table. Every page has a unique title, description,
// one <h1>, lang and at least 200 words of its own vocabulary, so that
// no other rule fires on it.
func verdictSite(t *testing.T) *httptest.Server {
	t.Helper()
	pages := map[string]string{}
	n := 0
	words := func(k int) string { // k words no other page has
		n++
		var b strings.Builder
		for i := range k {
			fmt.Fprintf(&b, " p%dw%d", n, i)
		}
		return b.String()
	}
	page := func(path, head, body string) {
		if !strings.Contains(head, "<title>") {
			head += "<title>Title of " + path + "</title>"
		}
		lang := ` lang="en"`
		if strings.Contains(head, "NOLANG") {
			lang = ""
		}
		pages[path] = `<!DOCTYPE html><html` + lang + `><head>` + head + `<meta name="description" content="About ` + path +
			`"></head><body>` + body + `</body></html>`
	}
	plain := func(path, extra string) { page(path, "", "<h1>Heading</h1><p>"+words(220)+"</p>"+extra) }

	home := `<h1>Home</h1><p>` + words(220) + `</p>`
	for _, p := range []string{"/t60", "/t61", "/alt-empty", "/alt-none", "/w199", "/w200", "/chain1", "/chain2",
		"/frag#sec", "/frag#old", "/frag#gone", "/frag#top", "/frag#", "/en", "/de", "/bad", "/hb", "/missing",
		"/dup-a", "/dup-b", "/near-a", "/near-b", "/far", "/slow", "/fast", "/d1", "/h1s", "/nolang", "/cc"} {
		home += `<a href="` + p + `">x</a>`
	}
	page("/", "", home)
	page("/t60", "<title>"+strings.Repeat("é", 60)+"</title>", "<h1>H</h1><p>"+words(220)+"</p>")
	page("/t61", "<title>"+strings.Repeat("é", 61)+"</title>", "<h1>H</h1><p>"+words(220)+"</p>")
	plain("/alt-empty", `<img src="/img.png" alt="">`)
	plain("/alt-none", `<img src="/img.png">`)
	page("/w199", "", "<h1>Heading</h1><p>"+words(198)+"</p>") // 199 words with the heading
	page("/w200", "", "<h1>Heading</h1><p>"+words(199)+"</p>")
	plain("/frag", `<h2 id="sec">Section</h2><a name="old">old anchor</a>`)
	// hreflang: /en, /es and /pt name each other back; /de names /en,
	// which does not name it; /bad's code is no language; /hb names a 404.
	alt := func(code, href string) string {
		return `<link rel="alternate" hreflang="` + code + `" href="` + href + `">`
	}
	page("/en", alt("en", "/en")+alt("es", "/es")+alt("pt-BR", "/pt"), "<h1>H</h1><p>"+words(220)+"</p>")
	page("/es", alt("es", "/es")+alt("en", "/en"), "<h1>H</h1><p>"+words(220)+"</p>")
	page("/pt", alt("pt-BR", "/pt")+alt("en", "/en"), "<h1>H</h1><p>"+words(220)+"</p>")
	page("/de", alt("de", "/de")+alt("en", "/en"), "<h1>H</h1><p>"+words(220)+"</p>")
	page("/bad", alt("pt_BR", "/bad"), "<h1>H</h1><p>"+words(220)+"</p>")
	page("/hb", alt("x-default", "/missing"), "<h1>H</h1><p>"+words(220)+"</p>")
	// Identical texts; texts alike but for 3 words of 300; one 40 % other.
	same := "<h1>Same</h1><p>" + words(250) + "</p>"
	page("/dup-a", "", same)
	page("/dup-b", "", same)
	base := strings.Fields(words(300))
	near := slices.Clone(base)
	near[10], near[100], near[200] = "changed", "words", "here"
	far := slices.Clone(base)
	for i := 0; i < 120; i++ {
		far[i*2] = fmt.Sprintf("other%d", i)
	}
	page("/near-a", "", "<h1>Near</h1><p>"+strings.Join(base, " ")+"</p>")
	page("/near-b", "", "<h1>Near</h1><p>"+strings.Join(near, " ")+"</p>")
	page("/far", "", "<h1>Near</h1><p>"+strings.Join(far, " ")+"</p>")
	plain("/slow", "")
	plain("/fast", "")
	for d := 1; d <= 4; d++ { // link depths 1 to 5
		plain(fmt.Sprintf("/d%d", d), fmt.Sprintf(`<a href="/d%d">next</a>`, d+1))
	}
	plain("/d5", "")
	page("/h1s", "", "<h1>One</h1><h1>Two</h1><p>"+words(220)+"</p>")
	page("/nolang", "NOLANG", "<h1>H</h1><p>"+words(220)+"</p>")
	page("/cc", `<link rel="canonical" href="/cc"><link rel="canonical" href="/t60">`, "<h1>H</h1><p>"+words(220)+"</p>")

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p := r.URL.Path; p {
		case "/slow", "/fast": // the first byte late: 900 ms, past slow_ttfb (800 ms), and 50 ms
			// /fast is well under the limit, so that a busy machine's delay
			// does not make it slow; the limit's edge (800 and 801 ms) is
			// TestRulesNearMisses'.
			time.Sleep(map[string]time.Duration{"/slow": 900 * time.Millisecond, "/fast": 50 * time.Millisecond}[p])
		case "/chain1":
			http.Redirect(w, r, "/t60", http.StatusMovedPermanently)
			return
		case "/chain2":
			http.Redirect(w, r, "/chain2b", http.StatusMovedPermanently)
			return
		case "/chain2b":
			http.Redirect(w, r, "/t61", http.StatusMovedPermanently)
			return
		case "/img.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n"))
			return
		}
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestVerdictsEndToEnd crawls verdictSite with `crawler discover` and
// checks `crawler report`'s findings against the truth worked out from
// the README's rules, with no finding more; then that JUnit, SARIF and
// the GitHub format agree with them, and the exit codes of --fail-on,
// --baseline and --accept. (The https rules, hsts-missing and
// mixed-content, are TestFactRules' and TestRulesNearMisses'.)
func TestVerdictsEndToEnd(t *testing.T) {
	srv := verdictSite(t)
	dir := t.TempDir()
	urls, links := filepath.Join(dir, "urls.jsonl"), filepath.Join(dir, "links.jsonl")
	if _, stderr, code := runCmd(t, "", "discover", "--delay", "0", "--retries", "0", "--out", urls, "--links", links, srv.URL+"/"); code != 0 {
		t.Fatalf("discover: exit %d:\n%s", code, stderr)
	}
	U := func(p string) string { return srv.URL + p }
	want := []string{
		"broken-fragment " + U("/frag#gone"),
		"broken-link " + U("/missing"),
		"canonical-conflict " + U("/cc"),
		"deep-page " + U("/d5"),
		"duplicate-content " + U("/dup-a"),
		"duplicate-content " + U("/dup-b"),
		"h1-multiple " + U("/h1s"),
		"hreflang-bad-code " + U("/bad"),
		"hreflang-broken " + U("/hb"),
		"hreflang-no-return " + U("/de"),
		"img-alt-missing " + U("/alt-none"),
		"lang-missing " + U("/nolang"),
		"link-to-redirect " + U("/chain1"),
		"link-to-redirect " + U("/chain2"),
		"near-duplicate " + U("/near-a"),
		"near-duplicate " + U("/near-b"),
		"redirect-chain " + U("/chain2"),
		"slow-page " + U("/slow"),
		"thin-content " + U("/w199"),
		"title-too-long " + U("/t61"),
	}
	reportOf := func(args ...string) (string, int) {
		t.Helper()
		out, stderr, code := runCmd(t, "", append([]string{"report", "--urls", urls, "--links", links}, args...)...)
		if code == 2 {
			t.Fatalf("report %q: exit 2: %s", args, stderr)
		}
		return out, code
	}
	out, _ := reportOf("--format", "json")
	var rep struct {
		Findings []struct{ Rule, Severity, URL, Detail string }
		Pages    []struct {
			URL       string
			Inlinks   int
			LinkScore float64 `json:"link_score"`
		}
		Rules []struct {
			Rule, Severity string
			Count          int
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range rep.Findings {
		got = append(got, f.Rule+" "+f.URL)
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// pages: /d1 … /d5 each linked by one page; /t60 by / and /cc's
	// canonical (no a link: not counted); / by none.
	byURL := map[string]struct {
		Inlinks   int
		LinkScore float64 `json:"link_score"`
	}{}
	for _, p := range rep.Pages {
		byURL[p.URL] = struct {
			Inlinks   int
			LinkScore float64 `json:"link_score"`
		}{p.Inlinks, p.LinkScore}
	}
	top := 0.0
	for _, p := range rep.Pages {
		top = max(top, p.LinkScore)
	}
	if byURL[U("/d3")].Inlinks != 1 || byURL[U("/t60")].Inlinks != 1 || byURL[U("/")].Inlinks != 0 || top != 100 ||
		byURL[U("/d5")].LinkScore <= byURL[U("/d1")].LinkScore || len(rep.Pages) != 29 {
		t.Errorf("pages: %d, top %v, /d1 %+v, /d5 %+v, / %+v", len(rep.Pages), top, byURL[U("/d1")], byURL[U("/d5")], byURL[U("/")])
	}
	if len(rep.Rules) != 39 {
		t.Errorf("%d rules, want the README's 39", len(rep.Rules))
	}
	total := 0
	for _, r := range rep.Rules {
		total += r.Count
	}
	if total != len(rep.Findings) {
		t.Errorf("rules count %d findings, there are %d", total, len(rep.Findings))
	}

	// JUnit: a failed testcase per finding, by rule.
	out, _ = reportOf("--format", "junit")
	var junit struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &junit); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, s := range junit.Suites {
		for _, c := range s.Cases {
			if c.Failure != nil {
				got = append(got, s.Name+" "+c.Name)
			}
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) || len(junit.Suites) != 39 {
		t.Errorf("junit: %d suites, failures:\n%s", len(junit.Suites), strings.Join(got, "\n"))
	}
	// SARIF: a result per finding at its URL.
	out, _ = reportOf("--format", "sarif")
	var sarif struct {
		Runs []struct {
			Results []struct {
				RuleID    string
				Locations []struct {
					PhysicalLocation struct{ ArtifactLocation struct{ URI string } }
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &sarif); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, r := range sarif.Runs[0].Results {
		got = append(got, r.RuleID+" "+r.Locations[0].PhysicalLocation.ArtifactLocation.URI)
	}
	if !slices.Equal(got, want) {
		t.Errorf("sarif results:\n%s", strings.Join(got, "\n"))
	}
	// GitHub: a line per finding.
	out, _ = reportOf("--format", "github")
	got = got[:0]
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		rule, rest, _ := strings.Cut(strings.SplitN(line, " title=", 2)[1], "::")
		u, _, _ := strings.Cut(rest, ": ")
		got = append(got, rule+" "+u)
	}
	if slices.Sort(got); !slices.Equal(got, want) {
		t.Errorf("github lines:\n%s", out)
	}

	// Exit codes.
	base := filepath.Join(dir, "base.json")
	out, _ = reportOf("--format", "json")
	if err := os.WriteFile(base, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--fail-on", "error"}, 1},
		{[]string{"--fail-on", "broken-link"}, 1},
		{[]string{"--fail-on", "broken-link", "--accept", "404"}, 0},
		{[]string{"--fail-on", "orphan,sitemap-redirect"}, 0},
		{[]string{"--fail-on", "notice", "--baseline", base}, 0},
	} {
		if _, code := reportOf(c.args...); code != c.code {
			t.Errorf("report %q: exit %d, want %d", c.args, code, c.code)
		}
	}
}
