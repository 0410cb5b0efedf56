package crawler

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/mirror"
	"github.com/politecrawl/crawler/storage/warc"
)

// outputs are where a crawl's results go besides its state: the JSON Lines
// inventory and link graph, the mirror and the WARC files. Each is
// optional.
type outputs struct {
	inv    *storage.Inventory // safe for concurrent use: one line at a time, each whole
	links  *storage.Inventory // the link graph
	mirror *mirror.Mirror
	warc   *warc.Writer
	index  warc.Index // of what the WARC files hold
	log    *slog.Logger

	mirrored atomic.Int64 // pages saved in or removed from the mirror, and nothing else: relinkEvery reads a change in it
}

func openOutputs(cfg Config, opts Options, log *slog.Logger, digests warc.Index) (*outputs, error) {
	o := &outputs{log: log, index: digests}
	var err error
	switch {
	case opts.Inventory != nil:
		o.inv = storage.NewInventory(opts.Inventory)
	case cfg.Output.URLs != "":
		if o.inv, err = storage.OpenInventory(cfg.Output.URLs, opts.Stdout); err != nil {
			return nil, fmt.Errorf("output.urls: %w", err)
		}
	}
	if cfg.Output.Links != "" {
		if o.links, err = storage.OpenInventory(cfg.Output.Links, opts.Stdout); err != nil {
			return nil, fmt.Errorf("output.links: %w", err)
		}
	}
	if opts.NoBodies {
		return o, nil
	}
	if cfg.Output.MirrorDir != "" {
		if o.mirror, err = mirror.New(cfg.Output.MirrorDir); err != nil {
			return nil, fmt.Errorf("output.mirror_dir: %w", err)
		}
	}
	if cfg.Output.WARC != "" {
		o.warc, err = warc.NewWriter(warc.Options{
			Dir: cfg.Output.WARC, MaxSize: int64(cfg.Output.WARCMaxSize),
			Software: "politecrawl", Info: map[string]string{"http-header-user-agent": cfg.UserAgent},
			Index: digests,
		})
		if err != nil {
			return nil, fmt.Errorf("output.warc: %w", err)
		}
	}
	return o, nil
}

// inventory appends a record and hands it to the operating system at once,
// with any held before it, so that a killed crawl loses none. The error is
// the write's: the URL whose record it is must not be counted done.
func (o *outputs) inventory(r storage.Record) error {
	if err := o.inventoryHeld(r); err != nil {
		return err
	}
	return o.flushInventory()
}

// inventoryHeld appends a record that the operating system gets with the
// next one inventory writes, or at flushInventory (see refused).
func (o *outputs) inventoryHeld(r storage.Record) error {
	if o.inv == nil {
		return nil
	}
	return o.inv.Write(redactRecord(r))
}

// flushInventory hands the records held to the operating system.
func (o *outputs) flushInventory() error {
	if o.inv == nil {
		return nil
	}
	return o.inv.Flush()
}

// redactRecord is r with the password of every URL in it masked
// (frontier.Redact): a page may link to http://user:password@host/, which
// is refused, and recorded so.
func redactRecord(r storage.Record) storage.Record {
	r.URL, r.FinalURL, r.Referrer = frontier.Redact(r.URL), frontier.Redact(r.FinalURL), frontier.Redact(r.Referrer)
	r.Canonical, r.Error = frontier.Redact(r.Canonical), frontier.Redact(r.Error)
	if slices.ContainsFunc(r.RedirectChain, hasAt) {
		r.RedirectChain = slices.Clone(r.RedirectChain)
		for i, u := range r.RedirectChain {
			r.RedirectChain[i] = frontier.Redact(u)
		}
	}
	if slices.ContainsFunc(r.Hreflang, func(h storage.Hreflang) bool { return hasAt(h.URL) }) {
		r.Hreflang = slices.Clone(r.Hreflang)
		for i := range r.Hreflang {
			r.Hreflang[i].URL = frontier.Redact(r.Hreflang[i].URL)
		}
	}
	return r
}

