package reach

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Config is what to reach sites through. Its fields are the crawler's
// fetch.proxy, fetch.ca_file and fetch.auth (README, "Reaching sites").
type Config struct {
	// Proxy is the http, https or socks5 proxy every request goes
	// through; empty means the environment's, if New is given one.
	Proxy string
	// CAFile is a PEM file of certificates trusted besides the system's.
	CAFile string
	// Auth gives basic auth credentials to origins.
	Auth []Auth
}

// Auth is one origin's basic auth.
type Auth struct {
	// Origin is scheme://host[:port], as requests to it are made.
	Origin string
	// User is the user name.
	User string
	// PasswordFile holds the password: its first line, the line end
	// dropped.
	PasswordFile string
}

// Reach is a Config made ready: its proxy chosen, its certificates and
// passwords read. It is immutable and safe for concurrent use. The zero
// Reach, and a nil *Reach, reach every site directly, with the system's
// certificates and no credentials.
type Reach struct {
	proxy func(*http.Request) (*url.URL, error) // nil: no proxy
	roots *x509.CertPool                        // nil: the system's alone
	auth  map[string]credentials                // by origin
}

// credentials are one origin's user and password.
type credentials struct{ user, password string }

// A FieldError is New's error for one field of its Config. Field names
// the field as the crawler's config does under fetch: "proxy", "ca_file",
// "auth[1].origin", "auth[1].password_file".
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the field's fault.
func (e *FieldError) Unwrap() error { return e.Err }

// New reads the files cfg names and chooses the proxy. getenv reads the
// environment for the proxy when cfg names none; nil reads nothing. A
// fault of a field of cfg is a *FieldError; a fault of the environment's
// proxy names its variable (HTTPS_PROXY: ...).
func New(cfg Config, getenv func(string) string) (*Reach, error) {
	r := &Reach{}
	switch {
	case cfg.Proxy != "":
		u, err := ParseProxy(cfg.Proxy)
		if err != nil {
			return nil, &FieldError{"proxy", err}
		}
		r.proxy = http.ProxyURL(u)
	case getenv != nil:
		p, err := envProxy(getenv)
		if err != nil {
			return nil, err
		}
		r.proxy = p
	}
	if cfg.CAFile != "" {
		pool, err := LoadCAs(cfg.CAFile)
		if err != nil {
			return nil, &FieldError{"ca_file", err}
		}
		r.roots = pool
	}
	r.auth = map[string]credentials{}
	for i, a := range cfg.Auth {
		origin, err := Origin(a.Origin)
		if err != nil {
			return nil, &FieldError{fmt.Sprintf("auth[%d].origin", i), err}
		}
		pw, err := ReadPassword(a.PasswordFile)
		if err != nil {
			return nil, &FieldError{fmt.Sprintf("auth[%d].password_file", i), err}
		}
		r.auth[origin] = credentials{a.User, pw}
	}
	return r, nil
}

// Proxy is the proxy for req, as http.Transport's Proxy field asks it:
// nil means none, the request goes directly.
func (r *Reach) Proxy(req *http.Request) (*url.URL, error) {
	if r == nil || r.proxy == nil {
		return nil, nil
	}
	return r.proxy(req)
}

// TLSConfig is the TLS client config for http.Transport: the system's
// roots plus the extra ones, or nil (Go's default) when there are none.
func (r *Reach) TLSConfig() *tls.Config {
	if r == nil || r.roots == nil {
		return nil
	}
	return &tls.Config{RootCAs: r.roots}
}

// Authorize adds the basic auth of req's origin, if it has one. Each hop
// of a redirect is a request of its own, so credentials never follow one
// to another origin.
func (r *Reach) Authorize(req *http.Request) {
	if r == nil || len(r.auth) == 0 {
		return
	}
	u := *req.URL
	u.User, u.Path, u.RawPath, u.RawQuery, u.Fragment = nil, "", "", "", ""
	if origin, err := Origin(u.String()); err == nil {
		if c, ok := r.auth[origin]; ok {
			req.SetBasicAuth(c.user, c.password)
		}
	}
}

// Origin checks an auth origin and returns it lower-cased, as requests'
// origins are compared: scheme://host[:port], nothing more, the scheme's
// default port left out.
func Origin(s string) (string, error) {
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
