package politeness

import (
	"net/http"
	"testing"
	"time"

	"github.com/politecrawl/crawler/robots"
)

func TestMaxAge(t *testing.T) {
	for _, c := range []struct {
		values []string
		want   time.Duration
		ok     bool
	}{
		{nil, 0, false},
		{[]string{"max-age=60"}, time.Minute, true},
		{[]string{`public, MAX-AGE="120"`}, 2 * time.Minute, true},
		{[]string{"private", "max-age=30"}, 30 * time.Second, true},
		{[]string{"max-age=60, no-cache"}, 0, true},
		{[]string{"no-store"}, 0, true},
		{[]string{"max-age=-1"}, 0, false},
		{[]string{"max-age=soon"}, 0, false},
		{[]string{"max-age=99999999999999999999"}, robots.CacheMax, true},
		{[]string{"max-age=9999999999"}, robots.CacheMax, true},
		{[]string{"s-maxage=60"}, 0, false},
	} {
		h := http.Header{}
		for _, v := range c.values {
			h.Add("Cache-Control", v)
		}
		if d, ok := maxAge(h); d != c.want || ok != c.ok {
			t.Errorf("%q: %v, %v; want %v, %v", c.values, d, ok, c.want, c.ok)
		}
	}
}
