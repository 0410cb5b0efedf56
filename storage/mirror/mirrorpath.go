package mirror

import (
	"crypto/sha256"
	"encoding/hex"
	"mime"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on the names Path makes. Most file systems allow 255 bytes
// per name and 4096 per path; these leave room for the mirror root and for
// the temporary names used while writing.
const (
	maxNameLen = 200  // bytes in one file or directory name
	maxPathLen = 1024 // bytes in a whole relative path
	hashLen    = 16   // hex digits of SHA-256 in a shortened name
)

// Names that Path makes up contain '%' followed by a character that is
// not a hex digit, which the encoding of a URL never produces, so they cannot
// collide with the name of a real path segment.
const (
	emptyName  = "%_" // an empty path segment, as in /a//b
	hashMarker = "%~" // precedes the hash in a shortened name
	indexName  = "index.html"
)

// Path returns the slash-separated path, relative to the mirror root,
// at which the body of u fetched with the given Content-Type is kept. It is
// a pure function of its arguments, and the link rewriter must use it (or
// Mirror.Locate) so that links and files agree.
//
// The layout is wget -x --adjust-extension's, made safe:
//
//   - the first directory is the host, lower-cased, with the port kept when
//     it is not the scheme's default (example.com:8080); http and https URLs
//     of one host share it;
//   - each path segment becomes one name: percent-escapes of unreserved
//     characters, of spaces and of printable non-ASCII UTF-8 are decoded;
//     other escapes are kept as %XX (upper-case hex); '/', '\', '%', '@',
//     control characters, invalid UTF-8 and invisible formatting characters
//     are always escaped as %XX;
//   - a path ending in "/" is saved as index.html in that directory;
//   - a query is appended after '@', encoded the same way ("page@q=1");
//   - text/html and application/xhtml+xml bodies whose name does not end in
//     .html or .htm get ".html" appended, text/css bodies ".css"
//     ("page@q=1.html");
//   - "." and "..", empty segments, and Windows device names (CON, NUL,
//     COM1, ...) are escaped, so no segment ever climbs out of the root,
//     and so is the dot of a name starting ".tmp-", the mirror's own;
//   - a name over 200 bytes keeps its start and extension and gets a hash of
//     the whole name; a path over 1024 bytes keeps its first directories, its
//     file name, and replaces the rest of the directories by one named after
//     their hash; distinct inputs stay distinct.
//
// Distinct URLs get distinct paths except where the difference is one of
// spelling that servers treat alike (an escaped and an unescaped '@', say),
// where an .html is appended (/a and /a.html, both HTML), or between http and
// https, as with wget. Names keep their case: on a case-insensitive file
// system (macOS's and Windows' defaults), /A and /a collide, and the later
// body replaces the earlier.
func Path(u *url.URL, contentType string) string {
	names := make([]string, 0, 8)
	names = append(names, hostName(u))

	p := u.EscapedPath()
	if u.Opaque != "" {
		p = u.Opaque
	}
	segs := strings.Split(strings.TrimPrefix(p, "/"), "/")
	for _, s := range segs[:len(segs)-1] {
		names = append(names, segmentName(s))
	}

	last := segs[len(segs)-1]
	file := indexName
	if last != "" {
		file = encodeComponent(last)
	}
	if u.RawQuery != "" {
		file += "@" + encodeComponent(u.RawQuery)
	}
	file = addExtension(file, contentType)
	names = append(names, shortenName(neutralise(file)))
	return shortenPath(names)
}

// hostName is the first directory: host[:port], the port only when it is
// not the scheme's default.
func hostName(u *url.URL) string {
	host := strings.ToLower(u.Host)
	switch {
	case u.Scheme == "http" && strings.HasSuffix(host, ":80"):
		host = strings.TrimSuffix(host, ":80")
	case u.Scheme == "https" && strings.HasSuffix(host, ":443"):
		host = strings.TrimSuffix(host, ":443")
	}
	if host == "" {
		return emptyName
	}
	name := neutralise(encodeComponent(host))
	if strings.HasPrefix(name, ".") {
		// Names at the root starting with a dot are left to the mirror's
		// own use; no real host starts with one.
		name = "%2E" + name[1:]
	}
	return shortenName(name)
}

// segmentName encodes one directory name.
func segmentName(s string) string {
	if s == "" {
		return emptyName
	}
	return shortenName(neutralise(encodeComponent(s)))
}

// encodeComponent turns a raw (percent-encoded) path segment or query into a
// file name, as Path describes. Percent-escapes are decoded first, so
// "%41" and "A" give the same name; characters that are meaningful in URLs
// keep the form they had, so "%3B" and ";" stay apart.
func encodeComponent(raw string) string {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); {
		c, escaped, n := nextByte(raw, i)
		switch {
		case c >= utf8.RuneSelf:
			// Gather the rest of the UTF-8 sequence, however it was written.
			buf := []byte{c}
			j := i + n
			for len(buf) < utf8.UTFMax && !utf8.FullRune(buf) && j < len(raw) {
				c2, _, n2 := nextByte(raw, j)
				if c2 < 0x80 || c2 >= 0xC0 {
					break
				}
				buf = append(buf, c2)
				j += n2
			}
			r, size := utf8.DecodeRune(buf)
			if r != utf8.RuneError && size == len(buf) && unicode.IsGraphic(r) {
				b.Write(buf)
				i = j
				continue
			}
			writeEscape(&b, c) // an invalid or invisible sequence: one byte at a time
		case isUnreserved(c) || c == ' ':
			b.WriteByte(c)
		case unsafeInName(c):
			writeEscape(&b, c)
		case escaped:
			writeEscape(&b, c)
		default:
			b.WriteByte(c)
		}
		i += n
	}
	return b.String()
}

