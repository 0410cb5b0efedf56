package crawler

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/politecrawl/crawler/frontier"
)

// Requisites is scope.requisites: which hosts a page's requisites (its
// images, stylesheets, scripts, fonts, media) are fetched from when a
// mirror or a WARC is kept (README, "Whole sites"). It is RequisitesAny
// or RequisitesSame alone, or host and origin patterns: "cdn.example.net"
// or "cdn.example.net:8080" (that host over http and https, on the port
// given or each scheme's default), "*.example-cdn.net" (any host under
// example-cdn.net), "https://fonts.example.org" (that origin; the host may
// start with "*." too). An empty list allows no other host, as
// RequisitesSame does.
type Requisites []string

// The two words scope.requisites may be instead of patterns.
const (
	RequisitesAny  = "any"  // from whatever http(s) host they are on (the default)
	RequisitesSame = "same" // only from the hosts in scope
)

// requisiteHosts is scope.requisites read: which origins out of
// scope.hosts a page's requisites may be fetched from.
type requisiteHosts struct {
	any  bool
	pats []hostPattern
	// local is set when the crawl's own hosts include one of this machine
	// or of a private network (see nonPublic): only then does any take
	// such hosts too.
	local bool
}

// newRequisiteHosts reads scope.requisites, which Validate checked.
func newRequisiteHosts(r Requisites) (requisiteHosts, error) {
	if len(r) == 1 && (r[0] == RequisitesAny || r[0] == RequisitesSame) {
		return requisiteHosts{any: r[0] == RequisitesAny}, nil
	}
	var h requisiteHosts
	for i, s := range r {
		p, err := parseHostPattern(s)
		if err != nil {
			return requisiteHosts{}, fmt.Errorf("scope.requisites[%d]: %w", i, err)
		}
		h.pats = append(h.pats, p)
	}
	return h, nil
}

// allows reports whether requisites may be fetched from origin, a
// canonical origin (frontier.URL.Origin).
func (h requisiteHosts) allows(origin string) bool {
	scheme, hostport, ok := strings.Cut(origin, "://")
	if !ok {
		return false
	}
	host, port := splitHostPort(hostport)
	if h.any {
		// A public site's page naming http://169.254.169.254/ (a cloud's
		// metadata and its credentials) or http://127.0.0.1:PORT/ would
		// have the crawl fetch it and keep the answer in its mirror or
		// WARC: any means the hosts of the web the crawl is on.
		return h.local || !nonPublic(host)
	}
	for _, p := range h.pats {
		if p.match(scheme, host, port) {
			return true
		}
	}
	return false
}

// nonPublic reports whether host (canonical, an IPv6 address in brackets)
// names this machine or a private network: localhost, or a loopback,
// private (RFC 1918, RFC 4193), link-local or unspecified address. A host
// name that resolves to one is not seen here.
func nonPublic(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsUnspecified()
}

// hostPattern is one host or origin pattern of scope.requisites.
type hostPattern struct {
	scheme   string // "" for http and https
	host     string // canonical (lower-case, punycode), without the "*."
	wildcard bool   // any host under host, not host itself
	port     string // "" for the scheme's default
}

