package report

import "unsafe"

// unsafeString is b as a string without a copy, for map lookups and
// comparisons of a line's bytes that do not outlive the line.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
