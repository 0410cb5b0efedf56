package reach

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ParseProxy checks a proxy URL: http, https or socks5, with a host.
func ParseProxy(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("invalid proxy URL: %v", unwrapURLError(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5" || u.Host == "" {
		return nil, fmt.Errorf("must be an http://, https:// or socks5:// proxy URL with a host, got %q", u.Redacted())
	}
	return u, nil
}

// unwrapURLError drops the "parse "…":" prefix of a *url.Error, whose URL
// the message already quotes.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// envProxy is the proxy the environment names, as curl and wget read it:
// HTTPS_PROXY for https URLs, HTTP_PROXY for http ones (lower-case names
// too), none for a host NO_PROXY lists. Unlike Go's default, loopback
// hosts are proxied unless NO_PROXY lists them, as curl does.
func envProxy(getenv func(string) string) (func(*http.Request) (*url.URL, error), error) {
	get := func(name string) string {
		if v := getenv(strings.ToLower(name)); v != "" {
			return v
		}
		return getenv(name)
	}
	proxies := map[string]*url.URL{}
	for scheme, name := range map[string]string{"http": "HTTP_PROXY", "https": "HTTPS_PROXY"} {
		v := get(name)
		if v == "" {
			continue
		}
		if !strings.Contains(v, "://") {
			v = "http://" + v // curl's reading of host:port
		}
		u, err := ParseProxy(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		proxies[scheme] = u
	}
	if len(proxies) == 0 {
		return nil, nil
	}
	noProxy := parseNoProxy(get("NO_PROXY"))
	return func(req *http.Request) (*url.URL, error) {
		if noProxy.matches(req.URL) {
			return nil, nil
		}
		return proxies[req.URL.Scheme], nil
	}, nil
}

// noProxy is a NO_PROXY list: "*", host names (each also matching its
// subdomains, a leading dot or not), IP addresses and CIDR ranges, each
// with an optional :port.
type noProxy struct {
	all   bool
	hosts []hostPort
	nets  []*net.IPNet
}

type hostPort struct{ host, port string }

func parseNoProxy(s string) noProxy {
	var n noProxy
	for _, e := range strings.Split(s, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == "":
			continue
		case e == "*":
			n.all = true
			continue
		}
		if _, ipnet, err := net.ParseCIDR(e); err == nil {
			n.nets = append(n.nets, ipnet)
			continue
		}
		host, port := e, ""
		if h, p, err := net.SplitHostPort(e); err == nil {
			host, port = h, p
		}
		n.hosts = append(n.hosts, hostPort{strings.TrimPrefix(strings.Trim(host, "[]"), "."), port})
	}
	return n
}

func (n noProxy) matches(u *url.URL) bool {
	if n.all {
		return true
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if ip := net.ParseIP(host); ip != nil {
		for _, ipnet := range n.nets {
			if ipnet.Contains(ip) {
				return true
			}
		}
	}
	for _, h := range n.hosts {
		if h.port != "" && h.port != port {
			continue
		}
		if host == h.host || strings.HasSuffix(host, "."+h.host) {
			return true
		}
	}
	return false
}
