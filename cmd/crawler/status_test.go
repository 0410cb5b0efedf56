package main

import (
	"bytes"
	"testing"
)

// The progress line is cut to the terminal's width, and anything else
// written to the terminal clears it first and has it drawn again after a
// whole line, so the two never run together.
func TestStatusLine(t *testing.T) {
	var term bytes.Buffer
	line := &statusLine{term: &term, width: func() int { return 12 }}
	log := line.wrap(&term)
	line.set("done 5 · queued 1234567")
	if got := term.String(); got != "\r\033[Kdone 5 · qu" {
		t.Fatalf("line drawn as %q, want it cut to 11 runes", got)
	}
	term.Reset()
	log.Write([]byte(`{"url":"x"}` + "\n"))
	if got, want := term.String(), "\r\033[K"+`{"url":"x"}`+"\ndone 5 · qu"; got != want {
		t.Errorf("a write to the terminal gave %q, want %q", got, want)
	}
	term.Reset()
	line.set("")
	log.Write([]byte("after\n"))
	if got := term.String(); got != "\r\033[Kafter\n" {
		t.Errorf("after the line was cleared: %q", got)
	}
	if got := fit("abc", 0); got != "abc" {
		t.Errorf("fit with no known width = %q", got)
	}
}
