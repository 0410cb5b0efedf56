package cluster

import "testing"

// TestShareRobots: what one worker shares of a robots.txt URL another
// reads, the last write winning; a URL never shared reads as absent.
func TestShareRobots(t *testing.T) {
	s := startServer(t, true)
	ctx := testContext(t)
	a := join(t, testConfig(s.ClientURL(), "a", 2), Options{})
	b := join(t, testConfig(s.ClientURL(), "b", 2), Options{})
	waitFor(t, "both to hold partitions", func() bool { return balanced(2, a, b) })
	const key = "http://x.test:8080/robots.txt"
	if _, ok, err := b.SharedRobots(ctx, key); ok || err != nil {
		t.Fatalf("SharedRobots before any share = %v, %v; want absent", ok, err)
	}
	for _, v := range []string{"first", "second"} {
		if err := a.ShareRobots(ctx, key, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if data, ok, err := b.SharedRobots(ctx, key); !ok || err != nil || string(data) != "second" {
		t.Fatalf("SharedRobots = %q, %v, %v; want the last share", data, ok, err)
	}
}
