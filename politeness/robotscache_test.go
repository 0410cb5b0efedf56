package politeness

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/politecrawl/crawler/robots"
)

func TestRobotsCacheOneFetchAtATime(t *testing.T) {
	c := NewRobotsCache("ExampleBot/1.0", 10)
	if act, _, _ := c.Lookup(origin, t0); act != RobotsFetch {
		t.Fatalf("first Lookup = %v, want RobotsFetch", act)
	}
	if act, _, _ := c.Lookup(origin, t0); act != RobotsWait {
		t.Fatalf("Lookup during a fetch = %v, want RobotsWait", act)
	}
	if got := c.Status(origin, t0); got != "fetching" {
		t.Errorf("Status = %q", got)
	}
	body := []byte("User-agent: examplebot\nDisallow: /private\nCrawl-delay: 2\n")
	c.Store(origin, robots.Fetch{Status: 200, Body: body}, t0)
	act, g, _ := c.Lookup(origin, t0.Add(time.Hour))
	if act != RobotsReady || g == nil {
		t.Fatalf("Lookup after Store = %v, %v", act, g)
	}
	if g.Allowed("/private/x") || !g.Allowed("/public") {
		t.Error("the group of ExampleBot was not applied")
	}
	if d, ok := g.CrawlDelay(); !ok || d != 2*time.Second {
		t.Errorf("CrawlDelay = %v, %v", d, ok)
	}
	if act, _, _ := c.Lookup(origin, t0.Add(25*time.Hour)); act != RobotsFetch {
		t.Errorf("after 25h Lookup = %v, want RobotsFetch (24h cache)", act)
	}
}

func TestRobotsCacheUnreachable(t *testing.T) {
	c := NewRobotsCache("ExampleBot", 10)
	c.Lookup(origin, t0)
	st := c.Store(origin, robots.Fetch{Err: errors.New("connection refused")}, t0)
	act, g, _ := c.Lookup(origin, t0)
	if act != RobotsReady || g.Allowed("/") {
		t.Fatalf("unreachable robots.txt: %v, allowed / = %v; want everything disallowed", act, g.Allowed("/"))
	}
	if !st.NextFetch.After(t0) || c.Status(origin, t0) != "unreachable" {
		t.Fatalf("NextFetch %v, status %q", st.NextFetch, c.Status(origin, t0))
	}
	if act, _, _ := c.Lookup(origin, st.NextFetch); act != RobotsFetch {
		t.Fatalf("at NextFetch Lookup = %v, want RobotsFetch", act)
	}
}

func TestRobotsCacheAbandonAndRestore(t *testing.T) {
	c := NewRobotsCache("ExampleBot", 10)
	c.Lookup(origin, t0)
	c.Abandon(origin)
	if act, _, _ := c.Lookup(origin, t0); act != RobotsFetch {
		t.Fatalf("after Abandon Lookup = %v, want RobotsFetch", act)
	}
	saved := robots.Update(robots.State{}, robots.Fetch{Status: 404}, t0)
	other := NewRobotsCache("ExampleBot", 10)
	other.Restore(origin, saved)
	if act, g, _ := other.Lookup(origin, t0.Add(time.Hour)); act != RobotsReady || !g.Allowed("/anything") {
		t.Fatalf("restored 404 state: %v", act)
	}
}

func TestRobotsCacheBounded(t *testing.T) {
	c := NewRobotsCache("ExampleBot", 3)
	for i := range 10 {
		o := fmt.Sprintf("http://h%d.example", i)
		c.Lookup(o, t0)
		c.Store(o, robots.Fetch{Status: 404}, t0)
	}
	if n := c.lru.Len(); n != 3 {
		t.Fatalf("cache holds %d hosts, want 3", n)
	}
	if got := c.Status("http://h0.example", t0); got != "unknown" {
		t.Errorf("the oldest host is still cached: %q", got)
	}
	if act, _, _ := c.Lookup("http://h9.example", t0); act != RobotsReady {
		t.Errorf("the newest host was dropped")
	}
}

func TestRobotsCacheMaxAge(t *testing.T) {
	c := NewRobotsCache("ExampleBot", 10)
	c.SetMaxAge(10 * time.Minute)
	c.Lookup(origin, t0)
	c.Store(origin, robots.Fetch{Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n")}, t0)
	if act, _, _ := c.Lookup(origin, t0.Add(9*time.Minute)); act != RobotsReady {
		t.Fatalf("before the max age: %v", act)
	}
	if act, _, _ := c.Lookup(origin, t0.Add(10*time.Minute)); act != RobotsFetch {
		t.Fatalf("at the max age: %v, want RobotsFetch although the 24h cache holds", act)
	}
}

func TestRobotsCacheAnswer(t *testing.T) {
	c := NewRobotsCache("ExampleBot", 10)
	if _, ok := c.Answer(origin, t0); ok {
		t.Fatal("an answer for a host never fetched")
	}
	c.Lookup(origin, t0)
	if _, ok := c.Answer(origin, t0); ok {
		t.Fatal("an answer while the first fetch is under way")
	}
	c.Store(origin, robots.Fetch{Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n"),
		MaxAge: time.Hour, HasMaxAge: true}, t0)
	st, ok := c.Answer(origin, t0.Add(59*time.Minute))
	if !ok || st.Status != 200 || string(st.Body) != "User-agent: *\nDisallow: /x\n" {
		t.Fatalf("within max-age: %+v, %v", st, ok)
	}
	if _, ok := c.Answer(origin, t0.Add(time.Hour)); ok {
		t.Fatal("an answer past its max-age")
	}
	c.SetMaxAge(10 * time.Minute)
	if _, ok := c.Answer(origin, t0.Add(10*time.Minute)); ok {
		t.Fatal("an answer past the cache's max age")
	}
	c.Lookup(origin, t0.Add(time.Hour))
	c.Store(origin, robots.Fetch{Status: 503}, t0.Add(time.Hour))
	if _, ok := c.Answer(origin, t0.Add(time.Hour)); ok {
		t.Fatal("an answer after an unreachable fetch")
	}
}

// Hasten brings a due time forward, never back; Peek reads a state without
// starting a fetch.
func TestRobotsCacheHastenAndPeek(t *testing.T) {
	const origin = "http://a.test"
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	c := NewRobotsCache("ExampleBot", 10)
	if _, ok := c.Peek(origin); ok {
		t.Fatal("Peek knows a host never looked up")
	}
	if act, _, _ := c.Lookup(origin, t0); act != RobotsFetch {
		t.Fatalf("first Lookup = %v", act)
	}
	st := c.Store(origin, robots.Fetch{Status: 503}, t0)
	if !st.DisallowAll || !st.NextFetch.After(t0.Add(time.Second)) {
		t.Fatalf("after a 503: %+v", st)
	}
	c.Hasten(origin, st.NextFetch.Add(time.Hour)) // later: no change
	if got, _ := c.Peek(origin); !got.NextFetch.Equal(st.NextFetch) {
		t.Errorf("Hasten to a later time moved NextFetch to %v", got.NextFetch)
	}
	c.Hasten(origin, t0.Add(time.Second))
	if act, _, _ := c.Lookup(origin, t0.Add(time.Second)); act != RobotsFetch {
		t.Errorf("Lookup at the hastened time = %v, want a fetch", act)
	}
}
