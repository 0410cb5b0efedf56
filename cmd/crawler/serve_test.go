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

// More idle connections than the cap neither hold more than the cap open
// (a new one past it closes the oldest silent one, so the count reaches
// the cap plus the one just accepted) nor keep /healthz from answering:
// each idle one is closed after the header or idle timeout, here made
// short, or when a newer one needs its place.
func TestServeBoundsIdleConnections(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	var logs lockedBuffer
	lim := serverLimits{ReadHeader: 100 * time.Millisecond, Read: time.Second, Write: time.Second, Idle: 100 * time.Millisecond, MaxConns: 4}
	stop := serveOn(context.Background(), cl, mux, slog.New(slog.NewJSONHandler(&logs, nil)), lim)
	defer stop()
	addr := ln.Addr().String()

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

	// Three times the cap of connections that never say a word.
	var idle []net.Conn
	for range 3 * lim.MaxConns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	resp, err = client.Get("http://" + addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/healthz with %d idle connections: %v, %v", len(idle), resp, err)
	}
	resp.Body.Close()

	waitClosed(t, ka)
	for _, c := range idle {
		waitClosed(t, c)
	}
	cl.mu.Lock()
	most := cl.most
	cl.mu.Unlock()
	if most > lim.MaxConns+1 {
		t.Errorf("%d connections open at once, cap %d", most, lim.MaxConns)
	}
}

// With the daemon's own, long timeouts, thousands of silent connections do
// not queue a request behind them: each new one past the cap closes the
// oldest silent one, and /healthz answers at once.
func TestServeHealthzAmongManyIdle(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	stop := serveOn(context.Background(), cl, mux, slog.New(slog.DiscardHandler), daemonLimits)
	defer stop()
	addr := ln.Addr().String()
	var idle []net.Conn
	for range 1000 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	// A client's own bound, far below the daemon's 10s header timeout: a
	// request queued behind the silent ones would not be answered in it.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/healthz with %d idle connections: %v, %v", len(idle), resp, err)
	}
	resp.Body.Close()
	waitClosed(t, idle[0]) // the oldest made room for the newer ones
	cl.mu.Lock()
	most := cl.most
	cl.mu.Unlock()
	if most > daemonLimits.MaxConns+1 {
		t.Errorf("%d connections open at once, cap %d", most, daemonLimits.MaxConns)
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
	stop := serveOn(context.Background(), ln, h, slog.New(slog.NewJSONHandler(&logs, nil)), daemonLimits)
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
