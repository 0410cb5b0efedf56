package report

import (
	"slices"
	"testing"
)

func TestAcceptStatuses(t *testing.T) {
	got, ok := Config{Accept: []string{"403", "999"}}.AcceptStatuses()
	if !ok || !slices.Equal(got, []int{403, 999}) {
		t.Errorf("AcceptStatuses() = %v, %v; want [403 999], true", got, ok)
	}
	if got, ok := (Config{Accept: []string{"403", "99"}}).AcceptStatuses(); ok {
		t.Errorf("AcceptStatuses() of 99 = %v, true; want false", got)
	}
}
