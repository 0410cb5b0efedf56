package report

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxLine bounds one line of the inventory or the link graph; a longer
// one is skipped as malformed (the writers' lines are far shorter).
const maxLine = 1 << 20

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

// eachLine calls fn for every line of r that is not blank, with its
// number, the newline and surrounding white space cut. A line longer than
// maxLine is not passed to fn but counted in skip. The slice is valid only
// until fn returns.
func eachLine(r io.Reader, skip *skipped, fn func(line []byte, no int)) error {
	br := bufio.NewReaderSize(r, 256<<10)
	var long []byte
	for no := 1; ; no++ {
		line, err := br.ReadSlice('\n')
		tooLong := false
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				if !tooLong {
					long = append(long, line...)
					tooLong = len(long) > maxLine
				}
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return err
		}
		if tooLong {
			skip.add(no)
		} else if t := bytes.TrimSpace(line); len(t) > 0 {
			fn(t, no)
		}
		if err == io.EOF {
			return nil
		}
	}
}
