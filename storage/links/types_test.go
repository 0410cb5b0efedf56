package links

import "testing"

// The media types read as HTML and CSS: HTML and XHTML, CSS, whatever
// their parameters and case; nothing without a type.
func TestTypes(t *testing.T) {
	for ct, want := range map[string][2]bool{
		"text/html":                      {true, false},
		" Text/HTML ; charset=utf-8":     {true, false},
		"application/xhtml+xml":          {true, false},
		"text/css; charset=utf-8":        {false, true},
		"":                               {false, false},
		"text/plain":                     {false, false},
		"application/xhtml+xml-ish":      {false, false},
		"text/cssx":                      {false, false},
		"TEXT/CSS":                       {false, true},
		"text/html\x00":                  {false, false},
		"application/octet-stream; text": {false, false},
	} {
		if got := [2]bool{IsHTMLType(ct), IsCSSType(ct)}; got != want {
			t.Errorf("%q: IsHTMLType, IsCSSType = %v, want %v", ct, got, want)
		}
	}
}
