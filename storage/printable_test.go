package storage

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// encoding/json leaves a C1 control and a bidi override raw; EscapeJSON
// writes them as \u escapes, and the JSON still decodes to the same text.
func TestEscapeJSON(t *testing.T) {
	in := "a\u009b31mb\u202ec\u2066d\u2028e\u0085é—"
	raw, _ := json.Marshal(in)
	got := EscapeJSON(raw)
	for _, r := range []string{"\u009b", "\u202e", "\u2066", "\u2028", "\u0085"} {
		if bytes.Contains(got, []byte(r)) {
			t.Errorf("%q holds %U raw", got, []rune(r)[0])
		}
	}
	if !bytes.Contains(got, []byte(`\u009b31m`)) || !bytes.Contains(got, []byte(`\u202e`)) || !bytes.Contains(got, []byte("é—")) {
		t.Errorf("EscapeJSON = %s", got)
	}
	var back string
	if err := json.Unmarshal(got, &back); err != nil || back != in {
		t.Errorf("decodes to %q, %v; want %q", back, err, in)
	}
	// After ASCII runs of every length, at every place in a word.
	for k := range 20 {
		in := strings.Repeat("x", k) + "\u202e" + strings.Repeat("y", k) + "\u0085"
		raw, _ := json.Marshal(in)
		want := `"` + strings.Repeat("x", k) + `\u202e` + strings.Repeat("y", k) + `\u0085"`
		if got := EscapeJSON(raw); string(got) != want {
			t.Errorf("EscapeJSON(%s) = %s; want %s", raw, got, want)
		}
	}
	plain := []byte(`{"url":"https://ex.test/é"}`)
	if got := EscapeJSON(plain); &got[0] != &plain[0] {
		t.Error("EscapeJSON copied a line with nothing to escape")
	}
}

func TestPrintable(t *testing.T) {
	got := Printable("ok\x1b[2J\u009b2J\u202eevil\u2029x\tq")
	if strings.ContainsAny(got, "\x1b\u009b\u202e\u2029\t") {
		t.Errorf("Printable left a control: %q", got)
	}
	if want := `ok\u001b[2J\u009b2J\u202eevil\u2029x\u0009q`; got != want {
		t.Errorf("Printable = %q; want %q", got, want)
	}
	if s := "plain é"; Printable(s) != s {
		t.Errorf("Printable(%q) = %q", s, Printable(s))
	}
}

// The inventory, which discover prints to a terminal, holds no C1 or
// bidi control raw.
func TestInventoryEscapesControls(t *testing.T) {
	var b bytes.Buffer
	inv := NewInventory(&b)
	if err := inv.Write(Record{URL: "https://ex.test/", Title: "a\u009b31m\u202eb"}); err != nil {
		t.Fatal(err)
	}
	if err := inv.WriteLink(Link{From: "https://ex.test/", To: "https://ex.test/x", Kind: "a", Anchor: "\u202ex\u0085"}); err != nil {
		t.Fatal(err)
	}
	inv.Close()
	if strings.ContainsAny(b.String(), "\u009b\u202e\u0085") {
		t.Errorf("inventory holds a control raw: %q", b.String())
	}
}
