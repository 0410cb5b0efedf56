package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openPTY opens a pseudo-terminal: its master, to read what is written,
// and its slave, a terminal to write to.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock, n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Skipf("unlock pseudo-terminal: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Skipf("pseudo-terminal number: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("open pseudo-terminal: %v", err)
	}
	return m, s
}

// TestJSONLogOnATerminal runs discover under --log-format json with its
// stderr a terminal: every line is JSON there too, progress included (a
// program that reads a log through a pseudo-terminal, as `docker run -t`
// gives, got the progress line's text and escape codes between records).
func TestJSONLogOnATerminal(t *testing.T) {
	master, slave := openPTY(t)
	defer master.Close()
	var (
		mu   sync.Mutex
		seen bytes.Buffer
	)
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			seen.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	// The page is answered once a second's progress has been shown, as a
	// record or as a line, whichever the terminal gets.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				mu.Lock()
				s := seen.String()
				mu.Unlock()
				if strings.Contains(s, "\x1b[K") || strings.Contains(s, `"msg":"progress"`) {
					break
				}
			}
		}
		fmt.Fprint(w, "<html>ok</html>")
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	err := run(ctx, []string{"discover", "--log-format", "json", "--delay", "0", srv.URL + "/"}, strings.NewReader(""), &out, slave)
	exitCode(err, slave)
	slave.Close()
	<-readDone
	mu.Lock()
	defer mu.Unlock()
	lines := 0
	for _, line := range strings.Split(seen.String(), "\n") {
		if line = strings.TrimRight(line, "\r"); line == "" {
			continue
		}
		lines++
		if !json.Valid([]byte(line)) {
			t.Errorf("not a JSON line on the terminal under --log-format json: %q", line)
		}
	}
	if lines == 0 {
		t.Error("nothing written to the terminal")
	}
}
