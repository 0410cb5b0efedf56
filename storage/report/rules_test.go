package report

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/politecrawl/crawler/storage"
)

// page200 is an inventory line of a 200 HTML page with the given extra
// JSON members (a leading comma each).
func page200(u, extra string) string {
	return fmt.Sprintf(`{"url":%q,"status":200,"content_type":"text/html","found_via":"link","link_depth":1,"h1":"H","description":"D of %s","title":"T of %s"%s}`, u, u, u, extra) + "\n"
}

// findingsOf builds the report of inv and links and returns its findings
// as "rule url" lines.
func findingsOf(t *testing.T, inv, links string, o Options) []string {
	t.Helper()
	r, err := Build(Inputs{Inventory: strings.NewReader(inv), Links: strings.NewReader(links), Options: o}, Names{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rules) != len(Rules) {
		t.Errorf("%d rules counted, want every one of %d", len(r.Rules), len(Rules))
	}
	var got []string
	for _, f := range r.Findings {
		got = append(got, f.Rule+" "+f.URL)
	}
	return got
}

// Each rule over the facts of the inventory and the link graph fires on
// its page and not on the near miss beside it.
func TestRulesNearMisses(t *testing.T) {
	const h = "https://ex.test"
	long := strings.Repeat("x", 61)
	var inv strings.Builder
	inv.WriteString(page200(h+"/", `,"found_via":"seed","link_depth":0`))
	inv.WriteString(page200(h+"/t60", `,"title":"`+long[:60]+`"`))
	inv.WriteString(page200(h+"/t61", `,"title":"`+long+`"`))
	inv.WriteString(page200(h+"/d160", `,"description":"`+strings.Repeat("é", 160)+`"`))
	inv.WriteString(page200(h+"/d161", `,"description":"`+strings.Repeat("é", 161)+`"`))
	inv.WriteString(page200(h+"/depth4", `,"link_depth":4`))
	inv.WriteString(page200(h+"/depth5", `,"link_depth":5`))
	inv.WriteString(page200(h+"/noh1", `,"h1":" "`))
	inv.WriteString(page200(h+"/es", `,"hreflang":[{"lang":"en","url":"`+h+`/en"},{"lang":"es","url":"`+h+`/es"}]`))
	inv.WriteString(page200(h+"/en", `,"hreflang":[{"lang":"es","url":"`+h+`/es"},{"lang":"pt-BR","url":"`+h+`/pt"}]`))
	inv.WriteString(page200(h+"/pt", `,"hreflang":[{"lang":"pt_BR","url":"`+h+`/en"},{"lang":"x-default","url":"`+h+`/gone"}]`))
	inv.WriteString(`{"url":"` + h + `/gone","status":404,"found_via":"link","link_depth":1}` + "\n")
	inv.WriteString(`{"url":"` + h + `/one","status":301,"final_url":"` + h + `/t60","redirect_chain":["` + h + `/t60"],"found_via":"link","link_depth":1}` + "\n")
	inv.WriteString(`{"url":"` + h + `/two","status":301,"final_url":"` + h + `/t60","redirect_chain":["` + h + `/one","` + h + `/t60"],"found_via":"link","link_depth":1}` + "\n")
	inv.WriteString(`{"url":"` + h + `/wall","status":403,"found_via":"link","link_depth":1}` + "\n")
	inv.WriteString(page200(strings.Replace(h, "https", "http", 1)+"/plain", ""))
	inv.WriteString(page200(h+"/conflict", `,"canonical":"`+h+`/conflict","canonical_conflict":"`+h+`/t60"`))
	links := strings.Join([]string{
		`{"from":"` + h + `/","to":"` + h + `/one","kind":"a"}`,
		`{"from":"` + h + `/","to":"` + h + `/two#x","kind":"a"}`,
		`{"from":"` + h + `/","to":"` + h + `/gone","kind":"img"}`,
		`{"from":"` + h + `/","to":"` + h + `/wall","kind":"a"}`,
		`{"from":"` + h + `/","to":"http://cdn.test/a.js","kind":"script"}`,
		`{"from":"` + h + `/t60","to":"http://cdn.test/feed","kind":"link","rel":"alternate"}`,
		`{"from":"` + h + `/t61","to":"` + h + `/one","kind":"canonical"}`,
		`{"from":"http://ex.test/plain","to":"http://cdn.test/a.png","kind":"img"}`,
	}, "\n")
	got := findingsOf(t, inv.String(), links, Options{})
	want := []string{
		"broken-link " + h + "/gone",
		"broken-link " + h + "/wall",
		"canonical-conflict " + h + "/conflict",
		"deep-page " + h + "/depth5",
		"description-too-long " + h + "/d161",
		"h1-missing " + h + "/noh1",
		"hreflang-bad-code " + h + "/pt",
		"hreflang-broken " + h + "/pt",
		"link-to-redirect " + h + "/one",
		"link-to-redirect " + h + "/two",
		"mixed-content " + h + "/",
		"redirect-chain " + h + "/two",
		"title-too-long " + h + "/t61",
	}
	// /es and /en name each other, and so do /en and /pt; /pt's /gone
	// (404) is hreflang-broken, and no page to name anything back.
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// 403 accepted: not broken. A rule turned off judges nothing.
	// The rest is found as before (an empty list would pass the check
	// alone).
	got = findingsOf(t, inv.String(), links, Options{Accept: []int{403}, Rules: map[string]string{"deep-page": "off"}})
	want = slices.DeleteFunc(want, func(f string) bool { return f == "broken-link "+h+"/wall" || strings.HasPrefix(f, "deep-page") })
	if !slices.Equal(got, want) {
		t.Errorf("accept 403 and deep-page off: findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A page an hreflang names that does not name it back is
// hreflang-no-return; one that does is not.
func TestHreflangReturn(t *testing.T) {
	const h = "https://ex.test"
	inv := page200(h+"/a", `,"hreflang":[{"lang":"de","url":"`+h+`/b"},{"lang":"fr","url":"`+h+`/c"}]`) +
		page200(h+"/b", `,"hreflang":[{"lang":"en","url":"`+h+`/a"}]`) +
		page200(h+"/c", "")
	got := findingsOf(t, inv, "", Options{})
	want := []string{"hreflang-no-return " + h + "/a"}
	if !slices.Equal(got, want) {
		t.Errorf("findings %q, want %q", got, want)
	}
}

// The gate counts findings of its severity or above, or of the rules it
// names, and not those of the baseline.
func TestFailOnBaseline(t *testing.T) {
	const h = "https://ex.test"
	inv := page200(h+"/a", `,"title":""`) + page200(h+"/b", `,"link_depth":9`)
	r, err := Build(Inputs{Inventory: strings.NewReader(inv)}, Names{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		gate string
		n    int
	}{{"error", 1}, {"warning", 1}, {"notice", 2}, {"deep-page", 1}, {"h1-missing", 0}, {"deep-page,error", 2}} {
		f, err := ParseFailOn(c.gate)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(f.Failing(r)); n != c.n {
			t.Errorf("--fail-on %s: %d failing, want %d", c.gate, n, c.n)
		}
	}
	if _, err := ParseFailOn("errors"); err == nil {
		t.Error("--fail-on errors: no error")
	}
	base, _ := json.Marshal(map[string]any{"findings": []Finding{{Rule: "title-missing", Severity: Error, URL: h + "/a"}}})
	if n, err := MarkBaseline(r, base); err != nil || n != 1 {
		t.Fatalf("MarkBaseline = %d, %v; want 1", n, err)
	}
	f, _ := ParseFailOn("notice")
	if got := f.Failing(r); len(got) != 1 || got[0].Rule != "deep-page" {
		t.Errorf("with the baseline, failing %v, want deep-page only", got)
	}
}

func TestValidLang(t *testing.T) {
	for s, want := range map[string]bool{
		"en": true, "pt-BR": true, "zh-Hant": true, "zh-Hant-TW": true, "es-419": true, "x-default": true, "EN-us": true,
		"pt_BR": false, "english": false, "e": false, "en-": false, "en-USA": false, "": false, "en-US-x": false, "x-defaults": false,
	} {
		if got := validLang(s); got != want {
			t.Errorf("validLang(%q) = %v, want %v", s, got, want)
		}
	}
}

// The GitHub format annotates at most 10 findings of a rule and says how
// many more; what a site wrote cannot start another command.
func TestWriteGitHubCaps(t *testing.T) {
	var inv strings.Builder
	for i := range 12 {
		inv.WriteString(page200(fmt.Sprintf("https://ex.test/%02d", i), `,"h1":""`))
	}
	inv.WriteString(`{"url":"https://ex.test/!\n::error::y%","status":200,"content_type":"text/html","title":"T","description":"D"}` + "\n")
	r, err := Build(Inputs{Inventory: strings.NewReader(inv.String())}, Names{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteGitHub(&b, r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 11 || strings.Count(b.String(), "::warning title=h1-missing::") != 10 ||
		lines[0] != "::warning title=h1-missing::https://ex.test/!%0A::error::y%25" ||
		lines[10] != "h1-missing: 3 more findings (crawler report --format json lists them all)" {
		t.Errorf("github:\n%s", b.String())
	}
}

// spread is a SimHash far from spread(m) for every other m.
func spread(n int) uint64 { return uint64(n) * 0x9E3779B97F4A7C15 }

// The rules on the body's facts, each beside its near miss; an older
// inventory without the facts is not judged on them.
func TestFactRules(t *testing.T) {
	const h = "https://ex.test"
	facts := func(extra string) string {
		return `,"lang":"en","h1_count":1,"word_count":300,"hsts":true,"ttfb_ms":100,"content_hash":"%016x","simhash":"%016x"` + extra
	}
	n := 0
	pg := func(path, extra string, sim uint64) string {
		n++
		return page200(h+path, fmt.Sprintf(facts(extra), n, sim))
	}
	inv := pg("/thin", `,"word_count":199`, spread(1)) +
		pg("/fat", `,"word_count":200`, spread(2)) +
		pg("/noalt", `,"img_no_alt":2`, spread(3)) +
		pg("/nolang", `,"lang":""`, spread(4)) +
		pg("/h1s", `,"h1_count":2`, spread(5)) +
		pg("/nohsts", `,"hsts":false`, spread(6)) +
		page200("http://ex.test/plain", fmt.Sprintf(facts(`,"hsts":false`), 99, spread(7))) +
		pg("/slow", `,"ttfb_ms":801`, spread(8)) +
		pg("/fast", `,"ttfb_ms":800`, spread(9)) +
		pg("/near-a", "", 0xFFFF_0000_FFFF_0000) +
		pg("/near-b", "", 0xFFFF_0000_FFFF_01FF) + // 9 bits apart: cos(9π/64) = 0.904
		pg("/far", "", 0xFFFF_0000_FFF0_FC00) + // 10 bits from near-a: 0.882; 19 from near-b
		page200(h+"/dup-a", fmt.Sprintf(facts(""), 1000, uint64(0x0F0F_0F0F_0000_0000))) +
		page200(h+"/dup-b", fmt.Sprintf(facts(""), 1000, uint64(0x0F0F_0F0F_0000_0000))) +
		pg("/ids", `,"anchors":["intro","caf\u00e9"]`, spread(10)) +
		page200(h+"/old", "") // no facts recorded
	links := strings.Join([]string{
		`{"from":"` + h + `/fat","to":"` + h + `/ids#intro","kind":"a"}`,
		`{"from":"` + h + `/fat","to":"` + h + `/ids#caf%C3%A9","kind":"a"}`,
		`{"from":"` + h + `/fat","to":"` + h + `/ids#top","kind":"a"}`,
		`{"from":"` + h + `/fat","to":"` + h + `/ids#","kind":"a"}`,
		`{"from":"` + h + `/fat","to":"` + h + `/ids#missing","kind":"a"}`,
		`{"from":"` + h + `/fat","to":"` + h + `/fast#nothing","kind":"a"}`,
		`{"from":"` + h + `/fat","to":"` + h + `/old#unknown","kind":"a"}`,
		`{"from":"` + h + `/fat","to":"` + h + `/ids#intro2","kind":"canonical"}`,
	}, "\n")
	got := findingsOf(t, inv, links, Options{})
	got = slices.DeleteFunc(got, func(s string) bool { return strings.HasPrefix(s, "h1-missing") || strings.HasPrefix(s, "not-in") })
	want := []string{
		"broken-fragment " + h + "/fast#nothing",
		"broken-fragment " + h + "/ids#missing",
		"duplicate-content " + h + "/dup-a",
		"duplicate-content " + h + "/dup-b",
		"h1-multiple " + h + "/h1s",
		"hsts-missing " + h + "/nohsts",
		"img-alt-missing " + h + "/noalt",
		"lang-missing " + h + "/nolang",
		"near-duplicate " + h + "/near-a",
		"near-duplicate " + h + "/near-b",
		"slow-page " + h + "/slow",
		"thin-content " + h + "/thin",
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// pages: the distinct pages linking to each with a or area links, and
// PageRank scaled to 100; a link given twice counts once, a link to
// itself and other kinds not at all.
func TestLinkScore(t *testing.T) {
	const h = "https://ex.test"
	inv := page200(h+"/a", "") + page200(h+"/b", "") + page200(h+"/c", "") + page200(h+"/d", "")
	link := func(from, to, kind string) string {
		return `{"from":"` + h + from + `","to":"` + h + to + `","kind":"` + kind + `"}` + "\n"
	}
	links := link("/a", "/b", "a") + link("/a", "/b", "a") + link("/a", "/b#x", "area") + link("/a", "/a", "a") +
		link("/b", "/c", "a") + link("/c", "/a", "a") + link("/d", "/c", "img") + link("/d", "/a", "canonical")
	r, err := Build(Inputs{Inventory: strings.NewReader(inv), Links: strings.NewReader(links)}, Names{})
	if err != nil {
		t.Fatal(err)
	}
	// A cycle a → b → c → a, and d, linked by none, linking to none:
	// the cycle's pages are alike, d has only what every page gets.
	// With d dangling: each cycle page r, d s; s = 0.15/4 + 0.85·s/4,
	// r = 0.15/4 + 0.85·(r + s/4).
	s := 0.0375 / (1 - 0.2125)
	rr := (0.0375 + 0.85*s/4) / 0.15
	want := []PageScore{{h + "/a", 1, 100}, {h + "/b", 1, 100}, {h + "/c", 1, 100}, {h + "/d", 0, math.Round(10000*s/rr) / 100}}
	if !slices.Equal(r.Pages, want) {
		t.Errorf("pages %v, want %v", r.Pages, want)
	}
}

// extracted lists the 200 HTML pages' custom extractions by URL; a 304
// keeps the values of the answer it confirms.
func TestExtractedTable(t *testing.T) {
	const h = "https://ex.test"
	inv := page200(h+"/b", `,"extracted":{"sku":"B-2","tags":["x","y"]}`) + page200(h+"/a", `,"extracted":{"sku":"A-1"}`) +
		page200(h+"/c", "") + `{"url":"` + h + `/a","status":304,"not_modified":true}` + "\n"
	r, err := Build(Inputs{Inventory: strings.NewReader(inv)}, Names{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(r.Extracted)
	if want := `[{"url":"https://ex.test/a","values":{"sku":"A-1"}},{"url":"https://ex.test/b","values":{"sku":"B-2","tags":["x","y"]}}]`; string(got) != want {
		t.Errorf("extracted %s, want %s", got, want)
	}
}

// WriteJSON, which writes long lists element by element, writes what
// encoding/json writes of the whole report.
func TestWriteJSONStreams(t *testing.T) {
	r := &Report{Rules: []RuleCount{{Rule: "a<b", Severity: Error, Count: 1}}, Orphans: []string{}}
	for i := range 2500 {
		r.Findings = append(r.Findings, Finding{Rule: "x", Severity: Notice, URL: fmt.Sprintf("https://ex.test/%d&<\u0085", i)})
	}
	var got, want strings.Builder
	if err := WriteJSON(&got, r); err != nil {
		t.Fatal(err)
	}
	enc := json.NewEncoder(storage.JSONWriter(&want))
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("streamed JSON differs: %d bytes vs %d", got.Len(), want.Len())
	}
}

// A line of the inventory over maxLine (a torn or foreign line) is
// skipped by the second pass that reads the anchors too, not the end of
// it: the anchors of the records after it still count.
func TestFragmentsAfterLongLine(t *testing.T) {
	const h = "https://ex.test"
	facts := `,"lang":"en","h1_count":1,"word_count":300,"hsts":true,"content_hash":"%016x","simhash":"%016x"`
	inv := page200(h+"/from", fmt.Sprintf(facts, 1, spread(1))) +
		`{"url":"` + h + `/junk","title":"` + strings.Repeat("x", maxLine) + "\"}\n" +
		page200(h+"/ids", fmt.Sprintf(facts+`,"anchors":["intro"]`, 2, spread(2)))
	links := `{"from":"` + h + `/from","to":"` + h + `/ids#intro","kind":"a"}` + "\n" +
		`{"from":"` + h + `/from","to":"` + h + `/ids#gone","kind":"a"}`
	var got []string
	for _, f := range findingsOf(t, inv, links, Options{}) {
		if strings.HasPrefix(f, "broken-fragment") {
			got = append(got, f)
		}
	}
	if want := []string{"broken-fragment " + h + "/ids#gone"}; !slices.Equal(got, want) {
		t.Errorf("broken-fragment: %q, want %q", got, want)
	}
}

// A fragment written two ways (percent-encoded or not) is named by its
// least spelling, whichever line comes first: the link graph's workers
// read its lines in no fixed order, and a baseline matches findings by URL.
func TestFragmentSpelling(t *testing.T) {
	const h = "https://ex.test"
	facts := `,"lang":"en","h1_count":1,"word_count":300,"hsts":true,"content_hash":"%016x","simhash":"%016x"`
	inv := page200(h+"/from", fmt.Sprintf(facts, 1, spread(1))) +
		page200(h+"/ids", fmt.Sprintf(facts+`,"anchors":["intro"]`, 2, spread(2)))
	line := func(frag string) string {
		return `{"from":"` + h + `/from","to":"` + h + `/ids#` + frag + `","kind":"a"}` + "\n"
	}
	want := []string{"broken-fragment " + h + "/ids#caf%C3%A9"}
	for _, links := range []string{line("café") + line("caf%C3%A9"), line("caf%C3%A9") + line("café")} {
		got := slices.DeleteFunc(findingsOf(t, inv, links, Options{}), func(f string) bool { return !strings.HasPrefix(f, "broken-fragment") })
		if !slices.Equal(got, want) {
			t.Errorf("links\n%s: %q, want %q", links, got, want)
		}
	}
}

// A worker holds a (page, fragment) pair that many lines name once or
// so, not once a line: a million lines of a few pairs keep a few.
func TestFragPairsBounded(t *testing.T) {
	var w linkWorker
	for i := range 1_000_000 {
		w.addFragPair(fragKey{uint32(i % 3), uint64(i % 5)})
	}
	if n := cap(w.fragPairs); n > 2*compactFrags {
		t.Errorf("%d pairs held for 15 distinct ones", n)
	}
	if got := sortFragPairs(w.fragPairs); len(got) != 15 {
		t.Errorf("%d distinct pairs kept, want 15", len(got))
	}
}

// A rule name the judge does not know is a mistake of the report's that
// panics, not a finding filed as broken-link (index 0).
func TestJudgeUnknownRule(t *testing.T) {
	j := newJudge(Options{})
	defer func() {
		if recover() == nil {
			t.Error("no panic for an unknown rule")
		}
		if len(j.findings[0]) != 0 {
			t.Errorf("an unknown rule filed %v", j.findings[0])
		}
	}()
	j.add("sitemap-unknown", "https://ex.test/", "")
}
