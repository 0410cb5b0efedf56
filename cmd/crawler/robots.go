package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/politecrawl/crawler"
	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/robots"
)

const robotsUsage = "robots --agent AGENT [--file ROBOTS_TXT] [--timeout 30s] [URL...]"

// maxURLLine bounds a line of URLs read from stdin.
const maxURLLine = 1 << 20

// runRobots is `crawler robots`: for each URL, in order, "allowed<TAB>URL"
// or "disallowed<TAB>URL" as a robots.txt says for the agent. The robots.txt
// is --file, or else each origin's own, fetched once per run under the
// status-code rules of RFC 9309 (robots.Update). With no URL arguments the
// URLs are read from stdin, one per line.
func runRobots(ctx context.Context, args []string, s stdio) error {
	fs := flag.NewFlagSet("robots", flag.ContinueOnError)
	agent := fs.String("agent", "", "the crawler's user agent; its product token chooses the group (required)")
	file := fs.String("file", "", "a robots.txt `file` to apply to every URL, instead of fetching each origin's")
	timeout := fs.Duration("timeout", 30*time.Second, "time limit of each robots.txt request")
	urls, err := parseFlags(fs, args, robotsUsage, s.out)
	if err != nil {
		return err
	}
	if !isSet(fs, "agent") {
		return usageErrorf("robots: --agent is required (usage: crawler %s)", robotsUsage)
	}
	if *timeout <= 0 {
		return usageErrorf("robots: --timeout must be > 0, got %v", *timeout)
	}

	var check func(ctx context.Context, u string) (bool, error)
	var origins *originRobots
	if isSet(fs, "file") {
		g, err := fileGroup(*file, *agent, s.err)
		if err != nil {
			return err
		}
		check = func(_ context.Context, u string) (bool, error) { return g.Allowed(u), nil }
	} else {
		origins = &originRobots{
			timeout: *timeout,
			agent:   *agent,
			groups:  map[string]*robots.Group{},
			log:     s.err,
		}
		check = origins.allowed
	}

	out := bufio.NewWriterSize(s.out, 64<<10)
	n := 0
	err = eachURL(urls, s.in, func(u string) error {
		if n++; n%256 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		ok, err := check(ctx, u)
		if err != nil {
			return err
		}
		if ok {
			out.WriteString("allowed\t")
		} else {
			out.WriteString("disallowed\t")
		}
		out.WriteString(frontier.Redact(u))
		return out.WriteByte('\n')
	})
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("robots: %w", err)
	}
	if origins != nil && origins.unchecked > 0 {
		return fmt.Errorf("robots: %d URLs have no http or https origin; they are reported disallowed", origins.unchecked)
	}
	return nil
}

func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// fileGroup reads the robots.txt at path and chooses the agent's group.
func fileGroup(path, agent string, log io.Writer) (*robots.Group, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("robots: read --file: %w", err)
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, robots.MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("robots: read --file: %w", err)
	}
	if len(body) > robots.MaxSize {
		fmt.Fprintf(log, "crawler: robots: %s is larger than 500 KiB; only its first %d bytes are read\n", path, robots.MaxSize)
	}
	return robots.Parse(body).ForAgent(agent), nil
}

// eachURL calls fn with each URL argument, or when there are none with each
// non-blank line of in, as it is read, trimmed of ASCII white space (only:
// a trailing U+00A0 is part of the URL, and is matched percent-encoded).
func eachURL(args []string, in io.Reader, fn func(string) error) error {
	if len(args) > 0 {
		for _, u := range args {
			if err := fn(u); err != nil {
				return err
			}
		}
		return nil
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), maxURLLine)
	for sc.Scan() {
		if line := bytes.Trim(sc.Bytes(), " \t\r\n\v\f"); len(line) > 0 {
			if err := fn(string(line)); err != nil {
				return err
			}
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("read stdin: a line is longer than %d bytes", maxURLLine)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	return nil
}

// originRobots fetches the robots.txt of each origin the first time one of
// its URLs comes, and keeps the agent's group for the rest of the run.
type originRobots struct {
	timeout   time.Duration // of each request
	agent     string
	groups    map[string]*robots.Group
	log       io.Writer
	unchecked int // URLs without an http or https origin
}

func (o *originRobots) allowed(ctx context.Context, raw string) (bool, error) {
	origin, ok := originOf(raw)
	if !ok {
		o.unchecked++
		fmt.Fprintf(o.log, "crawler: robots: %q has no http or https origin; reported disallowed\n", frontier.Redact(raw))
		return false, nil
	}
	g, ok := o.groups[origin]
	if !ok {
		f, err := crawler.FetchRobots(ctx, o.agent, o.timeout, origin)
		if err != nil {
			return false, err
		}
		st := robots.Update(robots.State{}, f, time.Now())
		if note := fetchNote(st, f); note != "" {
			fmt.Fprintf(o.log, "crawler: robots: %s/robots.txt: %s\n", origin, note)
		}
		g = st.Rules().ForAgent(o.agent)
		o.groups[origin] = g
	}
	return g.Allowed(raw), nil
}

// fetchNote says what a robots.txt that was not a plain 2xx means.
func fetchNote(st robots.State, f robots.Fetch) string {
	switch st.Result {
	case robots.ResultMissing:
		if f.Status >= 300 && f.Status <= 399 {
			return fmt.Sprintf("status %d after %d redirects: no robots.txt, everything allowed", f.Status, f.Redirects)
		}
		return fmt.Sprintf("status %d: no robots.txt, everything allowed", f.Status)
	case robots.ResultUnreachable:
		why := fmt.Sprintf("status %d", f.Status)
		if f.Err != nil {
			why = f.Err.Error()
		}
		return why + ": unreachable, everything disallowed for now"
	}
	return ""
}

// originOf returns the origin of an http or https URL, in the form that
// identifies a host: scheme and host in lower case, no default port.
func originOf(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	host := strings.ToLower(u.Host)
	if u.Scheme == "http" {
		host = strings.TrimSuffix(host, ":80")
	} else {
		host = strings.TrimSuffix(host, ":443")
	}
	return u.Scheme + "://" + host, true
}