func hasAt(s string) bool { return strings.IndexByte(s, '@') >= 0 }

// linkGraph appends a page's links to the link graph, all of them before
// its URL is done: a kill in between writes them again with the visit.
func (o *outputs) linkGraph(links []storage.Link) error {
	if o.links == nil || len(links) == 0 {
		return nil
	}
	for _, l := range links {
		// An anchor is often the URL itself, written out.
		l.From, l.To, l.Anchor = frontier.Redact(l.From), frontier.Redact(l.To), frontier.Redact(l.Anchor)
		if err := o.links.WriteLink(l); err != nil {
			return err
		}
	}
	return o.links.Flush()
}

// saveMirror writes a fetched page into the mirror and returns its path
// there ("" when there is no mirror).
func (o *outputs) saveMirror(u *url.URL, resp *response) (string, error) {
	if o.mirror == nil {
		return "", nil
	}
	path, err := o.mirror.Write(u, resp.header.Get("Content-Type"), bytes.NewReader(resp.body))
	if err != nil {
		return "", fmt.Errorf("write %s: %w", u, err)
	}
	o.mirrored.Add(1)
	return path, nil
}

// inMirror reports whether rel, a path Mirror.Write returned, is a file of
// the mirror.
func (o *outputs) inMirror(rel string) bool {
	if o.mirror == nil || rel == "" {
		return false
	}
	fi, err := os.Lstat(filepath.Join(o.mirror.Root(), filepath.FromSlash(rel)))
	return err == nil && fi.Mode().IsRegular()
}

// removeMirror deletes a page that is gone from the mirror.
func (o *outputs) removeMirror(u *url.URL, contentType string) error {
	if o.mirror == nil {
		return nil
	}
	if err := o.mirror.Remove(u, contentType); err != nil {
		return fmt.Errorf("remove %s: %w", u, err)
	}
	o.mirrored.Add(1)
	return nil
}

// saveWARC writes the exchange as WARC records, the body as received, and
// returns the reference to keep for the next visit. With no WARC, a 304
// keeps prev (the body is the one it names), and any other answer the
// zero Ref: its body is in no WARC file, and a later run with a WARC must
// ask for it without validators rather than archive a 304 of an older body.
func (o *outputs) saveWARC(u *url.URL, resp *response, sent time.Time, prev warc.Ref) (warc.Ref, error) {
	if o.warc == nil {
		if resp.status == http.StatusNotModified {
			return prev, nil
		}
		return warc.Ref{}, nil
	}
	body, cut := resp.body, resp.truncated
	if resp.raw != nil {
		body, cut = resp.raw, resp.rawCut
	}
	ref, err := o.warc.WriteExchange(warc.Exchange{
		Date: sent, URL: u, RequestHeader: resp.reqHeader, RemoteAddr: resp.remoteIP,
		Proto: resp.proto, Status: resp.status, Reason: resp.reason, Header: resp.header,
		Body: body, Truncated: cut,
	}, prev)
	if err != nil {
		return prev, fmt.Errorf("write %s: %w", u, err)
	}
	return ref, nil
}

// archived reports whether a 304 for the URL has a record in the WARC
// files to refer to: ref, the page record's, or one the index knows. With
// no WARC every URL has.
func (o *outputs) archived(rawURL string, ref warc.Ref) bool {
	if o.warc == nil || ref.TargetURI != "" {
		return true
	}
	if o.index == nil {
		return false
	}
	_, ok, err := o.index.ByURL(frontier.MustParse(rawURL).String())
	return ok && err == nil
}

func (o *outputs) flush() error {
	var err error
	if o.links != nil {
		err = o.links.Flush()
	}
	if o.inv == nil {
		return err
	}
	return errors.Join(err, o.inv.Flush())
}

func (o *outputs) close() error {
	var err error
	if o.inv != nil {
		err = o.inv.Close()
	}
	if o.links != nil {
		err = errors.Join(err, o.links.Close())
	}
	if o.warc != nil {
		err = errors.Join(err, o.warc.Close())
	}
	return err
}
