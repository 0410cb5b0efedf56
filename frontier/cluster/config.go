package cluster

import (
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/politecrawl/crawler/frontier"
)

// The defaults of the contract's cluster block.
const (
	DefaultName       = "crawl"
	DefaultPartitions = 256
	DefaultLease      = 15 * time.Second
	// MinLease is the shortest lease Validate accepts: renewals go out every
	// quarter lease, and a lease much shorter than a few network round trips
	// and a garbage-collection pause would drop partitions for nothing.
	MinLease = 3 * time.Second
	// MaxPartitions bounds Partitions: every worker renews one key per
	// partition it holds, every quarter lease.
	MaxPartitions = 4096
)

// Config is the cluster block of the crawl's configuration. The zero value
// (no NATS URL) is one machine: Enabled reports false.
type Config struct {
	// NATS is one or more NATS server URLs with JetStream, separated by
	// commas ("" = one machine).
	NATS string `yaml:"nats"`
	// Name names the crawl: workers with the same name share one crawl. It
	// names the crawl's streams and buckets, so it is letters, digits, '-'
	// and '_'.
	Name string `yaml:"name"`
	// Worker is this worker's id; "" means the host name and process id
	// (Join fills it in).
	Worker string `yaml:"worker"`
	// Partitions is the number of parts hosts are split into; fixed when
	// the crawl is created.
	Partitions int `yaml:"partitions"`
	// Lease is how long a worker that stops renewing keeps its partitions;
	// fixed when the crawl is created.
	Lease time.Duration `yaml:"lease"`

	// minLease, when not zero, replaces MinLease: tests use leases of a
	// second or two so that expiry takes seconds, not tens of them.
	minLease time.Duration
}

// DefaultConfig returns the contract's defaults, with no NATS URL.
func DefaultConfig() Config {
	return Config{Name: DefaultName, Partitions: DefaultPartitions, Lease: DefaultLease}
}

// Enabled reports whether the crawl is shared through NATS.
func (c Config) Enabled() bool { return strings.TrimSpace(c.NATS) != "" }

// Problem is one thing wrong with a Config.
type Problem struct {
	Key     string // the key at fault, as written in YAML ("cluster.lease")
	Message string // what is wrong, and the value found
}

// String writes the problem as "key: message".
func (p Problem) String() string { return p.Key + ": " + p.Message }

// ConfigError is what Validate returns: every problem found, in the order
// of the keys, one per line.
type ConfigError struct {
	Problems []Problem
}

// Error lists the problems, one "key: message" per line.
func (e *ConfigError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Validate reports every problem of an enabled c as a *ConfigError, each
// naming its key; a config that is not Enabled is valid whatever else it
// holds, since nothing reads it.
func (c Config) Validate() error {
	if !c.Enabled() {
		return nil
	}
	var ps []Problem
	add := func(key, format string, a ...any) {
		ps = append(ps, Problem{Key: "cluster." + key, Message: fmt.Sprintf(format, a...)})
	}
	for _, u := range splitURLs(c.NATS) {
		if err := checkURL(u); err != nil {
			add("nats", "%v", err)
		}
	}
	if !validName(c.Name) {
		add("name", "must be 1 to 64 letters, digits, '-' or '_', got %q", c.Name)
	}
	if c.Worker != "" && !validWorker(c.Worker) {
		add("worker", "must be 1 to 128 letters, digits, '-', '_', '=' or inner '.', got %q", c.Worker)
	}
	if c.Partitions < 1 || c.Partitions > MaxPartitions {
		add("partitions", "must be between 1 and %d, got %d", MaxPartitions, c.Partitions)
	}
	least := MinLease
	if c.minLease > 0 {
		least = c.minLease
	}
	if c.Lease < least {
		add("lease", "must be ≥ %v, got %v", least, c.Lease)
	}
	if len(ps) == 0 {
		return nil
	}
	return &ConfigError{Problems: ps}
}

// Redacted is NATS as messages show it: each URL with its password masked
// (crawler:xxxxx@), a bare host:port's too.
func (c Config) Redacted() string {
	urls := splitURLs(c.NATS)
	for i, u := range urls {
		urls[i] = redactServer(u)
	}
	return strings.Join(urls, ",")
}

// redactServer is a server URL with its password masked.
func redactServer(u string) string {
	if strings.Contains(u, "://") {
		return frontier.Redact(u)
	}
	return strings.TrimPrefix(frontier.Redact("nats://"+u), "nats://")
}

func splitURLs(s string) []string {
	var out []string
	for u := range strings.SplitSeq(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// checkURL accepts what nats.go does: a URL of scheme nats, tls, ws or wss,
// or a bare host:port.
func checkURL(s string) error {
	raw := s
	s = redactServer(s)
	if !strings.Contains(s, "://") {
		raw = "nats://" + s
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bad URL %q", s)
	}
	switch u.Scheme {
	case "nats", "tls", "ws", "wss":
	default:
		return fmt.Errorf("URL %q: scheme must be nats, tls, ws or wss", s)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("URL %q has no host", s)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("URL %q: bad port", s)
		}
	}
	return nil
}

func validName(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !isAlnum(r) && r != '-' && r != '_' {
			return false
		}
	}
	return true
}

// validWorker accepts what may follow "w." in a KV key.
func validWorker(s string) bool {
	if len(s) < 1 || len(s) > 128 || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for _, r := range s {
		if !isAlnum(r) && !strings.ContainsRune("-_=.", r) {
			return false
		}
	}
	return true
}

func isAlnum(r rune) bool {
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

// defaultWorker is the host name (with characters a key may not hold
// replaced by '_') and the process id.
func defaultWorker() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		h = "worker"
	}
	h = strings.Trim(strings.Map(func(r rune) rune {
		if isAlnum(r) || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, h), ".")
	if len(h) > 100 {
		h = h[:100]
	}
	return strings.ReplaceAll(h, "..", "_") + "-" + strconv.Itoa(os.Getpid())
}

// timing derives the lease's rhythm: renewals every quarter lease, and a
// margin of a fifth of it, so that a worker stops starting requests a fifth
// of a lease before the server can let its claim go.
type timing struct {
	lease, renew, margin time.Duration
}

func timingOf(lease time.Duration) timing {
	return timing{lease: lease, renew: lease / 4, margin: lease / 5}
}

// until returns the end of the window in which a worker may start requests
// for a partition whose claim it wrote with a request sent at sent. The
// server stores the write after it was sent and expires it lease after
// that, by its own clock; counting from the send time by the worker's clock,
// minus the margin, ends the window before the expiry unless the worker's
// clock runs margin/lease (20%) slower than the server's, or the server's
// wall clock jumps forward.
func (t timing) until(sent time.Time) time.Time { return sent.Add(t.lease - t.margin) }
