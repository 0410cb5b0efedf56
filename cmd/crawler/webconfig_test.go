package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/politecrawl/crawler"
)

// writeWebConfig writes a self-signed certificate for 127.0.0.1, and an
// exporter-toolkit web config serving it with one basic-auth user.
func writeWebConfig(t *testing.T, user, password string) (path string, roots *x509.CertPool) {
	t.Helper()
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "crawler test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	path = filepath.Join(dir, "web.yml")
	conf := "tls_server_config:\n  cert_file: " + certFile + "\n  key_file: " + keyFile + "\nbasic_auth_users:\n  " + user + ": " + string(hash) + "\n"
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return path, roots
}

// daemon.web_config protects the listen address as Prometheus exporters
// are protected: TLS, and 401 without the right user.
func TestServeWebConfig(t *testing.T) {
	webConfig, roots := writeWebConfig(t, "prom", "scrape-me")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	stop := serveOn(context.Background(), ln, h, slog.New(slog.DiscardHandler), daemonLimits, webConfig)
	defer stop()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	url := "https://" + ln.Addr().String() + "/healthz"
	for _, tc := range []struct {
		user, password string
		want           int
	}{{"", "", 401}, {"prom", "wrong", 401}, {"prom", "scrape-me", 200}} {
		req, _ := http.NewRequest("GET", url, nil)
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.password)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s as %q: %v", url, tc.user, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s as %q/%q: %d, want %d", url, tc.user, tc.password, resp.StatusCode, tc.want)
		}
	}
	if resp, err := http.Get("http://" + ln.Addr().String() + "/healthz"); err == nil && resp.StatusCode == 200 {
		t.Error("plain HTTP was served the page")
	}
}

// A web config that is missing, names a missing certificate, or protects
// no listen address is a config problem naming daemon.web_config.
func TestWebConfigChecked(t *testing.T) {
	dir := t.TempDir()
	broken := filepath.Join(dir, "broken.yml")
	os.WriteFile(broken, []byte("tls_server_config:\n  cert_file: "+filepath.Join(dir, "none.pem")+"\n  key_file: "+filepath.Join(dir, "none.key")+"\n"), 0o600)
	good, _ := writeWebConfig(t, "u", "p")
	for _, tc := range []struct {
		dc   crawler.DaemonConfig
		want string
	}{
		{crawler.DaemonConfig{Listen: "127.0.0.1:9", WebConfig: filepath.Join(dir, "none.yml")}, "none.yml"},
		{crawler.DaemonConfig{Listen: "127.0.0.1:9", WebConfig: broken}, "none.pem"},
		{crawler.DaemonConfig{WebConfig: good}, "daemon.listen"},
		{crawler.DaemonConfig{Listen: "127.0.0.1:9", WebConfig: good}, ""},
	} {
		p := checkWebConfig(tc.dc)
		switch {
		case tc.want == "" && p != nil:
			t.Errorf("%+v: %v, want no problem", tc.dc, p)
		case tc.want != "" && (p == nil || p.Key != "daemon.web_config" || !strings.Contains(p.Message, tc.want)):
			t.Errorf("%+v: %v, want a daemon.web_config problem naming %s", tc.dc, p, tc.want)
		}
	}
}
