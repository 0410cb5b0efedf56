package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/politecrawl/crawler"
)

// countingListener records the most connections open at once.
type countingListener struct {
	net.Listener
	mu         sync.Mutex
	open, most int
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	l.open++
	l.most = max(l.most, l.open)
	l.mu.Unlock()
	return &countingConn{Conn: c, l: l}, nil
}

type countingConn struct {
	net.Conn
	l    *countingListener
	once sync.Once
}

func (c *countingConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

// waitClosed reads from c until the server closes it; a generous deadline
// only keeps a broken server from hanging the test.
func waitClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil {
		t.Errorf("connection not closed by the server: %v", err)
	}
}

// healthzServer serves /healthz within lim on a loopback port, counting
// the connections open at once; it returns the address and that count.
func healthzServer(t *testing.T, lim serverLimits) (addr string, most func() int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	var logs lockedBuffer
	t.Cleanup(serveOn(context.Background(), cl, mux, slog.New(slog.NewJSONHandler(&logs, nil)), lim, ""))
	return ln.Addr().String(), func() int { cl.mu.Lock(); defer cl.mu.Unlock(); return cl.most }
}

// silent opens n connections to addr that never say a word.
func silent(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns = append(conns, c)
	}
	return conns
}

// getHealthz asks /healthz on a connection of its own, within timeout.
func getHealthz(t *testing.T, addr string, timeout time.Duration, idle int) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: timeout}
	resp, err := client.Get("http://" + addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/healthz with %d idle connections: %v, %v", idle, resp, err)
	}
	resp.Body.Close()
}

// More idle connections than the cap neither hold more than the cap open
// (a new one past it closes the oldest silent one, so the count reaches
// the cap plus the one just accepted) nor keep /healthz from answering:
// each idle one is closed after the header or idle timeout, here made
// short, or when a newer one needs its place.
func TestServeBoundsIdleConnections(t *testing.T) {
	lim := serverLimits{ReadHeader: 100 * time.Millisecond, Read: time.Second, Write: time.Second, Idle: 100 * time.Millisecond, MaxConns: 4}
	addr, most := healthzServer(t, lim)

	// One keep-alive connection that asks once and then idles.
	ka, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ka.Close()
	io.WriteString(ka, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(ka), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("keep-alive request: %v, %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)

	idle := silent(t, addr, 3*lim.MaxConns)
	getHealthz(t, addr, 30*time.Second, len(idle))
	waitClosed(t, ka)
	for _, c := range idle {
		waitClosed(t, c)
	}
	if n := most(); n > lim.MaxConns+1 {
		t.Errorf("%d connections open at once, cap %d", n, lim.MaxConns)
	}
}

// With the daemon's own, long timeouts, a thousand silent connections do
// not queue a request behind them: each new one past the cap closes the
// oldest silent one, and /healthz answers at once.
func TestServeHealthzAmongManyIdle(t *testing.T) {
	addr, most := healthzServer(t, daemonLimits)
	idle := silent(t, addr, 1000)
	// A client's own bound, far below the daemon's 10s header timeout: a
	// request queued behind the silent ones would not be answered in it.
	getHealthz(t, addr, 5*time.Second, len(idle))
	waitClosed(t, idle[0]) // the oldest made room for the newer ones
	if n := most(); n > daemonLimits.MaxConns+1 {
		t.Errorf("%d connections open at once, cap %d", n, daemonLimits.MaxConns)
	}
}

// The server's own log lines go to slog, not to the standard logger.
func TestServeErrorLogIsSlog(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") })
	stop := serveOn(context.Background(), ln, h, slog.New(slog.NewJSONHandler(&logs, nil)), daemonLimits, "")
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	if _, err := client.Get("http://" + ln.Addr().String() + "/"); err == nil {
		t.Fatal("a panicking handler answered")
	}
	stop()
	if got := logs.String(); !strings.Contains(got, `"level":"WARN"`) || !strings.Contains(got, "panic serving") || !strings.Contains(got, "boom") {
		t.Errorf("log %q, want the server's panic report as a JSON record", got)
	}
}

// While a crawl runs, lines that the standard library writes with the log
// package (net/http's Transport and Server do) are slog records.
func TestRouteStdLog(t *testing.T) {
	var logs lockedBuffer
	restore := routeStdLog(slog.New(slog.NewJSONHandler(&logs, nil)))
	stdlog.Printf("Unsolicited response received on idle HTTP channel starting with %q; err=%v", "HTTP/1.1 200", nil)
	restore()
	if stdlog.Writer() != os.Stderr {
		t.Errorf("after restore the log package writes to %v, want os.Stderr", stdlog.Writer())
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(logs.String()), &rec); err != nil {
		t.Fatalf("log %q: not one JSON record: %v", logs.String(), err)
	}
	if rec["level"] != "WARN" || !strings.HasPrefix(fmt.Sprint(rec["msg"]), "Unsolicited response received") {
		t.Errorf("record %v", rec)
	}
}

// A listen address that is not loopback is warned of (issue 23.8: --listen
// :PORT bound every interface without a word); a loopback one is not.
func TestServeWarnsWhenExposed(t *testing.T) {
	for _, tc := range []struct {
		ip   string
		want string
	}{
		{"127.0.0.1", ""},
		{"::1", ""},
		{"0.0.0.0", "every interface"},
		{"::", "every interface"},
		{"192.0.2.7", "other machines can reach"},
	} {
		got := exposed(&net.TCPAddr{IP: net.ParseIP(tc.ip), Port: 9090})
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("exposed(%s) = %q, want %q", tc.ip, got, tc.want)
		}
	}
	var logs lockedBuffer
	stop, err := serve(context.Background(), crawler.DaemonConfig{Listen: "127.0.0.1:0"}, http.NotFoundHandler(), slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if got := logs.String(); !strings.Contains(got, "addr=127.0.0.1:") || strings.Contains(got, "WARN") {
		t.Errorf("log %q, want the address bound and no warning", got)
	}
}
