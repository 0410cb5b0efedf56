package crawler

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// minFree is the free space below which a place the crawl writes to is
// not ready: a page record, a mirror file or a WARC record of an
// ordinary page needs less, and a disk this full fails the next large one.
const minFree = 1 << 20

// Ready reports whether the crawl can go on keeping what it fetches: no
// write has failed, the state database and every output the config keeps
// can be written (its folder exists, may be written, and has at least
// 1 MiB free), and, in a crawl shared by several workers, the NATS server is
// reachable. /readyz answers 503 with the error while it is not nil.
// It takes no lock the crawl holds for long.
func (c *Crawler) Ready() error {
	if err := c.halt.err(); err != nil {
		return err
	}
	var errs []error
	for _, p := range c.writtenPlaces() {
		if err := writable(p.dir); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.key, err))
		}
	}
	if c.shared != nil && !c.shared.m.Connected() {
		errs = append(errs, errors.New("cluster.nats: not connected to the server"))
	}
	return errors.Join(errs...)
}

// place is a folder the crawl writes to, and the config key that names it.
type place struct{ key, dir string }

// writtenPlaces lists the folders of the state and of the outputs open.
func (c *Crawler) writtenPlaces() []place {
	out := c.cfg.Output
	ps := []place{{"state_dir", c.cfg.StateDir}}
	if c.out.inv != nil && c.opts.Inventory == nil && out.URLs != "-" {
		ps = append(ps, place{"output.urls", filepath.Dir(out.URLs)})
	}
	if c.out.links != nil && out.Links != "-" {
		ps = append(ps, place{"output.links", filepath.Dir(out.Links)})
	}
	if c.out.mirror != nil {
		ps = append(ps, place{"output.mirror_dir", out.MirrorDir})
	}
	if c.out.warc != nil {
		ps = append(ps, place{"output.warc", out.WARC})
	}
	return ps
}

// writable reports why dir cannot take another write, if it cannot.
func writable(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: not a directory", dir)
	}
	free, err := freeSpace(dir)
	if err != nil {
		return err
	}
	if free < minFree {
		return fmt.Errorf("%s: %d bytes free, less than 1 MiB", dir, free)
	}
	return nil
}
