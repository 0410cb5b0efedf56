package mirror

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Mirror keeps fetched bodies as files under a root directory, at the paths
// Path gives. It is safe for concurrent use by multiple goroutines
// within one process; two processes must not share a root.
//
// When one URL's file and another URL's directory would have the same name
// (/e saved as a file, then /e/ or /e/x needing e/ as a directory, in
// either order), the directory wins and the file is kept beside it, under
// the name AsidePath gives (e%!, data%!.json), which no URL's path can
// take. The outcome does not depend on the order of the writes; Locate
// finds where a URL's file is now. /e/ and /e/index.html share
// e/index.html, as in wget, but /e's body is never lost to them. (wget
// itself deletes the file e to make the directory, or saves the file as
// e.1 when the directory came first, a name a URL can take.)
type Mirror struct {
	root string
	mu   sync.Mutex // serialises changes to the directory tree
	// dirs are directories (relative, slash-separated) that makeDirs
	// made or found whole, no symbolic link on their path, up to
	// maxKnownDirs: a page is written into one of them without its path
	// being looked at again. Guarded by mu.
	dirs map[string]bool
}

// maxKnownDirs bounds Mirror.dirs; past it the set starts again, and a
// directory is looked at once more.
const maxKnownDirs = 4096

// New returns a Mirror rooted at dir, which it creates if needed. The
// temporary files a killed crawl left behind (".tmp-*", a name Path never
// gives) are removed.
func New(dir string) (*Mirror, error) {
	if dir == "" {
		return nil, errors.New("mirror: empty directory")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	if err := removeTemps(dir); err != nil {
		return nil, fmt.Errorf("mirror: %w", err)
	}
	return &Mirror{root: dir}, nil
}

// removeTemps deletes the regular files named .tmp-* under dir.
func removeTemps(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.Type().IsRegular() && strings.HasPrefix(d.Name(), tempPrefix) {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	})
}

// tempPrefix starts the names of files being written.
const tempPrefix = ".tmp-"

// Root returns the mirror's root directory.
func (m *Mirror) Root() string { return m.root }

// Write stores body as the file for u and contentType, replacing any earlier
// version atomically: readers see the old file or the new one, never a part.
// It returns the slash-separated path written, relative to the root.
// Directories are created 0o755 and files 0o644, less the umask (as wget
// makes them).
func (m *Mirror) Write(u *url.URL, contentType string, body io.Reader) (string, error) {
	rel := Path(u, contentType)
	tmp, err := m.writeTempIn(path.Dir(rel), body)
	if err != nil {
		return "", fmt.Errorf("mirror %s: %w", rel, err)
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	// Renamed first, asked after: a name that is a directory, which
	// refuses the rename, sends the file beside it (locate); asking each
	// time was a system call for every page.
	final := rel
	if err = os.Rename(tmp, m.abs(rel)); err != nil {
		if aside, lerr := m.locate(rel); lerr != nil {
			err = lerr
		} else if aside != rel {
			final, err = aside, os.Rename(tmp, m.abs(aside))
		}
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("mirror %s: %w", rel, err)
	}
	return final, nil
}

// Locate returns the slash-separated path, relative to the root, at which
// the file for u and contentType is or would be kept: Path's answer,
// or AsidePath's when that name is a directory.
func (m *Mirror) Locate(u *url.URL, contentType string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.locate(Path(u, contentType))
}

// Remove deletes the file for u and contentType, for a page that is gone.
// A file that does not exist is not an error.
func (m *Mirror) Remove(u *url.URL, contentType string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	rel, err := m.locate(Path(u, contentType))
	if err == nil {
		err = os.Remove(m.abs(rel))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("mirror remove %s: %w", rel, err)
	}
	return nil
}

func (m *Mirror) abs(rel string) string {
	return filepath.Join(m.root, filepath.FromSlash(rel))
}

// locate returns where the file of rel is kept: rel, or beside it when
// rel is a directory.
func (m *Mirror) locate(rel string) (string, error) {
	fi, err := os.Lstat(m.abs(rel))
	if err != nil || !fi.IsDir() {
		return rel, nil
	}
	aside := AsidePath(rel)
	if fi, err := os.Lstat(m.abs(aside)); err == nil && fi.IsDir() {
		return "", fmt.Errorf("%s is a directory", aside)
	}
	return aside, nil
}

// AsidePath is where Mirror keeps the file of rel (a path Path gave) when
// rel is a directory: beside it, "%!" added before its extension. '%'
// followed by '!' is never in a name Path makes of a URL.
func AsidePath(rel string) string {
	dir, name := path.Split(rel)
	ext := extension(name)
	return dir + strings.TrimSuffix(name, ext) + asideMark + ext
}

const asideMark = "%!"

// writeTempIn writes body into a new temporary file in the directory rel
// under the root (see writeTemp), making its directories first unless
// makeDirs made or checked them already (Mirror.dirs): looking at each
// directory of the path before every page was most of the system calls
// of writing it. A known directory gone since (removed by hand) is made
// again; one swapped for a symbolic link while the crawl runs is trusted,
// as the rest of the state directory is.
func (m *Mirror) writeTempIn(rel string, body io.Reader) (string, error) {
	m.mu.Lock()
	known := m.dirs[rel]
	m.mu.Unlock()
	if known {
		tmp, err := writeTemp(m.abs(rel), body)
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return tmp, err
		}
		// The file could not be made, and nothing of body was read.
	}
	dir, err := m.makeDirs(rel)
	if err != nil {
		return "", err
	}
	return writeTemp(dir, body)
}

// makeDirs creates the directories of rel under the root and returns the
// absolute path of the last. A regular file in the way is moved aside.
func (m *Mirror) makeDirs(rel string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.root
	for name := range strings.SplitSeq(rel, "/") {
		next := filepath.Join(cur, name)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = os.Mkdir(next, 0o755)
		case err != nil:
		case fi.IsDir():
		case fi.Mode().IsRegular():
			err = fileAside(next)
		default:
			err = fmt.Errorf("%s is neither a file nor a directory", next)
		}
		if err != nil {
			return "", err
		}
		cur = next
	}
	if m.dirs == nil || len(m.dirs) >= maxKnownDirs {
		m.dirs = map[string]bool{}
	}
	m.dirs[rel] = true
	return cur, nil
}

// fileAside replaces the regular file at p by a directory, and keeps the
// file beside it (see AsidePath).
func fileAside(p string) error {
	aside := filepath.Join(filepath.Dir(p), filepath.FromSlash(AsidePath(filepath.Base(p))))
	if err := os.Rename(p, aside); err != nil {
		return err
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		return errors.Join(err, os.Rename(aside, p))
	}
	return nil
}

// writeTemp copies body into a new temporary file in dir and returns its
// name; when the file cannot be made, nothing of body is read. Temporary
// names start with ".tmp-", which Path never makes; a collision is
// refused by O_EXCL, never clobbered. The file is made with its final
// mode, as os.CreateTemp's 0600 would need a chmod: one more inode change
// per page.
func writeTemp(dir string, body io.Reader) (string, error) {
	var f *os.File
	var err error
	for range 100 {
		name := filepath.Join(dir, tempPrefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err = createNew(name)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
