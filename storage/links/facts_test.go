package links

import (
	"math/bits"
	"slices"
	"strings"
	"testing"
)

func TestFacts(t *testing.T) {
	f := ReadHTML([]byte(`<!doctype html><html lang=" pt-BR "><head><title>Not counted</title>
<style>p { x: y }</style><script>var a = "not words";</script></head>
<body><h1>One</h1><h1 id=second>Two</h1><p ID = "x">Hello   wide
world <b>again</b></p><img src=a.png><img src=b.png alt=""><IMG src=c.png>
<a name="top-of">t</a><a name="x">dup</a><template>hidden text</template><noscript>no script</noscript>
<div data-id="no">`+strings.Repeat("<span id=s>x</span>", 1)+`</div></body></html>`), "text/html").Facts
	// Words: One Two Hello wide world again t dup x.
	if f.WordCount != 9 || f.Lang != "pt-BR" || f.H1Count != 2 || f.ImgNoAlt != 2 {
		t.Errorf("facts %+v", f)
	}
	if want := []string{"second", "x", "top-of", "s"}; !slices.Equal(f.IDs, want) {
		t.Errorf("ids %q, want %q", f.IDs, want)
	}
	same := ReadHTML([]byte("<p>One Two</p><div>Hello wide world again t dup\n x</div>"), "").Facts
	if same.ContentHash != f.ContentHash {
		t.Error("the same visible text, other markup and white space: another content hash")
	}
}

// Texts that differ in a word are a few bits apart; other texts far.
func TestSimHash(t *testing.T) {
	words := func(seed, n int) string {
		var b strings.Builder
		for i := range n {
			b.WriteString(" w")
			b.WriteString(strings.Repeat("x", (i*7+seed)%13))
			b.WriteByte(byte('a' + (i*31+seed*17)%26))
		}
		return b.String()
	}
	base := words(1, 300)
	ws := strings.Fields(base)
	ws[10], ws[150] = "changed", "words"
	near := strings.Join(ws, " ")
	a := ReadHTML([]byte("<p>"+base), "").Facts
	b := ReadHTML([]byte("<p>"+near), "").Facts
	c := ReadHTML([]byte("<p>"+words(5, 300)), "").Facts
	if d := bits.OnesCount64(a.SimHash ^ b.SimHash); d > 6 || a.ContentHash == b.ContentHash {
		t.Errorf("a near text: %d bits apart (want ≤ 6), same hash %v", d, a.ContentHash == b.ContentHash)
	}
	if d := bits.OnesCount64(a.SimHash ^ c.SimHash); d < 16 {
		t.Errorf("another text: %d bits apart, want many", d)
	}
}

func TestFactsIDsCapped(t *testing.T) {
	var b strings.Builder
	for i := range MaxIDs + 5 {
		b.WriteString(`<p id="i`)
		b.WriteString(strings.Repeat("x", i%3))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(itoa(i))
		b.WriteString(`">`)
	}
	f := ReadHTML([]byte(b.String()), "").Facts
	if len(f.IDs) != MaxIDs || f.IDsCut != 5 {
		t.Errorf("%d ids, %d cut", len(f.IDs), f.IDsCut)
	}
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var b []byte
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// The facts' word split and SimHash agree with the plain reading of their
// definitions: strings.Fields over the visible text, and a sum per bit of
// +1 or -1 per word, and FNV-1a of the words joined by a space. Texts of many words (past the counters' flush at
// 255), Unicode white space, and words that are not valid UTF-8.
func TestFactsAgreeWithDefinition(t *testing.T) {
	texts := []string{
		"",
		"one",
		"  lead and trail\u00a0nbsp\u2003em\u3000ideographic\u0085nel\vvt ",
		"bad \xff\xfe utf8 \xe2\x80 cut",
		strings.Repeat("alpha beta gamma delta ", 300),
	}
	var b strings.Builder
	for i := range 2000 {
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), 1+i%7))
		b.WriteString(itoa(i * 7919 % 1000))
		b.WriteString([]string{" ", "\n", "\t", "\u2028"}[i%4])
	}
	texts = append(texts, b.String())
	for _, text := range texts {
		var sums [64]int
		words := strings.Fields(text)
		for _, w := range words {
			h := uint64(fnvOffset)
			for _, c := range []byte(w) {
				h = (h ^ uint64(c)) * fnvPrime
			}
			h = mix(h)
			for i := range sums {
				if h&(1<<i) != 0 {
					sums[i]++
				} else {
					sums[i]--
				}
			}
		}
		var want uint64
		for i, v := range sums {
			if v > 0 {
				want |= 1 << i
			}
		}
		content := uint64(fnvOffset)
		for _, c := range []byte(strings.Join(words, " ")) {
			content = (content ^ uint64(c)) * fnvPrime
		}
		s := newFactScan()
		// In two text tokens, split at a space (tags split words).
		cut := len(text)
		if i := strings.IndexByte(text[len(text)/2:], ' '); i >= 0 {
			cut = len(text)/2 + i
		}
		s.text([]byte(text[:cut]))
		s.text([]byte(text[cut:]))
		got := s.done()
		if got.WordCount != len(words) || got.SimHash != want || got.ContentHash != content {
			t.Errorf("%.40q: %d words, SimHash %016x, hash %016x; want %d, %016x, %016x",
				text, got.WordCount, got.SimHash, got.ContentHash, len(words), want, content)
		}
	}
}
