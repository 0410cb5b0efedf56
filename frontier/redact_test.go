package frontier

import (
	"net/url"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://example.com/a@b", "http://example.com/a@b"},
		{"http://user@example.com/", "http://user@example.com/"},
		{"http://user:secretpw@example.com/", "http://user:xxxxx@example.com/"},
		{"HTTP://u:p@ss@h:80?q#f", "HTTP://u:xxxxx@h:80?q#f"},
		{"http://u:pw@h", "http://u:xxxxx@h"},
		{"nats://crawler:WRONGPASS@127.0.0.1:4222,nats://a:b@h2:4222", "nats://crawler:xxxxx@127.0.0.1:4222,nats://a:xxxxx@h2:4222"},
		{`connect to "ws://u:p@h/x": refused; see https://v:q@w`, `connect to "ws://u:xxxxx@h/x": refused; see https://v:xxxxx@w`},
		{"http://u:xxxxx@h/", "http://u:xxxxx@h/"},
		{"http://u:%zz@h:bad port/", "http://u:xxxxx@h:bad port/"},
		{"mailto:a@b", "mailto:a@b"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// FuzzRedact: what url.Parse reads as the password of an absolute URL
// never survives Redact.
func FuzzRedact(f *testing.F) {
	f.Add("http://user:secretpw@example.com/")
	f.Add("https://a:b@c@d/e")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := url.Parse(s)
		if err != nil || u.User == nil || !u.IsAbs() {
			return
		}
		pw, ok := u.User.Password()
		if !ok || len(pw) < 6 {
			return
		}
		if r, err := url.Parse(Redact(s)); err == nil && r.User != nil {
			if got, _ := r.User.Password(); got == pw {
				t.Errorf("Redact(%q) = %q keeps the password %q", s, Redact(s), pw)
			}
		}
	})
}
