package main

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// statusLine draws a crawl's progress line at the bottom of a terminal and
// keeps it out of everything else written there: whatever another stream
// writes to the same terminal (the log, discover's URLs) first clears the
// line and, once a line of its own is complete, has the progress line drawn
// again under it. The line is cut to the terminal's width, so that it never
// wraps and leaves a fragment behind.
type statusLine struct {
	mu    sync.Mutex
	term  io.Writer
	width func() int // the terminal's columns; ≤ 0 when unknown
	line  string     // as drawn; "" when none is
}

// set draws line in place of the last one; "" clears it.
func (s *statusLine) set(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.line = fit(line, s.width())
	io.WriteString(s.term, "\r\033[K"+s.line)
}

// fit makes line shorter than width columns (a terminal that wraps at
// its last column would start a new line; 80 when width is unknown) by
// dropping whole fields (parts between " · ") from its end, so that no
// figure is ever cut: the line's producer puts what matters most first.
// A first field that does not fit alone leaves the line empty.
func fit(line string, width int) string {
	if width <= 0 {
		width = 80
	}
	for utf8.RuneCountInString(line) >= width {
		i := strings.LastIndex(line, fieldSep)
		if i < 0 {
			return ""
		}
		line = line[:i]
	}
	return line
}

// fieldSep separates the fields of a progress line.
const fieldSep = " · "

// wrap returns w, a stream to the same terminal, with the line kept out of
// its way.
func (s *statusLine) wrap(w io.Writer) io.Writer { return &lineAware{s: s, w: w} }

type lineAware struct {
	s *statusLine
	w io.Writer
}

func (a *lineAware) Write(p []byte) (int, error) {
	a.s.mu.Lock()
	defer a.s.mu.Unlock()
	if a.s.line != "" {
		io.WriteString(a.s.term, "\r\033[K")
	}
	n, err := a.w.Write(p)
	if a.s.line != "" && bytes.HasSuffix(p, []byte("\n")) {
		io.WriteString(a.s.term, a.s.line)
	}
	return n, err
}