// nextByte returns the byte at s[i], decoding a percent-escape, whether it
// was escaped, and how many bytes of s it took.
func nextByte(s string, i int) (c byte, escaped bool, n int) {
	if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
		return unhex(s[i+1])<<4 | unhex(s[i+2]), true, 3
	}
	return s[i], false, 1
}

// unsafeInName reports whether c may never appear literally in a name: the
// separators, '%' (which starts our escapes), '@' (which starts a query) and
// control characters.
func unsafeInName(c byte) bool {
	return c < 0x20 || c == 0x7F || c == '/' || c == '\\' || c == '%' || c == '@'
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}

func writeEscape(b *strings.Builder, c byte) {
	const digits = "0123456789ABCDEF"
	b.WriteByte('%')
	b.WriteByte(digits[c>>4])
	b.WriteByte(digits[c&15])
}

// addExtension appends .html or .css as wget --adjust-extension does.
func addExtension(name, contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(strings.ToLower(strings.TrimSpace(contentType)), ";")
		mt = strings.TrimSpace(mt)
	}
	lower := strings.ToLower(name)
	switch mt {
	case "text/html", "application/xhtml+xml":
		if !strings.HasSuffix(lower, ".html") && !strings.HasSuffix(lower, ".htm") {
			return name + ".html"
		}
	case "text/css":
		if !strings.HasSuffix(lower, ".css") {
			return name + ".css"
		}
	}
	return name
}

// neutralise escapes the names a file system gives a meaning to: "." and
// "..", and the Windows device names, with or without an extension.
func neutralise(name string) string {
	switch name {
	case ".":
		return "%2E"
	case "..":
		return "%2E%2E"
	}
	if strings.HasPrefix(name, tempPrefix) {
		return "%2E" + name[1:] // the mirror's temporary files are named so
	}
	stem, _, _ := strings.Cut(name, ".")
	if isDeviceName(stem) {
		var b strings.Builder
		writeEscape(&b, name[0])
		return b.String() + name[1:]
	}
	return name
}

func isDeviceName(stem string) bool {
	switch strings.ToUpper(strings.TrimRight(stem, " ")) {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(stem) == 4 {
		prefix := strings.ToUpper(stem[:3])
		return (prefix == "COM" || prefix == "LPT") && '0' <= stem[3] && stem[3] <= '9'
	}
	return false
}

// shortenName cuts a name longer than maxNameLen, keeping its start and a
// short extension, and puts a hash of the whole name between them.
func shortenName(name string) string {
	if len(name) <= maxNameLen {
		return name
	}
	ext := extension(name)
	keep := maxNameLen - len(hashMarker) - hashLen - len(ext)
	return cutClean(name, keep) + hashMarker + shortHash(name) + ext
}

// extension returns a name's extension when it is short and plain
// (".html", ".tar"), else "".
func extension(name string) string {
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 || len(name)-dot > 10 {
		return ""
	}
	for _, c := range []byte(name[dot+1:]) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return ""
		}
	}
	return name[dot:]
}

// cutClean returns s cut to at most n bytes without splitting a %XX escape
// or a UTF-8 sequence.
func cutClean(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if n >= 1 && s[n-1] == '%' {
		n--
	} else if n >= 2 && s[n-2] == '%' {
		n -= 2
	}
	return s[:n]
}

func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:hashLen/2])
}

// shortenPath joins names with '/', and when the result is over maxPathLen,
// keeps the first directories and the file name and replaces the other
// directories by one named after their hash, so that files that shared a
// directory still do.
func shortenPath(names []string) string {
	joined := strings.Join(names, "/")
	if len(joined) <= maxPathLen {
		return joined
	}
	file := names[len(names)-1]
	dirs := names[:len(names)-1]
	hashed := len(hashMarker) + hashLen
	budget := maxPathLen - len(file) - 1 - hashed - 1
	keep, used := 0, 0
	for keep < len(dirs) && used+len(dirs[keep])+1 <= budget {
		used += len(dirs[keep]) + 1
		keep++
	}
	rest := strings.Join(dirs[keep:], "/")
	out := append(dirs[:keep:keep], hashMarker+shortHash(rest), file)
	return strings.Join(out, "/")
}

// RelativeRef returns the relative URL reference by which the mirror file
// at path from links to the mirror file at path to (both as Path or
// Mirror.Write return them), percent-encoded so that a browser opening the
// mirror from disk finds the file: "../other/page@q=1.html".
func RelativeRef(from, to string) string {
	fromDirs := strings.Split(from, "/")
	fromDirs = fromDirs[:len(fromDirs)-1]
	toNames := strings.Split(to, "/")
	common := 0
	for common < len(fromDirs) && common < len(toNames)-1 && fromDirs[common] == toNames[common] {
		common++
	}
	var b strings.Builder
	for range len(fromDirs) - common {
		b.WriteString("../")
	}
	for i, name := range toNames[common:] {
		if i > 0 {
			b.WriteByte('/')
		}
		escapeRefName(&b, name)
	}
	ref := b.String()
	if first, _, _ := strings.Cut(ref, "/"); strings.Contains(first, ":") {
		ref = "./" + ref // not to be read as a scheme (RFC 3986 section 4.2)
	}
	return ref
}

// escapeRefName writes a file name as a URL path segment: unreserved
// characters and the sub-delimiters that are harmless in a path stay, all
// else (including every non-ASCII byte) is percent-encoded.
func escapeRefName(b *strings.Builder, name string) {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if isUnreserved(c) || strings.IndexByte("!$&'()*+,;=:@", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		writeEscape(b, c)
	}
}
