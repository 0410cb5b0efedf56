package report

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/politecrawl/crawler/storage"
)

// maxLine bounds one line of the inventory or the link graph; a longer
// one is skipped as malformed (storage's writer never writes one).
const maxLine = storage.MaxLine

// skipped counts the malformed lines of one file and remembers the first.
type skipped struct {
	n     int
	first int // line number of the first, from 1
}

func (s *skipped) add(line int) {
	if s.n == 0 || line < s.first {
		s.first = line
	}
	s.n++
}

func (s *skipped) merge(o skipped) {
	if o.n > 0 {
		s.add(o.first)
		s.n += o.n - 1
	}
}

// warning says what was skipped of file, or "" when nothing was.
func (s skipped) warning(file string) string {
	switch s.n {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("%s: skipped 1 malformed line (line %d): a torn write of a crawl still running or killed, or not JSON", file, s.first)
	}
	return fmt.Sprintf("%s: skipped %d malformed lines (the first is line %d): torn writes of a crawl still running or killed, or not JSON", file, s.n, s.first)
}

// eachLine calls fn with each line of r, its newline cut, in order; a
// line longer than maxLine is skipped without being held whole, and the
// lines after it are read still.
func eachLine(r io.Reader, fn func(line []byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte // a line longer than br's buffer, gathered
	over := false   // the line being read is past maxLine
	for {
		part, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if over = over || len(long)+len(part) > maxLine; !over {
				long = append(long, part...)
			}
			continue
		}
		line := part
		if len(long) > 0 {
			long = append(long, part...)
			line = long
		}
		if line = bytes.TrimSuffix(line, []byte{'\n'}); !over && len(line) <= maxLine && len(line) > 0 {
			fn(line)
		}
		long, over = long[:0], false
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
	}
}
