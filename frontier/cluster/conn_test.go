package cluster

import (
	"bytes"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats-server/v2/server"
)

// A password in cluster.nats is masked in every error (issue 23.5):
// connect errors named the server URL with it.
func TestJoinMasksPassword(t *testing.T) {
	s := startServerWith(t, &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true, Username: "crawler", Password: "RIGHTPASS"})
	addr := strings.TrimPrefix(s.ClientURL(), "nats://")
	for _, nats := range []string{"nats://crawler:WRONGPASS@" + addr, "crawler:WRONGPASS@" + addr} {
		_, err := Join(testContext(t), testConfig(nats, "a", 4), quietLog(), Options{})
		if err == nil || strings.Contains(err.Error(), "WRONGPASS") || !strings.Contains(err.Error(), "crawler:xxxxx@") {
			t.Errorf("Join(%s) = %v, want an error with the password masked", nats, err)
		}
	}
	err := testConfig("nats://crawler:WRONGPASS@h:99999", "a", 4).Validate()
	if err == nil || strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("Validate = %v, want an error with the password masked", err)
	}
	if _, err := Status(testContext(t), testConfig("nats://crawler:WRONGPASS@"+addr, "a", 4)); err == nil || strings.Contains(err.Error(), "WRONGPASS") {
		t.Errorf("Status = %v, want an error with the password masked", err)
	}
}

// An endpoint that streams bytes with no newline is refused once it has
// sent maxFirstLine of them, not read into memory until the connect
// times out (issue 23.8: about 1 GB).
func TestJoinBoundsFirstLine(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var (
		mu   sync.Mutex
		sent int
	)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				chunk := bytes.Repeat([]byte("A"), 64<<10)
				for {
					n, err := c.Write(chunk)
					mu.Lock()
					sent += n
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	_, err = Join(testContext(t), testConfig("nats://"+l.Addr().String(), "a", 4), quietLog(), Options{})
	mu.Lock()
	defer mu.Unlock()
	if err == nil || sent > 16*maxFirstLine {
		t.Errorf("Join = %v after the server sent %d MB; want an error within a few MB", err, sent>>20)
	}
}

// The NATS client's own reports go to the log, not to stderr as plain
// text (issue 23.8: under log.format: json they were not JSON).
func TestNATSErrorsToLog(t *testing.T) {
	s := startServer(t, true)
	var buf bytes.Buffer
	c, err := dial(testContext(t), testConfig(s.ClientURL(), "a", 4), "test", true, slog.New(slog.NewJSONHandler(&buf, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.nc.Close()
	c.nc.ErrorHandler()(c.nc, nil, errors.New("nats: slow consumer, messages dropped"))
	if !strings.Contains(buf.String(), `"msg":"nats","err":"nats: slow consumer, messages dropped"`) {
		t.Errorf("log: %s", buf.String())
	}
}
