package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/politecrawl/crawler/storage/wacz"
)

const waczUsage = "wacz --warc DIR [--urls FILE] --out FILE.wacz"

// runWACZ is `crawler wacz`: it packages the WARC files of a crawl
// (output.warc), with their indexes and the pages of its inventory
// (output.urls), as one WACZ file, written whole or not at all.
//
// Exit status: 0 when the package was written, 1 when an input could not
// be read or the package not written, 2 for bad usage.
func runWACZ(ctx context.Context, args []string, s stdio) error {
	fset := flag.NewFlagSet("wacz", flag.ContinueOnError)
	dir := fset.String("warc", "", "package the WARC files of `DIR` (the crawl's output.warc)")
	urls := fset.String("urls", "", "list the 200 HTML pages of the inventory `FILE` (output.urls) as the entry points; default: those of the index, without titles")
	out := fset.String("out", "", "write the package to `FILE.wacz`")
	pos, err := parseFlags(fset, args, waczUsage, s.out)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usageErrorf("wacz: takes no arguments, got %q (usage: crawler %s)", pos[0], waczUsage)
	case *dir == "":
		return usageErrorf("wacz: --warc: give the directory of the WARC files (usage: crawler %s)", waczUsage)
	case *out == "" || *out == "-":
		return usageErrorf("wacz: --out: give the file to write (usage: crawler %s)", waczUsage)
	}
	var pages []wacz.Page
	if *urls != "" {
		f, err := os.Open(*urls)
		if err != nil {
			return fmt.Errorf("wacz: --urls: %w", err)
		}
		pages, err = wacz.PagesOf(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("wacz: --urls %s: %w", *urls, err)
		}
		if pages == nil {
			pages = []wacz.Page{} // the inventory has none: list none
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(*out), "."+filepath.Base(*out)+".*")
	if err != nil {
		return fmt.Errorf("wacz: %w", err)
	}
	err = tmp.Chmod(0o644) // CreateTemp makes it 0600
	if err == nil {
		// A signal fails the next write: the package is not finished.
		err = wacz.Write(ctxWriter{ctx, tmp}, *dir, pages, wacz.Options{Software: "politecrawl " + versionString()})
	}
	if ctx.Err() != nil {
		err = errors.New("stopped by signal; no package written")
	}
	if err == nil {
		err = tmp.Sync()
	}
	err = errors.Join(err, tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), *out)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("wacz: %w", err)
	}
	fmt.Fprintf(s.err, "wrote %s\n", *out)
	return nil
}

// ctxWriter writes to w until ctx ends, then fails: a signal stops a
// package of gigabytes of WARC files at its next write, not at its end.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
