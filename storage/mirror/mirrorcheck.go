package mirror

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/politecrawl/crawler/storage/links"
)

// Bounds on Check's work.
const (
	maxCheckedFile = 32 << 20 // bytes; larger files are skipped and counted
	maxBrokenLinks = 10000    // listed in a Report; the rest are counted
)

// Report is what Check found.
type Report struct {
	Files    int          // HTML and CSS files checked
	Links    int          // relative references in them, each occurrence counted
	Broken   []BrokenLink // references that lead to no file, sorted by file then reference
	Unlisted int          // broken references beyond the first 10,000, counted but not listed
	TooLarge int          // HTML and CSS files over 32 MiB, not checked
}

// BrokenLink is a relative reference in a mirror file that leads to no
// file of the mirror.
type BrokenLink struct {
	File string // the file holding it, slash-separated, relative to the root
	Ref  string // the reference as written (after HTML or CSS decoding)
}

// Check checks that every relative reference in the HTML (.html,
// .htm) and CSS (.css) files under root leads to a regular file under root,
// as a browser opening the files from disk would follow it. It looks at the
// references RewriteHTML and RewriteCSS rewrite but forms' targets, which
// RewriteHTML may leave relative to a live URL; absolute URLs,
// fragment-only references and references with a scheme (data:, mailto:)
// are not mirror links and are left out.
//
// A reference is resolved as a browser maps a relative URL onto a file
// path: against the file's directory (or its <base href>, when relative),
// without its fragment, with "." and ".." segments applied, each segment
// percent-decoded; one ending in "/" names the index.html inside. It is
// broken when it climbs out of root, starts with "/", or names no regular
// file. A raw '?' is kept in the name: Path puts queries into names
// after '@', so a reference with a '?' would open a file saved for another
// URL, and is reported.
//
// Each broken reference is listed once per file; the first 10,000 found
// (walking the tree in lexical order) are listed, sorted by file then
// reference. Files over 32 MiB are skipped and counted; symbolic links are
// not followed out of root.
func Check(root string) (Report, error) {
	return CheckKnown(root, nil)
}

// Known is a mirror file whose references Check need not read again: its
// Refs are those RewriteHTMLRefs or RewriteCSSRefs returned for the body
// written, and Info describes the file written (os.Stat of it after
// Mirror.Write). Mirror.Write replaces a file by a new one, never in
// place, so a file still the same (os.SameFile), of the same size and
// modification time, still holds that body. CSS says the body was
// rewritten as a stylesheet: Check reads a file as its name says (.css), and
// a file read otherwise is read again.
type Known struct {
	Info fs.FileInfo
	Refs []string
	CSS  bool
}

// CheckKnown is Check, for a mirror some of whose files are known (by
// slash-separated path relative to root): a known file that is still the
// one written is checked from its Known.Refs rather than read and scanned
// again, the third reading of a page by a crawl that relinks its mirror
// (a fifth of its CPU on a documentation site).
func CheckKnown(root string, known map[string]Known) (Report, error) {
	var rep Report
	r, err := os.OpenRoot(root)
	if err != nil {
		return rep, fmt.Errorf("check mirror: %w", err)
	}
	defer r.Close()
	files := fileCache{r: r, regular: map[string]bool{}}
	err = fs.WalkDir(r.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walk
			}
			return err
		}
		kind := checkedKind(name)
		if !d.Type().IsRegular() || kind == fileOther {
			return nil
		}
		if k, ok := known[name]; ok && k.CSS == (kind == fileCSS) && sameFile(d, k.Info) {
			rep.Files++
			checkRefs(&files, name, path.Dir(name), true, k.Refs, &rep)
			return nil
		}
		body, err := readBounded(r, name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case errors.Is(err, errTooLarge):
			rep.TooLarge++
			return nil
		case err != nil:
			return err
		}
		rep.Files++
		checkFile(&files, name, kind, body, &rep)
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("check mirror: %w", err)
	}
	slices.SortFunc(rep.Broken, func(a, b BrokenLink) int {
		if c := strings.Compare(a.File, b.File); c != 0 {
			return c
		}
		return strings.Compare(a.Ref, b.Ref)
	})
	return rep, nil
}

// The kinds of file Check reads.
const (
	fileOther = iota
	fileHTML
	fileCSS
)

func checkedKind(name string) int {
	switch strings.ToLower(path.Ext(name)) {
	case ".html", ".htm":
		return fileHTML
	case ".css":
		return fileCSS
	}
	return fileOther
}

var errTooLarge = errors.New("file too large")

// readBounded reads a file of the root, refusing one over maxCheckedFile
// even if it grows while being read.
func readBounded(r *os.Root, name string) ([]byte, error) {
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > maxCheckedFile {
		return nil, errTooLarge
	}
	body, err := io.ReadAll(io.LimitReader(f, maxCheckedFile+1))
	if err == nil && len(body) > maxCheckedFile {
		return nil, errTooLarge
	}
	return body, err
}

