package cluster

import (
	"bytes"
	"fmt"
	"net"
)

// maxFirstLine bounds the first line a server sends (NATS's INFO, a few
// KB): nats.go reads it byte by byte with no limit, so an endpoint that
// streams bytes with no newline made a connect hold a gigabyte before it
// timed out.
const maxFirstLine = 1 << 20

// lineDialer dials as net.Dialer does, and fails a connection whose first
// line is longer than maxFirstLine. It is a nats.CustomDialer.
type lineDialer struct{ d net.Dialer }

func (l *lineDialer) Dial(network, address string) (net.Conn, error) {
	c, err := l.d.Dial(network, address)
	if err != nil {
		return nil, err
	}
	return &firstLineConn{Conn: c}, nil
}

// firstLineConn counts the bytes read until the first newline.
type firstLineConn struct {
	net.Conn
	n    int  // bytes read before the first newline
	seen bool // the first newline was read
}

func (c *firstLineConn) Read(p []byte) (int, error) {
	if c.seen {
		return c.Conn.Read(p)
	}
	if c.n >= maxFirstLine {
		return 0, fmt.Errorf("%s sent over %d bytes without a newline: not a NATS server", c.RemoteAddr(), maxFirstLine)
	}
	n, err := c.Conn.Read(p[:min(len(p), maxFirstLine-c.n)])
	if i := bytes.IndexByte(p[:n], '\n'); i >= 0 {
		c.seen = true
	} else {
		c.n += n
	}
	return n, err
}
