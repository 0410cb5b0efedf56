package reach

import (
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The environment's proxy is read as curl reads it; fetch.proxy, when
// given, wins over it.
func TestProxyChoice(t *testing.T) {
	for _, tc := range []struct {
		name  string
		proxy string
		env   map[string]string // nil: no getenv
		url   string
		want  string // "": direct
	}{
		{"none", "", nil, "http://a.example/", ""},
		{"no getenv, explicit", "socks5://p:1080", nil, "https://a.example/", "socks5://p:1080"},
		{"explicit wins", "http://p:3128", map[string]string{"HTTP_PROXY": "http://env:1"}, "http://a.example/", "http://p:3128"},
		{"explicit ignores NO_PROXY", "http://p:3128", map[string]string{"NO_PROXY": "*"}, "http://a.example/", "http://p:3128"},
		{"http", "", map[string]string{"HTTP_PROXY": "http://env:1"}, "http://a.example/", "http://env:1"},
		{"http only for http", "", map[string]string{"HTTP_PROXY": "http://env:1"}, "https://a.example/", ""},
		{"https", "", map[string]string{"HTTPS_PROXY": "http://env:2", "HTTP_PROXY": "http://env:1"}, "https://a.example/", "http://env:2"},
		{"lower case first", "", map[string]string{"http_proxy": "http://low:1", "HTTP_PROXY": "http://up:1"}, "http://a.example/", "http://low:1"},
		{"host:port", "", map[string]string{"HTTP_PROXY": "env:8080"}, "http://a.example/", "http://env:8080"},
		{"loopback proxied", "", map[string]string{"HTTP_PROXY": "http://env:1"}, "http://127.0.0.1:9/", "http://env:1"},
		{"NO_PROXY", "", map[string]string{"HTTP_PROXY": "http://env:1", "no_proxy": "a.example"}, "http://www.a.example/", ""},
		{"NO_PROXY other", "", map[string]string{"HTTP_PROXY": "http://env:1", "NO_PROXY": "a.example"}, "http://b.example/", "http://env:1"},
	} {
		var getenv func(string) string
		if tc.env != nil {
			getenv = func(k string) string { return tc.env[k] }
		}
		r, err := New(Config{Proxy: tc.proxy}, getenv)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		req, _ := http.NewRequest("GET", tc.url, nil)
		u, err := r.Proxy(req)
		got := ""
		if u != nil {
			got = u.String()
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: Proxy(%s) = %q, %v; want %q", tc.name, tc.url, got, err, tc.want)
		}
	}
}

// Each field's fault is a FieldError naming it, with the message
// `crawler validate` prints; the environment's names its variable.
func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	empty := filepath.Join(dir, "empty")
	os.WriteFile(pw, []byte("secret\n"), 0o600)
	os.WriteFile(empty, nil, 0o600)
	for _, tc := range []struct {
		cfg   Config
		env   map[string]string
		field string
		msg   string
	}{
		{Config{Proxy: "ftp://p:21"}, nil, "proxy",
			`must be an http://, https:// or socks5:// proxy URL with a host, got "ftp://p:21"`},
		{Config{Proxy: "http://u:pw@%zz"}, nil, "proxy", `invalid proxy URL: invalid URL escape "%zz"`},
		{Config{CAFile: pw}, nil, "ca_file", pw + ": no PEM certificate in it"},
		{Config{CAFile: dir}, nil, "ca_file", dir + ": not a regular file"},
		{Config{Auth: []Auth{{"https://a.example", "u", pw}, {"https://u:pw@b.example/x", "u", pw}}}, nil,
			"auth[1].origin", `must be an origin (https://host[:port]), got "https://u:xxxxx@b.example/x"`},
		{Config{Auth: []Auth{{"https://a.example", "u", ""}}}, nil, "auth[0].password_file", "must name the file holding the password"},
		{Config{Auth: []Auth{{"https://a.example", "u", empty}}}, nil, "auth[0].password_file", empty + ": empty; the password is its first line"},
		{Config{}, map[string]string{"HTTPS_PROXY": "ftp://p:21"}, "",
			`HTTPS_PROXY: must be an http://, https:// or socks5:// proxy URL with a host, got "ftp://p:21"`},
	} {
		_, err := New(tc.cfg, func(k string) string { return tc.env[k] })
		var fe *FieldError
		switch {
		case err == nil:
			t.Errorf("New(%+v) gave no error, want %s: %s", tc.cfg, tc.field, tc.msg)
		case tc.field == "":
			if errors.As(err, &fe) || err.Error() != tc.msg {
				t.Errorf("New(%+v) = %#v, want %q and no FieldError", tc.cfg, err, tc.msg)
			}
		case !errors.As(err, &fe) || fe.Field != tc.field || fe.Err.Error() != tc.msg:
			t.Errorf("New(%+v) = %v, want %s: %s", tc.cfg, err, tc.field, tc.msg)
		case strings.Contains(err.Error(), "secret"):
			t.Errorf("New(%+v) quotes a password: %v", tc.cfg, err)
		}
	}
}

