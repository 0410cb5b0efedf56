package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/politecrawl/crawler/frontier"
)

// redactHandler masks the password of every URL in a record's message and
// attributes (frontier.Redact) before its handler writes it: a page, a
// sitemap or a robots.txt may name http://user:password@host/, and the
// log is the one place every part of the crawl writes to.
type redactHandler struct{ slog.Handler }

func (h redactHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, frontier.Redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i] = redactAttr(a)
	}
	return redactHandler{h.Handler.WithAttrs(masked)}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{h.Handler.WithGroup(name)}
}

// redactAttr is a with the passwords in its text masked: strings, errors
// and Stringers (a *url.URL) are written as their masked text when they
// hold an '@', and groups are walked.
func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		if s := v.String(); strings.IndexByte(s, '@') >= 0 {
			return slog.String(a.Key, frontier.Redact(s))
		}
	case slog.KindGroup:
		g := v.Group()
		masked := make([]any, len(g))
		for i, ga := range g {
			masked[i] = redactAttr(ga)
		}
		return slog.Group(a.Key, masked...)
	case slog.KindAny:
		var s string
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			return slog.Attr{Key: a.Key, Value: v}
		}
		if strings.IndexByte(s, '@') >= 0 {
			return slog.String(a.Key, frontier.Redact(s))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
