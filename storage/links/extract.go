package links

import (
	"bytes"
	"fmt"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html/charset"
)

// Caps on what Extract keeps of one page: values of an all: true
// extraction, and characters of one value.
const (
	MaxExtractValues = 100
	MaxExtractChars  = 1000
)

// Extraction is a custom extraction (README, "Custom extraction"): the
// text of the first element Selector matches, or its attribute Attr, or
// those of every match when All is set.
type Extraction struct {
	Name     string
	Selector cascadia.Selector
	Attr     string
	All      bool
}

// CompileExtraction compiles the CSS selector css for an Extraction.
func CompileExtraction(name, css, attr string, all bool) (Extraction, error) {
	sel, err := cascadia.Compile(css)
	if err != nil {
		return Extraction{}, fmt.Errorf("css %q: %w", css, err)
	}
	return Extraction{Name: name, Selector: sel, Attr: attr, All: all}, nil
}

// Extract runs the extractions on an HTML page, parsed whole with
// goquery (so only when some are configured: a page's whole tree costs
// several times its size). A value is the element's text with white space
// collapsed, or the attribute as written, at most MaxExtractChars
// characters; an extraction with All gives a []string of at most
// MaxExtractValues, the others a string. An extraction that matches
// nothing (or no element with the attribute) is left out.
func Extract(body []byte, contentType string, xs []Extraction) map[string]any {
	if len(xs) == 0 {
		return nil
	}
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		r = bytes.NewReader(body)
	}
	doc, err := goquery.NewDocumentFromReader(r)
	if err != nil {
		return nil
	}
	out := map[string]any{}
	for _, x := range xs {
		var vals []string
		doc.FindMatcher(x.Selector).EachWithBreak(func(_ int, s *goquery.Selection) bool {
			v, ok := s.Text(), true
			if x.Attr != "" {
				v, ok = s.Attr(x.Attr)
			} else {
				v = collapse(v)
			}
			if ok {
				if r := []rune(v); len(r) > MaxExtractChars {
					v = string(r[:MaxExtractChars])
				}
				vals = append(vals, v)
			}
			return x.All && len(vals) < MaxExtractValues || !x.All && len(vals) == 0
		})
		switch {
		case len(vals) == 0:
		case x.All:
			out[x.Name] = vals
		default:
			out[x.Name] = vals[0]
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
