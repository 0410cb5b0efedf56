package main

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

// The progress line fits the terminal's width, and anything else
// written to the terminal clears it first and has it drawn again after a
// whole line, so the two never run together.
func TestStatusLine(t *testing.T) {
	var term bytes.Buffer
	line := &statusLine{term: &term, width: func() int { return 12 }}
	log := line.wrap(&term)
	line.set("done 5 · queued 1234567")
	if got := term.String(); got != "\r\033[Kdone 5" {
		t.Fatalf("line drawn as %q, want its first field alone", got)
	}
	term.Reset()
	log.Write([]byte(`{"url":"x"}` + "\n"))
	if got, want := term.String(), "\r\033[K"+`{"url":"x"}`+"\ndone 5"; got != want {
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

// At 80 columns the progress line drops whole fields from its end, never
// a part of one: the "… errors " with no number cannot happen.
func TestFitDropsWholeFields(t *testing.T) {
	line := "1h2m3s · done 1234567 · queued 12345678 · errors 123456 · 1234.5/s · hosts 1200 active, 34000 waiting"
	got := fit(line, 80)
	if got != "1h2m3s · done 1234567 · queued 12345678 · errors 123456 · 1234.5/s" {
		t.Errorf("fit = %q", got)
	}
	for w := 1; w <= len(line)+1; w++ {
		got := fit(line, w)
		if got == "" {
			continue // not even the first field fits
		}
		if !strings.HasPrefix(line, got) || got != line && !strings.HasPrefix(line[len(got):], " · ") {
			t.Errorf("fit(line, %d) = %q: not whole fields", w, got)
		}
		if n := utf8.RuneCountInString(got); n >= w {
			t.Errorf("fit(line, %d) is %d runes", w, n)
		}
	}
}