// Credentials go to their origin only: scheme, host and port, compared
// without case and with the default port left out.
func TestAuthorize(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("s3cret\r\nsecond line\n"), 0o600)
	r, err := New(Config{Auth: []Auth{
		{"https://Private.example:443/", "u", pw},
		{"http://staging.example:8080", "v", pw},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]string{
		"https://private.example/a?b#c":      "u",
		"https://PRIVATE.example:443/":       "u",
		"https://x:y@private.example/":       "u",
		"http://private.example/":            "",
		"https://private.example:8443/":      "",
		"https://www.private.example/":       "",
		"http://staging.example:8080/robots": "v",
		"http://staging.example/":            "",
	} {
		req, _ := http.NewRequest("GET", raw, nil)
		r.Authorize(req)
		user, password, ok := req.BasicAuth()
		switch {
		case want == "" && ok:
			t.Errorf("%s got credentials for %s", raw, user)
		case want != "" && (user != want || password != "s3cret"):
			t.Errorf("%s got %q, %q, %v; want %s and the file's first line", raw, user, password, ok, want)
		}
	}
	var none *Reach
	req, _ := http.NewRequest("GET", "https://private.example/", nil)
	none.Authorize(req)
	if u, err := none.Proxy(req); req.Header.Get("Authorization") != "" || u != nil || err != nil || none.TLSConfig() != nil {
		t.Error("a nil Reach is not direct, without credentials and with Go's TLS config")
	}
}

// ca_file makes a server whose certificate it holds trusted, besides the
// system's roots; without it the handshake fails.
func TestTLSConfig(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake refused without ca_file
	srv.StartTLS()
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, caFile := range []string{"", ca} {
		r, err := New(Config{CAFile: caFile}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if (r.TLSConfig() == nil) != (caFile == "") {
			t.Errorf("ca_file %q: TLSConfig = %v", caFile, r.TLSConfig())
		}
		c := &http.Client{Transport: &http.Transport{Proxy: r.Proxy, TLSClientConfig: r.TLSConfig()}}
		resp, err := c.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		if (err == nil) != (caFile != "") {
			t.Errorf("ca_file %q: GET = %v", caFile, err)
		}
	}
}

func TestNoProxy(t *testing.T) {
	n := parseNoProxy(" .internal.example, 10.0.0.0/8,127.0.0.1:8080 , [::1], other.example:443")
	for raw, want := range map[string]bool{
		"http://internal.example/":    true,
		"http://a.internal.example/":  true,
		"http://notinternal.example/": false,
		"http://10.1.2.3/":            true,
		"http://127.0.0.1:8080/":      true,
		"http://127.0.0.1:8081/":      false,
		"http://[::1]:9/":             true,
		"https://other.example/":      true,
		"http://other.example/":       false,
		"http://www.example/":         false,
	} {
		u, _ := url.Parse(raw)
		if got := n.matches(u); got != want {
			t.Errorf("NO_PROXY matches %s = %v, want %v", raw, got, want)
		}
	}
	if u, _ := url.Parse("http://anything/"); !parseNoProxy("*").matches(u) {
		t.Error("NO_PROXY=* does not match everything")
	}
}