// parseHostPattern reads a pattern of scope.requisites.
func parseHostPattern(s string) (hostPattern, error) {
	bad := func(why string) (hostPattern, error) {
		return hostPattern{}, fmt.Errorf("want a host[:port], *.domain or an origin (https://host[:port]), got %q: %s", s, why)
	}
	var p hostPattern
	rest := s
	if scheme, r, ok := strings.Cut(s, "://"); ok {
		if scheme != "http" && scheme != "https" {
			return bad("the scheme is not http or https")
		}
		p.scheme, rest = scheme, strings.TrimSuffix(r, "/")
	}
	if r, ok := strings.CutPrefix(rest, "*."); ok {
		p.wildcard, rest = true, r
	}
	if strings.ContainsAny(rest, "/?#@*") || rest == "" {
		return bad("a pattern names a host, with no path, user or other wildcard")
	}
	scheme := p.scheme
	if scheme == "" {
		scheme = "http"
	}
	u, err := frontier.Canonicalize(scheme+"://"+rest+"/", 0)
	if err != nil {
		return bad(err.Error())
	}
	_, hostport, _ := strings.Cut(u.Origin, "://")
	p.host, p.port = splitHostPort(hostport)
	if p.scheme == "" {
		// The port as written: http's default, 80, is not https's.
		_, p.port = splitHostPort(rest)
	}
	if !p.wildcard && p.scheme == "" && p.port == "" && !strings.Contains(p.host, ".") &&
		net.ParseIP(strings.Trim(p.host, "[]")) == nil && p.host != "localhost" {
		return bad(`a host name with no dot; write "any" or "same" alone, or an origin (http://` + rest + `)`)
	}
	return p, nil
}

// match reports whether the origin of scheme, host and port (canonical:
// port "" for the scheme's default) is one the pattern names.
func (p hostPattern) match(scheme, host, port string) bool {
	if p.scheme != "" && p.scheme != scheme {
		return false
	}
	if p.port != port && !(port == "" && p.port == defaultPort(scheme)) {
		return false
	}
	if p.wildcard {
		return strings.HasSuffix(host, "."+p.host)
	}
	return host == p.host
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// splitHostPort splits host[:port], an IPv6 host in brackets.
func splitHostPort(hp string) (host, port string) {
	if i := strings.LastIndexByte(hp, ':'); i >= 0 && !strings.Contains(hp[i:], "]") {
		return hp[:i], hp[i+1:]
	}
	return hp, ""
}

// requisites validates scope.requisites.
func (c *configCheck) requisites(r Requisites) {
	if len(r) == 1 && (r[0] == RequisitesAny || r[0] == RequisitesSame) {
		return
	}
	for i, s := range r {
		key := fmt.Sprintf("scope.requisites[%d]", i)
		if s == RequisitesAny || s == RequisitesSame {
			c.addf(key, "%q stands alone (scope.requisites: %s), not in a list of patterns", s, s)
			continue
		}
		if _, err := parseHostPattern(s); err != nil {
			c.addf(key, "%v", err)
		}
	}
}

// keepsRequisites reports whether a page's requisites are fetched and
// kept: when a mirror or a WARC is written. Otherwise they are only
// checked (README, "Whole sites").
func (c *Crawler) keepsRequisites() bool {
	out := c.conf().Output
	return !c.opts.NoBodies && (out.MirrorDir != "" || out.WARC != "")
}

// requisiteWay is what is done with a requisite.
type requisiteWay uint8

const (
	requisiteRefused requisiteWay = iota // its host may not be contacted
	requisiteFetched                     // fetched and kept, as a page is, but never crawled from
	requisiteChecked                     // asked once whether it works (checkLink)
)

// requisiteWay is what is done with a requisite of origin: fetched when
// requisites are kept and its host is in scope or allowed by
// scope.requisites; otherwise checked when its host is in scope or
// scope.check_external asks other hosts; otherwise refused.
func (c *Crawler) requisiteWay(origin string) requisiteWay {
	cfg := c.conf()
	inScope := cfg.scope.checkStart(origin) == ""
	switch {
	case c.keepsRequisites() && (inScope || cfg.scope.requisites.allows(origin)):
		return requisiteFetched
	case inScope || cfg.Scope.CheckExternal:
		return requisiteChecked
	}
	return requisiteRefused
}

// requisiteRobots reports whether the robots.txt of origin, a requisite
// host out of scope, may be followed through a redirect to target, a host
// out of scope too: when target is one scope.requisites allows (a CDN's
// http robots.txt redirected to https), and so may be contacted.
func (c *Crawler) requisiteRobots(origin, target string) bool {
	cfg := c.conf()
	return c.keepsRequisites() && cfg.scope.checkStart(origin) != "" && cfg.scope.requisites.allows(target)
}