// fileCache remembers, for one Check, which paths of the root are regular
// files: the pages of a site link to the same few files over and over.
type fileCache struct {
	r       *os.Root
	regular map[string]bool
}

// maxCachedFiles bounds the paths a fileCache remembers.
const maxCachedFiles = 100_000

func (c *fileCache) isRegular(p string) bool {
	if ok, seen := c.regular[p]; seen {
		return ok
	}
	if len(c.regular) == maxCachedFiles {
		clear(c.regular)
	}
	fi, err := c.r.Lstat(p)
	ok := err == nil && fi.Mode().IsRegular()
	c.regular[p] = ok
	return ok
}

// checkFile checks the relative references of one file.
func checkFile(files *fileCache, name string, kind int, body []byte, rep *Report) {
	var refs []string
	collect := func(ref string) (string, bool) {
		refs = append(refs, ref)
		return ref, false
	}
	dir, dirOK := path.Dir(name), true
	switch kind {
	case fileHTML:
		if href, ok := findBase(body); ok {
			h := cleanURL(href)
			switch {
			case isMirrorRef(h):
				dir, dirOK = baseDir(dir, h)
			case h != "" && h[0] != '#':
				return // its relative references lead away from the mirror
			}
		}
		links.Scan(body, func(ref links.Ref) {
			if ref.Kind != links.Base && ref.Kind != links.Form {
				collect(ref.URL) // a form's target is no link of the mirror (see RewriteHTML)
			}
		})
	case fileCSS:
		links.ScanCSS(body, func(ref string) { collect(ref) })
	}

	checkRefs(files, name, dir, dirOK, refs, rep)
}

// sameFile reports whether the file of d is still the one info described.
func sameFile(d fs.DirEntry, info fs.FileInfo) bool {
	if info == nil {
		return false
	}
	fi, err := d.Info()
	return err == nil && os.SameFile(fi, info) && fi.Size() == info.Size() && fi.ModTime().Equal(info.ModTime())
}

// checkRefs checks the references refs of the file name, resolved against
// dir (or none resolving, if !dirOK).
func checkRefs(files *fileCache, name, dir string, dirOK bool, refs []string, rep *Report) {
	var broken []string
	for _, ref := range refs {
		s := cleanURL(ref)
		if !isMirrorRef(s) {
			continue
		}
		rep.Links++
		if p, ok := refPath(dir, s); ok && dirOK && files.isRegular(p) {
			continue
		}
		broken = append(broken, ref)
	}
	slices.Sort(broken)
	for _, ref := range slices.Compact(broken) {
		if len(rep.Broken) == maxBrokenLinks {
			rep.Unlisted++
			continue
		}
		rep.Broken = append(rep.Broken, BrokenLink{File: name, Ref: ref})
	}
}

// isMirrorRef reports whether a cleaned reference is a relative one that
// Check follows: not empty, not fragment-only, without a scheme, not
// protocol-relative.
func isMirrorRef(s string) bool {
	if s == "" || s[0] == '#' || hasScheme(s) {
		return false
	}
	return !strings.HasPrefix(strings.ReplaceAll(s[:min(len(s), 2)], `\`, "/"), "//")
}

// baseDir is the directory against which references resolve in a file of
// directory dir whose <base href> is the relative reference h; ok is false
// when the base climbs out of the root.
func baseDir(dir, h string) (string, bool) {
	p, ok := refPath(dir, h)
	return path.Dir(p), ok
}

// refPath maps a relative reference s, found in a file of directory dir
// (slash-separated, relative to the root, "." for the root), onto the path
// of the file a browser would open, as Check describes; ok is false
// when it leaves the root or cannot name a file.
func refPath(dir, s string) (string, bool) {
	s, _, _ = strings.Cut(s, "#")
	s = strings.ReplaceAll(s, `\`, "/") // as URL parsers do for file: URLs
	if strings.HasPrefix(s, "/") {
		return "", false
	}
	var names []string
	if dir != "." {
		names = strings.Split(dir, "/")
	}
	segs := strings.Split(s, "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		switch {
		case isDotSegment(seg):
			if last {
				names = append(names, indexName)
			}
		case isDotDotSegment(seg):
			if len(names) == 0 {
				return "", false
			}
			names = names[:len(names)-1]
			if last {
				names = append(names, indexName)
			}
		case seg == "":
			if last {
				names = append(names, indexName)
			}
		default:
			name := percentDecode(seg)
			if strings.ContainsAny(name, "/\x00") {
				return "", false
			}
			names = append(names, name)
		}
	}
	return strings.Join(names, "/"), true
}

// isDotSegment and isDotDotSegment recognise "." and "..", also written
// with %2e, as the WHATWG URL parser does.
func isDotSegment(s string) bool {
	return s == "." || strings.EqualFold(s, "%2e")
}

func isDotDotSegment(s string) bool {
	switch strings.ToLower(s) {
	case "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}

// percentDecode decodes the %XX escapes of s, keeping a '%' that does not
// start one.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c, _, n := nextByte(s, i)
		b.WriteByte(c)
		i += n
	}
	return b.String()
}
