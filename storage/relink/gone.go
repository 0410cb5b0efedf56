package relink

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/links"
	"github.com/politecrawl/crawler/storage/mirror"
)

// unlinkGone makes absolute again the broken links of mirror files that
// lead to pages removed from the mirror since they were relinked (404 or
// 410 on a revisit), as a link to a page the mirror does not have is
// written. Only links still broken when a file is rewritten change (see
// mirror.UnlinkGone): a page saved since where a gone one was keeps its
// links. A file whose page a worker is visiting is left for the next pass.
// It returns how many files changed and how many were left.
func (r *Relinker) unlinkGone(broken []mirror.BrokenLink) (changed, left int, err error) {
	if len(broken) == 0 {
		return 0, 0, nil
	}
	gone := map[string]string{}        // mirror path a gone page had → its URL
	owner := map[string]storage.Page{} // mirror path → the page saved there
	need := map[string]bool{}          // files with broken links
	for _, b := range broken {
		need[b.File] = true
	}
	err = r.Pages.ForEach(func(p storage.Page) error {
		switch {
		case need[p.MirrorPath] && p.Relinked:
			owner[p.MirrorPath] = p // its relative links are mirror paths
		case p.MirrorPath == "" && (p.Status == 404 || p.Status == 410):
			at := mirror.Path(frontier.MustParse(p.URL), p.ContentType)
			gone[at], gone[mirror.AsidePath(at)] = p.URL, p.URL // where Locate may have put it
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("read page records: %w", err)
	}
	if len(gone) == 0 {
		return 0, 0, nil
	}
	root, err := os.OpenRoot(r.Mirror.Root())
	if err != nil {
		return 0, 0, fmt.Errorf("unlink gone pages: %w", err)
	}
	defer root.Close()
	lookup := func(p string) (string, bool) { u, ok := gone[p]; return u, ok }
	for file, p := range owner {
		ok, busy, err := r.unlinkIdle(root, file, p.Key, lookup)
		if err != nil {
			r.Log.Warn("unlink gone pages", "file", file, "err", err)
		}
		if ok {
			changed++
		}
		if busy {
			left++
		}
	}
	return changed, left, nil
}

// unlinkIdle rewrites file, the mirror file of the page of key, with
// UnlinkGone, unless a worker is visiting that page (it is left for the
// next pass, as relinkIdle does, and busy is true). The record is read
// again once the URL is held. It reports whether the file changed.
func (r *Relinker) unlinkIdle(root *os.Root, file, key string, gone func(string) (string, bool)) (changed, busy bool, err error) {
	if !r.Hold(key) {
		return false, true, nil
	}
	defer r.Drop(key)
	p, ok, err := r.Pages.Get(key)
	if err != nil || !ok || !p.Relinked || p.MirrorPath != file {
		return false, false, err
	}
	m := r.Mirror
	body, err := os.ReadFile(filepath.Join(m.Root(), filepath.FromSlash(file)))
	if err != nil {
		return false, false, err
	}
	body, n := mirror.UnlinkGone(root, body, file, links.IsCSSType(p.ContentType), gone)
	if n == 0 {
		return false, false, nil
	}
	_, err = m.Write(frontier.MustParse(p.URL), p.ContentType, bytes.NewReader(body))
	return err == nil, false, err
}
