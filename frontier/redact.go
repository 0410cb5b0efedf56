package frontier

import "strings"

// Redact returns s with the password of every URL in it written xxxxx
// ("http://user:xxxxx@host/"), as url.URL.Redacted writes it, whether or
// not the URL parses: s may be one URL, a comma-separated list of them, or
// a message that quotes some (an error). Everything the crawl writes for a
// person or a program — the inventory, the link graph, logs, errors — goes
// through it where a URL it did not make may appear. A URL's authority is
// what follows "://" up to '/', '?', '#', '"', '<', '>' or white space;
// its userinfo is what comes before the last '@' in it.
func Redact(s string) string {
	if strings.IndexByte(s, '@') < 0 {
		return s
	}
	var b strings.Builder
	last := 0 // s[:last] is written to b
	for i := 0; ; {
		j := strings.Index(s[i:], "://")
		if j < 0 {
			break
		}
		start := i + j + 3
		end := len(s)
		if k := strings.IndexAny(s[start:], "/?#\"<> \t\r\n"); k >= 0 {
			end = start + k
		}
		auth := s[start:end]
		if at := strings.LastIndexByte(auth, '@'); at >= 0 {
			if c := strings.IndexByte(auth[:at], ':'); c >= 0 && auth[c+1:at] != "xxxxx" {
				b.WriteString(s[last : start+c+1])
				b.WriteString("xxxxx")
				last = start + at
			}
		}
		i = start
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
