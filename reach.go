package crawler

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// reach is how the crawl's requests get to sites that ops teams must reach
// through their network: a proxy (fetch.proxy, or the environment's),
// certificates trusted besides the system's (fetch.ca_file), and basic auth
// for some origins (fetch.auth). README, "Reaching sites".
type reach struct {
	proxy func(*http.Request) (*url.URL, error) // nil: no proxy
	roots *x509.CertPool                        // nil: the system's alone
	auth  map[string]credentials                // by origin
}

// credentials are one origin's user and password.
type credentials struct{ user, password string }

// newReach builds the reach fc asks for. getenv reads the environment for
// the proxy when fc names none; nil reads nothing.
func newReach(fc FetchConfig, getenv func(string) string) (reach, error) {
	var r reach
	switch {
	case fc.Proxy != "":
		u, err := parseProxy(fc.Proxy)
		if err != nil {
			return r, fmt.Errorf("fetch.proxy: %w", err)
		}
		r.proxy = http.ProxyURL(u)
	case getenv != nil:
		p, err := envProxy(getenv)
		if err != nil {
			return r, err
		}
		r.proxy = p
	}
	if fc.CAFile != "" {
		pool, err := loadCAs(fc.CAFile)
		if err != nil {
			return r, fmt.Errorf("fetch.ca_file: %w", err)
		}
		r.roots = pool
	}
	r.auth = map[string]credentials{}
	for i, a := range fc.Auth {
		origin, err := authOrigin(a.Origin)
		if err != nil {
			return r, fmt.Errorf("fetch.auth[%d].origin: %w", i, err)
		}
		pw, err := readPassword(a.PasswordFile)
		if err != nil {
			return r, fmt.Errorf("fetch.auth[%d].password_file: %w", i, err)
		}
		r.auth[origin] = credentials{a.User, pw}
	}
	return r, nil
}

// tlsConfig is the TLS client config: the system's roots plus the extra ones.
func (r reach) tlsConfig() *tls.Config {
	if r.roots == nil {
		return nil
	}
	return &tls.Config{RootCAs: r.roots}
}

// authorize adds the basic auth of req's origin, if it has one. Each hop of
// a redirect is a request of its own, so credentials never follow one to
// another origin.
func (r reach) authorize(req *http.Request) {
	if len(r.auth) == 0 {
		return
	}
	u := *req.URL
	u.User, u.Path, u.RawPath, u.RawQuery, u.Fragment = nil, "", "", "", ""
	if origin, err := authOrigin(u.String()); err == nil {
		if c, ok := r.auth[origin]; ok {
			req.SetBasicAuth(c.user, c.password)
		}
	}
}

// parseProxy checks a proxy URL: http, https or socks5, with a host.
func parseProxy(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("invalid proxy URL: %v", unwrapURLError(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5" || u.Host == "" {
		return nil, fmt.Errorf("must be an http://, https:// or socks5:// proxy URL with a host, got %q", u.Redacted())
	}
	return u, nil
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
		u, err := parseProxy(v)
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

// loadCAs reads a PEM file of certificates into a pool holding the
// system's roots as well.
func loadCAs(path string) (*x509.CertPool, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no PEM certificate in it", path)
	}
	return pool, nil
}

// authOrigin checks an auth origin and returns it lower-cased, as
// requests' origins are compared: scheme://host[:port], nothing more.
func authOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("must be an origin (https://host[:port]), got %q", redactedURL(s))
	}
	if u.Scheme == "http" && u.Port() == "80" || u.Scheme == "https" && u.Port() == "443" {
		u.Host = u.Hostname() // as requests' hosts have no default port
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// redactedURL is s with any password masked, or a placeholder when s is
// no URL.
func redactedURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return "(not a URL)"
}

// readPassword reads the first line of a password file.
func readPassword(path string) (string, error) {
	if path == "" {
		return "", errors.New("must name the file holding the password")
	}
	if fi, err := os.Stat(path); err != nil {
		return "", err
	} else if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s: not a regular file", path) // a FIFO would block the reading for ever
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() || sc.Text() == "" {
		if err := sc.Err(); err != nil {
			return "", fmt.Errorf("read %s: %w", path, err)
		}
		return "", fmt.Errorf("%s: empty; the password is its first line", path)
	}
	return strings.TrimSuffix(sc.Text(), "\r"), nil
}
