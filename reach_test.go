package crawler

import (
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// proxyLog is an HTTP proxy that answers every request itself, as if from
// the site asked for, and notes the absolute URLs it was asked.
type proxyLog struct {
	*httptest.Server
	mu   sync.Mutex
	asks []string
}

func newProxy(t *testing.T) *proxyLog {
	p := &proxyLog{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.asks = append(p.asks, r.RequestURI)
		p.mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("User-agent: *\nDisallow:\n"))
		case "/":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<a href="/a">a</a>`))
		default:
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<p>` + r.URL.Path))
		}
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *proxyLog) asked() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asks...)
}

// fetch.proxy sends every request, robots.txt included, through the proxy,
// for the URL as found.
func TestProxyConfigured(t *testing.T) {
	p := newProxy(t)
	cfg := testConfig(t, "http://site.invalid/")
	cfg.Fetch.Proxy = p.URL
	if _, err := crawlWith(t, cfg, Options{}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(p.asked(), " ")
	for _, want := range []string{"http://site.invalid/robots.txt", "http://site.invalid/", "http://site.invalid/a"} {
		if !strings.Contains(got, want) {
			t.Errorf("the proxy was asked %q, not %s", got, want)
		}
	}
	if r := inventory(t, cfg.Output.URLs)["http://site.invalid/a"]; r.Status != 200 {
		t.Errorf("/a through the proxy: %+v", r)
	}
}

// Without fetch.proxy the environment's HTTP_PROXY is used, loopback hosts
// included, except for the hosts NO_PROXY lists.
func TestProxyFromEnvironment(t *testing.T) {
	p := newProxy(t)
	direct := newSite(t)
	direct.html("/")
	u, _ := url.Parse(direct.URL)
	cfg := testConfig(t, "http://site.invalid/", direct.URL+"/")
	env := map[string]string{"HTTP_PROXY": p.URL, "NO_PROXY": "example.org, " + u.Host}
	if _, err := crawlWith(t, cfg, Options{Getenv: func(k string) string { return env[k] }}); err != nil {
		t.Fatal(err)
	}
	asked := strings.Join(p.asked(), " ")
	if !strings.Contains(asked, "http://site.invalid/a") {
		t.Errorf("the proxy was asked %q, not site.invalid's pages", asked)
	}
	if strings.Contains(asked, u.Host) {
		t.Errorf("the proxy was asked %q, though NO_PROXY lists %s", asked, u.Host)
	}
	if direct.hits()["/"] != 1 {
		t.Errorf("the NO_PROXY host was asked %v directly, want / once", direct.hits())
	}
}

// fetch.ca_file makes a site whose certificate an internal CA signed
// reachable; without it the TLS handshake fails.
func TestCAFile(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<p>hello"))
	}))
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		caFile string
		want   int
	}{{"", 0}, {ca, 200}} {
		cfg := testConfig(t, srv.URL+"/")
		cfg.Fetch.CAFile = tc.caFile
		cfg.Fetch.Retries = 0
		crawlWith(t, cfg, Options{})
		if r := inventory(t, cfg.Output.URLs)[srv.URL+"/"]; r.Status != tc.want {
			t.Errorf("ca_file %q: status %d (%s), want %d", tc.caFile, r.Status, r.Error, tc.want)
		}
	}
}

