package mirror

import (
	"os"
	"path"
	"strings"

	"github.com/politecrawl/crawler/storage/links"
)

// UnlinkGone returns body, the mirror file at selfPath (slash-separated,
// relative to root) as RewriteHTML or RewriteCSS left it, with each
// relative reference that leads to a file no longer in the mirror made an
// absolute URL again, as RewriteHTML writes a link to a page the mirror
// does not have. Only broken references change, those Check would
// report: one whose target is a regular file of root at this moment is
// kept, whatever gone says of its path (another page may be saved there,
// or the gone page may have come back). gone is given the path a broken
// reference leads to, as Check resolves it, and returns the URL of
// the page that was kept there, if any. The reference's fragment is kept.
// css says body is a stylesheet. It returns the new body and how many
// references changed.
func UnlinkGone(root *os.Root, body []byte, selfPath string, css bool, gone func(mirrorPath string) (url string, ok bool)) ([]byte, int) {
	dir, n := path.Dir(selfPath), 0
	fn := func(ref string) (string, bool) {
		s := cleanURL(ref)
		if !isMirrorRef(s) {
			return ref, false
		}
		p, ok := refPath(dir, s)
		if !ok {
			return ref, false
		}
		if fi, err := root.Lstat(p); err == nil && fi.Mode().IsRegular() {
			return ref, false // not broken
		}
		abs, ok := gone(p)
		if !ok {
			return ref, false
		}
		if _, frag, ok := strings.Cut(s, "#"); ok {
			abs += "#" + frag
		}
		n++
		return abs, true
	}
	if css {
		return links.RewriteCSS(body, fn), n
	}
	out := links.Rewrite(body, func(ref links.Ref) (string, bool) {
		if ref.Kind == links.Base {
			return "", false
		}
		return fn(ref.URL)
	})
	return out, n
}
