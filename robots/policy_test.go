package robots

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const goodBody = "User-agent: *\nDisallow: /private/\n"

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		f    Fetch
		want Result
	}{
		{Fetch{Status: 200}, ResultOK},
		{Fetch{Status: 204}, ResultOK},
		{Fetch{Status: 299}, ResultOK},
		{Fetch{Status: 200, Redirects: 5}, ResultOK},
		{Fetch{Status: 200, Redirects: 6}, ResultMissing},
		{Fetch{Status: 301, Redirects: 5}, ResultMissing}, // a sixth redirect not followed: unavailable
		{Fetch{Status: 304}, ResultMissing},
		{Fetch{Status: 100}, ResultUnreachable},
		{Fetch{Status: 400}, ResultMissing},
		{Fetch{Status: 401}, ResultMissing},
		{Fetch{Status: 403}, ResultMissing},
		{Fetch{Status: 404}, ResultMissing},
		{Fetch{Status: 410}, ResultMissing},
		{Fetch{Status: 451}, ResultMissing},
		{Fetch{Status: 429}, ResultUnreachable},
		{Fetch{Status: 500}, ResultUnreachable},
		{Fetch{Status: 503}, ResultUnreachable},
		{Fetch{Status: 599}, ResultUnreachable},
		{Fetch{Status: 600}, ResultUnreachable},
		{Fetch{Err: errors.New("timeout")}, ResultUnreachable},
		{Fetch{Status: 200, Err: errors.New("reset while reading")}, ResultUnreachable},
		{Fetch{}, ResultUnreachable},
	} {
		if got := Classify(c.f); got != c.want {
			t.Errorf("Classify(%+v) = %s, want %s", c.f, got, c.want)
		}
	}
}

func TestUpdateAnswers(t *testing.T) {
	day := 24 * time.Hour
	for _, c := range []struct {
		name        string
		f           Fetch
		next        time.Duration
		allowedPriv bool
	}{
		{"200", Fetch{Status: 200, Body: []byte(goodBody)}, day, false},
		{"200 max-age 1h", Fetch{Status: 200, Body: []byte(goodBody), HasMaxAge: true, MaxAge: time.Hour}, time.Hour, false},
		{"200 max-age 2d", Fetch{Status: 200, Body: []byte(goodBody), HasMaxAge: true, MaxAge: 2 * day}, day, false},
		{"200 max-age 0", Fetch{Status: 200, Body: []byte(goodBody), HasMaxAge: true}, CacheMin, false},
		{"200 max-age 5s", Fetch{Status: 200, Body: []byte(goodBody), HasMaxAge: true, MaxAge: 5 * time.Second}, 5 * time.Second, false},
		{"404", Fetch{Status: 404, Body: []byte(goodBody)}, day, true},
		{"403 max-age 10m", Fetch{Status: 403, HasMaxAge: true, MaxAge: 10 * time.Minute}, 10 * time.Minute, true},
		{"200 after 5 redirects", Fetch{Status: 200, Redirects: 5, Body: []byte(goodBody)}, day, false},
		{"a sixth redirect: unavailable, all allowed", Fetch{Status: 302, Redirects: 5}, day, true},
	} {
		s := Update(State{}, c.f, t0)
		if s.NextFetch != t0.Add(c.next) {
			t.Errorf("%s: next fetch in %v, want %v", c.name, s.NextFetch.Sub(t0), c.next)
		}
		if got := s.Rules().Allowed("FooBot", "/private/x"); got != c.allowedPriv {
			t.Errorf("%s: /private/x allowed = %v, want %v", c.name, got, c.allowedPriv)
		}
		if !s.Rules().Allowed("FooBot", "/public") || s.DisallowAll || s.Unreachable() || s.Failures != 0 {
			t.Errorf("%s: state %+v", c.name, s)
		}
		if !s.GoodAt.Equal(t0) || s.Due(t0) || !s.Due(s.NextFetch) {
			t.Errorf("%s: good at %v, due now %v", c.name, s.GoodAt, s.Due(t0))
		}
	}
}

func TestUpdateUnreachable(t *testing.T) {
	failures := []Fetch{
		{Status: 503},
		{Status: 500},
		{Status: 429},
		{Err: errors.New("dial tcp: connection refused")},
	}
	for _, f := range failures {
		// Never fetched before: everything disallowed, retried after RetryMin.
		s := Update(State{}, f, t0)
		if !s.Unreachable() || !s.DisallowAll || s.Rules().Allowed("FooBot", "/public") {
			t.Errorf("%+v: state %+v allows", f, s)
		}
		if !s.Rules().Allowed("FooBot", "/robots.txt") {
			t.Errorf("%+v: /robots.txt disallowed", f)
		}
		if s.NextFetch != t0.Add(RetryMin) || s.Failures != 1 || !s.FailingSince.Equal(t0) {
			t.Errorf("%+v: next %v failures %d since %v", f, s.NextFetch.Sub(t0), s.Failures, s.FailingSince)
		}
	}
	if s := Update(State{}, Fetch{Err: errors.New("boom")}, t0); s.Error != "boom" || s.Status != 0 {
		t.Errorf("error not kept: %+v", s)
	}
}

