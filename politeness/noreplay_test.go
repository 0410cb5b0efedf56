package politeness

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestNoReplayIsSentOnce: a server that reads a request on a kept-alive
// connection and then drops it would see Go's transport send the request
// again; with NoReplay it sees it once, and the client gets the error.
func TestNoReplayIsSentOnce(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/boom" {
			hits.Add(1)
			if r.ContentLength > 0 || len(r.TransferEncoding) > 0 {
				t.Errorf("an empty GET arrived with a body: %d %v", r.ContentLength, r.TransferEncoding)
			}
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
			return
		}
	}))
	defer srv.Close()
	client := srv.Client()
	if resp, err := client.Get(srv.URL + "/warm"); err == nil { // a kept-alive connection to reuse
		resp.Body.Close()
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/boom", nil)
	req.Body = NoReplay()
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a dropped connection gave a response")
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("the server saw the request %d times, want once", n)
	}
}
