package crawler

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/politecrawl/crawler/storage"
	"github.com/politecrawl/crawler/storage/mirror"
	"github.com/politecrawl/crawler/storage/warc"
)

// outputs are where a crawl's results go besides its state: the JSON Lines
// inventory, the mirror and the WARC files. Each is optional.
type outputs struct {
	inv    *storage.Inventory
	mirror *mirror.Mirror
	warc   *warc.Writer
	log    *slog.Logger

	mu       sync.Mutex
	invError error // the first inventory write error, reported once

	mirrored atomic.Int64 // pages saved in or removed from the mirror, and nothing else: relinkEvery reads a change in it
}

func openOutputs(cfg Config, opts Options, log *slog.Logger) (*outputs, error) {
	o := &outputs{log: log}
	var err error
	switch {
	case opts.Inventory != nil:
		o.inv = storage.NewInventory(opts.Inventory)
	case cfg.Output.URLs != "":
		if o.inv, err = storage.OpenInventory(cfg.Output.URLs, opts.Stdout); err != nil {
			return nil, fmt.Errorf("output.urls: %w", err)
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
		})
		if err != nil {
			return nil, fmt.Errorf("output.warc: %w", err)
		}
	}
	return o, nil
}

// inventory appends a record and hands it to the operating system at once,
// so that a killed crawl loses none. A write error (a full disk) is logged
// once and returned again by flush, so the crawl fails loudly at its end
// rather than losing records in silence.
func (o *outputs) inventory(r storage.Record) {
	if o.inv == nil {
		return
	}
	err := o.inv.Write(r)
	if err == nil {
		err = o.inv.Flush()
	}
	if err != nil {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.invError == nil {
			o.invError = err
			o.log.Error("write inventory", "err", err)
		}
	}
}

// saveMirror writes a fetched page into the mirror and returns its path
// there ("" when there is no mirror or it failed: the page is still
// recorded).
func (o *outputs) saveMirror(u *url.URL, resp *response) string {
	if o.mirror == nil {
		return ""
	}
	path, err := o.mirror.Write(u, resp.header.Get("Content-Type"), bytes.NewReader(resp.body))
	if err != nil {
		o.log.Error("write mirror", "url", u.String(), "err", err)
		return ""
	}
	o.mirrored.Add(1)
	return path
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
func (o *outputs) removeMirror(u *url.URL, contentType string) {
	if o.mirror == nil {
		return
	}
	if err := o.mirror.Remove(u, contentType); err != nil {
		o.log.Error("remove from mirror", "url", u.String(), "err", err)
	}
	o.mirrored.Add(1)
}

// saveWARC writes the exchange as WARC records and returns the reference to
// keep for the next visit (prev when nothing new was stored).
func (o *outputs) saveWARC(u *url.URL, resp *response, sent time.Time, prev warc.Ref) warc.Ref {
	if o.warc == nil {
		return prev
	}
	ref, err := o.warc.WriteExchange(warc.Exchange{
		Date: sent, URL: u, RequestHeader: resp.reqHeader, RemoteAddr: resp.remoteIP,
		Proto: resp.proto, Status: resp.status, Header: resp.header, Body: resp.body,
		Decoded: resp.decoded, Truncated: resp.truncated,
	}, prev)
	if err != nil {
		o.log.Error("write WARC", "url", u.String(), "err", err)
		return prev
	}
	return ref
}

func (o *outputs) flush() error {
	if o.inv == nil {
		return nil
	}
	o.mu.Lock()
	err := o.invError
	o.mu.Unlock()
	return errors.Join(err, o.inv.Flush())
}

func (o *outputs) close() error {
	var err error
	if o.inv != nil {
		err = o.inv.Close()
	}
	if o.warc != nil {
		err = errors.Join(err, o.warc.Close())
	}
	return err
}