func TestUpdateBackoffAndRecovery(t *testing.T) {
	s := Update(State{}, Fetch{Status: 200, Body: []byte(goodBody)}, t0)
	now := t0.Add(25 * time.Hour)
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 16 * time.Minute,
		32 * time.Minute, time.Hour, time.Hour}
	for i, w := range want {
		s = Update(s, Fetch{Status: 503}, now)
		if got := s.NextFetch.Sub(now); got != w {
			t.Errorf("failure %d: retry in %v, want %v", i+1, got, w)
		}
		if !s.DisallowAll || s.Rules().Allowed("FooBot", "/public") {
			t.Errorf("failure %d: not disallowing all", i+1)
		}
		if string(s.Body) != goodBody || !s.GoodAt.Equal(t0) {
			t.Errorf("failure %d: last good copy lost", i+1)
		}
		now = s.NextFetch
	}
	if !s.FailingSince.Equal(t0.Add(25 * time.Hour)) {
		t.Errorf("failing since %v", s.FailingSince)
	}
	// Retry-After longer than the backoff wins, up to CacheMax.
	if s2 := Update(s, Fetch{Status: 503, RetryAfter: 3 * time.Hour}, now); s2.NextFetch.Sub(now) != 3*time.Hour {
		t.Errorf("Retry-After 3h: retry in %v", s2.NextFetch.Sub(now))
	}
	if s2 := Update(s, Fetch{Status: 429, RetryAfter: 100 * time.Hour}, now); s2.NextFetch.Sub(now) != CacheMax {
		t.Errorf("Retry-After 100h: retry in %v", s2.NextFetch.Sub(now))
	}
	// An answer ends the failures.
	s = Update(s, Fetch{Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n")}, now)
	if s.Unreachable() || s.DisallowAll || s.Failures != 0 || !s.FailingSince.IsZero() || !s.Rules().Allowed("FooBot", "/private/") {
		t.Errorf("after recovery: %+v", s)
	}
}

func TestUpdateThirtyDays(t *testing.T) {
	for _, c := range []struct {
		name     string
		prev     State
		wantPriv bool // /private/x allowed after 30 days
	}{
		{"last good copy", Update(State{}, Fetch{Status: 200, Body: []byte(goodBody)}, t0), false},
		{"never good", State{}, true},
		{"last answer 404", Update(State{}, Fetch{Status: 404}, t0), true},
	} {
		s := c.prev
		start := t0.Add(time.Hour)
		for now := start; now.Before(start.Add(UnreachableLimit)); now = now.Add(RetryMax) {
			s = Update(s, Fetch{Status: 500}, now)
			if !s.DisallowAll {
				t.Fatalf("%s: allows before 30 days, at %v", c.name, now.Sub(start))
			}
		}
		s = Update(s, Fetch{Status: 500}, start.Add(UnreachableLimit))
		if s.DisallowAll || !s.Unreachable() || !s.Rules().Allowed("FooBot", "/public") {
			t.Errorf("%s: after 30 days: %+v", c.name, s)
		}
		if got := s.Rules().Allowed("FooBot", "/private/x"); got != c.wantPriv {
			t.Errorf("%s: after 30 days /private/x allowed = %v, want %v", c.name, got, c.wantPriv)
		}
		if s.NextFetch.Sub(start.Add(UnreachableLimit)) != RetryMax {
			t.Errorf("%s: keeps retrying every %v", c.name, s.NextFetch.Sub(start.Add(UnreachableLimit)))
		}
	}
}

func TestUpdateBodyCap(t *testing.T) {
	body := make([]byte, MaxSize+100)
	s := Update(State{}, Fetch{Status: 200, Body: body}, t0)
	if len(s.Body) != MaxSize {
		t.Errorf("kept %d bytes, want %d", len(s.Body), MaxSize)
	}
}

// TestStatePersists checks that a State survives a JSON round trip, as the
// robots cache will keep it, and gives the same rules after it.
func TestStatePersists(t *testing.T) {
	states := []State{
		{},
		Update(State{}, Fetch{Status: 200, Body: []byte(goodBody), HasMaxAge: true, MaxAge: time.Hour}, t0),
		Update(State{}, Fetch{Status: 404}, t0),
		Update(Update(State{}, Fetch{Status: 200, Body: []byte(goodBody)}, t0), Fetch{Status: 503}, t0.Add(time.Hour)),
		Update(Update(State{}, Fetch{Status: 200, Body: []byte(goodBody)}, t0), Fetch{Status: 503}, t0.Add(UnreachableLimit+time.Hour)),
	}
	for i, s := range states {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back State
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{"/public", "/private/x", "/robots.txt"} {
			if s.Rules().Allowed("FooBot", u) != back.Rules().Allowed("FooBot", u) {
				t.Errorf("state %d: %s differs after a round trip through %s", i, u, b)
			}
		}
		if !back.NextFetch.Equal(s.NextFetch) || back.Result != s.Result || back.Failures != s.Failures {
			t.Errorf("state %d: %+v became %+v", i, s, back)
		}
	}
	if (State{}).Rules().Allowed("FooBot", "/") {
		t.Error("a State never fetched allows")
	}
	if !(State{}).Due(t0) {
		t.Error("a State never fetched is not due")
	}
	// A State from elsewhere with a nonsensical failure count still works.
	if s := Update(State{Failures: -7}, Fetch{Status: 503}, t0); s.NextFetch.Sub(t0) != RetryMin {
		t.Errorf("negative failures: retry in %v", s.NextFetch.Sub(t0))
	}
}
