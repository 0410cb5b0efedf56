package links

import "strings"

// rewriteSrcset rewrites each image candidate URL of a srcset value.
func rewriteSrcset(val string, fn func(string) (string, bool)) (string, bool) {
	var b strings.Builder
	changed, last := false, 0
	for _, sp := range srcsetURLs(val) {
		nv, c := fn(val[sp[0]:sp[1]])
		if !c {
			continue
		}
		nv = protectCandidate(nv)
		b.WriteString(val[last:sp[0]])
		b.WriteString(nv)
		last = sp[1]
		changed = true
	}
	if !changed {
		return val, false
	}
	b.WriteString(val[last:])
	return b.String(), true
}

// protectCandidate is the URL u written so that a srcset reads it whole: a
// candidate ends at white space, and a parser drops the commas it begins
// and ends with. Commas are kept where the URL's meaning allows, since
// %2C is another URL: one it begins with (a relative path) gets "./"
// before it, one it ends with an empty fragment after it ("a,#", as a
// page may write it); only one that ends a fragment is escaped.
func protectCandidate(u string) string {
	u = strings.ReplaceAll(u, " ", "%20")
	if strings.HasPrefix(u, ",") {
		u = "./" + u
	}
	if !strings.HasSuffix(u, ",") {
		return u
	}
	if !strings.Contains(u, "#") {
		return u + "#"
	}
	trimmed := strings.TrimRight(u, ",")
	return trimmed + strings.Repeat("%2C", len(u)-len(trimmed))
}

// srcsetURLs returns the spans of the candidate URLs of a srcset value, as
// HTML's "parse a srcset attribute" finds them.
func srcsetURLs(s string) [][2]int {
	var out [][2]int
	i := 0
	for i < len(s) {
		for i < len(s) && (isHTMLSpace(s[i]) || s[i] == ',') {
			i++
		}
		if i == len(s) {
			break
		}
		start := i
		for i < len(s) && !isHTMLSpace(s[i]) {
			i++
		}
		end := i
		if s[end-1] == ',' {
			for end > start && s[end-1] == ',' {
				end--
			}
		} else {
			i = skipDescriptors(s, i)
		}
		if end > start {
			out = append(out, [2]int{start, end})
		}
	}
	return out
}

// skipDescriptors passes the descriptors of a srcset candidate, up to the
// comma that ends it (commas inside parentheses do not).
func skipDescriptors(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}

// rewriteRefresh rewrites the URL of a meta refresh content value.
func rewriteRefresh(val string, fn func(string) (string, bool)) (string, bool) {
	start, end, quote, ok := refreshSpan(val)
	if !ok {
		return val, false
	}
	nv, changed := fn(val[start:end])
	if !changed {
		return val, false
	}
	switch quote {
	case '\'':
		nv = strings.ReplaceAll(nv, "'", "%27")
	case '"':
		nv = strings.ReplaceAll(nv, `"`, "%22")
	}
	return val[:start] + nv + val[end:], true
}

// refreshSpan finds the URL in the content of a meta refresh, following
// HTML's "shared declarative refresh steps": "5; url='/next'" gives the span
// of /next and the quote.
func refreshSpan(s string) (start, end int, quote byte, ok bool) {
	i := skipHTMLSpace(s, 0)
	digits := i
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == digits && (i == len(s) || s[i] != '.') {
		return 0, 0, 0, false
	}
	for i < len(s) && ('0' <= s[i] && s[i] <= '9' || s[i] == '.') {
		i++
	}
	if i < len(s) && s[i] != ';' && s[i] != ',' && !isHTMLSpace(s[i]) {
		return 0, 0, 0, false
	}
	i = skipHTMLSpace(s, i)
	if i < len(s) && (s[i] == ';' || s[i] == ',') {
		i++
	}
	i = skipHTMLSpace(s, i)
	if i == len(s) {
		return 0, 0, 0, false
	}
	start = i
	if j, ok := skipURLPrefix(s, i); ok {
		i = j
		if i < len(s) && (s[i] == '\'' || s[i] == '"') {
			quote = s[i]
			i++
		}
		start = i
	} else if s[i] == '\'' || s[i] == '"' {
		quote = s[i]
		start = i + 1
	}
	end = len(s)
	if quote != 0 {
		if k := strings.IndexByte(s[start:], quote); k >= 0 {
			end = start + k
		}
	}
	return start, end, quote, true
}

// skipURLPrefix passes `url =` (any case, spaces around '='), if s has it
// at i.
func skipURLPrefix(s string, i int) (int, bool) {
	if len(s)-i < 3 || !strings.EqualFold(s[i:i+3], "url") {
		return i, false
	}
	j := skipHTMLSpace(s, i+3)
	if j == len(s) || s[j] != '=' {
		return i, false
	}
	return skipHTMLSpace(s, j+1), true
}

// isHTMLSpace reports whether c is ASCII white space as HTML and CSS
// define it: space, tab, LF, FF, CR.
func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

func skipHTMLSpace(s string, i int) int {
	for i < len(s) && isHTMLSpace(s[i]) {
		i++
	}
	return i
}

// RefreshURL returns the URL in the content of a meta refresh, such as
// "5; url='/next'", or "" when there is none.
func RefreshURL(content string) string {
	start, end, _, ok := refreshSpan(content)
	if !ok {
		return ""
	}
	return content[start:end]
}