// fetch.auth's credentials go to their origin only: not to another origin a
// page redirects or links to, and never into an output or the log.
func TestAuthOnlyToItsOrigin(t *testing.T) {
	const user, password = "crawler", "s3cret-Pa55"
	other := newSite(t)
	other.html("/landing")
	var mu sync.Mutex
	var unauthorized int
	private := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			mu.Lock()
			unauthorized++
			mu.Unlock()
			w.Header().Set("WWW-Authenticate", `Basic realm="staging"`)
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte(`<a href="/go">go</a> <a href="` + other.URL + `/landing">other</a>`))
		case "/go":
			http.Redirect(w, r, other.URL+"/landing?from=go", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer private.Close()
	other.set("/landing?from=go", page{body: "<p>landed"})
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, private.URL+"/", other.URL+"/landing")
	cfg.Fetch.Auth = []AuthConfig{{Origin: private.URL, User: user, PasswordFile: pwFile}}
	cfg.Output.Links = filepath.Join(t.TempDir(), "links.jsonl")
	cfg.Output.WARC = filepath.Join(t.TempDir(), "warc")
	var logBuf bytes.Buffer
	var logMu sync.Mutex
	log := slog.New(slog.NewTextHandler(lockedWriter{&logMu, &logBuf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if _, err := crawlWith(t, cfg, Options{Logger: log}); err != nil {
		t.Fatal(err)
	}
	inv := inventory(t, cfg.Output.URLs)
	if r := inv[private.URL+"/"]; r.Status != 200 {
		t.Errorf("the private site's / got %d, want 200 with the credentials", r.Status)
	}
	if r := inv[private.URL+"/go"]; r.FinalURL != other.URL+"/landing?from=go" || r.Status != 302 {
		t.Errorf("the redirect to the other origin: %+v", r)
	}
	if other.hits()["/landing?from=go"] != 1 {
		t.Errorf("the redirect's target was not fetched: %v", other.hits())
	}
	if unauthorized != 0 {
		t.Errorf("%d requests to the private origin went without credentials (robots.txt included)", unauthorized)
	}
	other.mu.Lock()
	defer other.mu.Unlock()
	for _, h := range other.log {
		if a := h.hdr.Get("Authorization"); a != "" {
			t.Errorf("%s on the other origin got Authorization %q", h.path, a)
		}
	}
	secret := []string{password}
	outputs := map[string][]byte{"log": logBuf.Bytes()}
	for _, f := range []string{cfg.Output.URLs, cfg.Output.Links} {
		b, _ := os.ReadFile(f)
		outputs[f] = b
	}
	filepath.WalkDir(cfg.Output.WARC, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			return nil // not a gzip file (an index)
		}
		var b bytes.Buffer
		b.ReadFrom(zr)
		outputs[path] = b.Bytes()
		return nil
	})
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+password))
	for name, b := range outputs {
		for _, s := range append(secret, basic, "Authorization") {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds %q", name, s)
			}
		}
	}
	if len(outputs) < 4 {
		t.Errorf("only %d outputs read, want the log, the inventory, the link graph and a WARC", len(outputs))
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Each reach key's fault is named by its key, and the password file is
// read but never quoted.
func TestReachConfigProblems(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	notPEM := filepath.Join(dir, "not.pem")
	os.WriteFile(empty, nil, 0o600)
	os.WriteFile(notPEM, []byte("hello"), 0o600)
	cfg := testConfig(t, "http://example.test/")
	cfg.Fetch.Proxy = "ftp://proxy.example:21"
	cfg.Fetch.CAFile = notPEM
	cfg.Fetch.Auth = []AuthConfig{
		{Origin: "https://a.example/path", User: "u", PasswordFile: empty},
		{Origin: "https://b.example", User: "u:v", PasswordFile: filepath.Join(dir, "none")},
		{Origin: "https://B.example:443", User: "w", PasswordFile: notPEM},
	}
	err := cfg.Validate()
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("Validate = %v, want a ConfigError", err)
	}
	got := map[string]string{}
	for _, p := range ce.Problems {
		got[p.Key] = p.Message
	}
	for _, key := range []string{"fetch.proxy", "fetch.ca_file", "fetch.auth[0].origin", "fetch.auth[0].password_file",
		"fetch.auth[1].user", "fetch.auth[1].password_file", "fetch.auth[2].origin"} {
		if got[key] == "" {
			t.Errorf("no problem named %s; got %v", key, got)
		}
	}
	if strings.Contains(err.Error(), "hello") {
		t.Errorf("a file's content is quoted: %v", err)
	}
}
