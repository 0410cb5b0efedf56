package report

import (
	"slices"
	"strings"
	"testing"
)

// eachLine skips a line over maxLine and keeps reading; a line of
// maxLine bytes and a last line without its newline are lines.
func TestEachLine(t *testing.T) {
	full := strings.Repeat("f", maxLine)
	in := "a\n" + strings.Repeat("x", maxLine+1) + "\n\n" + full + "\nb"
	var got []string
	if err := eachLine(strings.NewReader(in), func(l []byte) { got = append(got, string(l)) }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", full, "b"}; !slices.Equal(got, want) {
		t.Errorf("got %d lines %.20q, want %d %.20q", len(got), got, len(want), want)
	}
}
