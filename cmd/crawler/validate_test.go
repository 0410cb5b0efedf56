package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crawler validate names every fault with its line and exits 2, or says the
// file is valid and exits 0; either way it creates no state and contacts
// nothing (the seed's port has no server: a fetch would fail).
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "seeds: [http://127.0.0.1:1/]\nstate_dir: "+state+"\noutput:\n  urls: "+filepath.Join(dir, "u.jsonl")+"\n")
	bad := write("bad.yaml", "seeds: [http://127.0.0.1:1/]\npoliteness:\n  delay: -1s\nfetch:\n  workerz: 3\nscope:\n  include: ['(']\n")
	for _, tc := range []struct {
		args     []string
		code     int
		out, err []string
	}{
		{[]string{"validate", "-c", good}, 0, []string{good + ": valid"}, nil},
		{[]string{"validate", "-c", good, "--delay", "-2s"}, 2, nil, []string{"politeness.delay", "--delay"}},
		{[]string{"validate", "-c", bad}, 2, nil, []string{
			"3 problems",
			bad + ":3: politeness.delay: must be ≥ 0",
			bad + ":5: fetch.workerz: unknown key (did you mean fetch.workers?)",
			bad + ":7: scope.include[0]",
		}},
		{[]string{"validate"}, 2, nil, []string{"-c FILE"}},
		{[]string{"validate", "-c", filepath.Join(dir, "none.yaml")}, 2, nil, []string{"none.yaml"}},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
		code := exitCode(err, &stderr)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tc.args, code, tc.code, stderr.String())
		}
		for _, w := range tc.out {
			if !strings.Contains(stdout.String(), w) {
				t.Errorf("%v: stdout %q lacks %q", tc.args, stdout.String(), w)
			}
		}
		for _, w := range tc.err {
			if !strings.Contains(stderr.String(), w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, stderr.String(), w)
			}
		}
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("validate made the state_dir (%v)", err)
	}
}
