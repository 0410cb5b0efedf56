package main

import (
	"container/list"
	"net"
	"net/http"
	"sync"
)

// connGuard keeps at most max connections of an http.Server open (its
// ConnState hook): a connection past the cap closes the oldest one that is
// not serving a request — new and silent, or idle between requests — so
// that idle clients cannot hold the process's file descriptors and a client
// with a request (an operator's curl, a scraper) is served at once, never
// queued behind them. Connections serving a request are not closed.
type connGuard struct {
	max int

	mu     sync.Mutex
	quiet  list.List // of net.Conn not serving a request, oldest first
	at     map[net.Conn]*list.Element
	active map[net.Conn]bool // serving a request
}

func newConnGuard(max int) *connGuard {
	return &connGuard{max: max, at: map[net.Conn]*list.Element{}, active: map[net.Conn]bool{}}
}

// state is the http.Server's ConnState hook. An evicted connection is in
// neither set from then on, so its StateClosed changes nothing.
func (g *connGuard) state(c net.Conn, s http.ConnState) {
	var evict []net.Conn
	g.mu.Lock()
	switch s {
	case http.StateNew, http.StateIdle:
		delete(g.active, c)
		if _, ok := g.at[c]; !ok {
			g.at[c] = g.quiet.PushBack(c)
		}
		for g.quiet.Len()+len(g.active) > g.max && g.quiet.Len() > 1 {
			evict = append(evict, g.forget(g.quiet.Front()))
		}
	case http.StateActive:
		if el, ok := g.at[c]; ok {
			g.forget(el)
			g.active[c] = true
		}
	case http.StateHijacked, http.StateClosed:
		if el, ok := g.at[c]; ok {
			g.forget(el)
		}
		delete(g.active, c)
	}
	g.mu.Unlock()
	for _, c := range evict {
		c.Close() // its server goroutine then reports StateClosed
	}
}

// forget drops el from the quiet list and returns its connection.
func (g *connGuard) forget(el *list.Element) net.Conn {
	c := g.quiet.Remove(el).(net.Conn)
	delete(g.at, c)
	return c
}
