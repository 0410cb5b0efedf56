package cluster

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	good := DefaultConfig()
	good.NATS = "nats://10.0.0.1:4222, tls://nats.example:4443,127.0.0.1"
	tests := []struct {
		name   string
		change func(*Config)
		want   []string // problems, in order
	}{
		{"defaults", func(*Config) {}, nil},
		{"disabled config is not read", func(c *Config) { c.NATS, c.Lease, c.Partitions = "", 0, 0 }, nil},
		{"worker given", func(c *Config) { c.Worker = "crawler-7.eu_1" }, nil},
		{"everything wrong", func(c *Config) {
			c.NATS = "http://x:4222,nats://:1,nats://h:99999"
			c.Name = "a.b"
			c.Worker = "a b"
			c.Partitions = 0
			c.Lease = time.Second
		}, []string{
			`cluster.nats: URL "http://x:4222": scheme must be nats, tls, ws or wss`,
			`cluster.nats: URL "nats://:1" has no host`,
			`cluster.nats: URL "nats://h:99999": bad port`,
			`cluster.name: must be 1 to 64 letters, digits, '-' or '_', got "a.b"`,
			`cluster.worker: must be 1 to 128 letters, digits, '-', '_', '=' or inner '.', got "a b"`,
			`cluster.partitions: must be between 1 and 4096, got 0`,
			`cluster.lease: must be ≥ 3s, got 1s`,
		}},
		{"worker with a leading dot", func(c *Config) { c.Worker = ".a" }, []string{
			`cluster.worker: must be 1 to 128 letters, digits, '-', '_', '=' or inner '.', got ".a"`,
		}},
		{"too many partitions", func(c *Config) { c.Partitions = MaxPartitions + 1 }, []string{
			`cluster.partitions: must be between 1 and 4096, got 4097`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good
			tt.change(&c)
			err := c.Validate()
			var got []string
			var ce *ConfigError
			if errors.As(err, &ce) {
				for _, p := range ce.Problems {
					got = append(got, p.String())
				}
			} else if err != nil {
				t.Fatalf("Validate = %v, not a *ConfigError", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Validate:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tt.want, "\n     "))
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	c := DefaultConfig()
	if c.Enabled() || c.Name != "crawl" || c.Partitions != 256 || c.Lease != 15*time.Second || c.Worker != "" {
		t.Fatalf("DefaultConfig = %+v, want the contract's", c)
	}
	if w := defaultWorker(); !validWorker(w) {
		t.Fatalf("defaultWorker = %q, not a valid worker id", w)
	}
}

// TestUntilBeforeExpiry: the window to start requests ends a fifth of a
// lease before the earliest instant the server can expire the claim, which
// is a lease after the write was sent.
func TestUntilBeforeExpiry(t *testing.T) {
	sent := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	tm := timingOf(15 * time.Second)
	if got, want := tm.until(sent), sent.Add(12*time.Second); !got.Equal(want) {
		t.Fatalf("until = %v, want %v", got, want)
	}
	if tm.renew != 15*time.Second/4 || tm.until(sent).Sub(sent) < 3*tm.renew {
		t.Fatalf("renewals every %v leave fewer than three tries in a window", tm.renew)
	}
}
