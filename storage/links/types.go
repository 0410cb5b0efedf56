package links

import "strings"

// IsHTMLType reports whether contentType names a type read as HTML
// (text/html, application/xhtml+xml), its parameters and case aside.
func IsHTMLType(contentType string) bool {
	mt := mediaType(contentType)
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// IsCSSType reports whether contentType names a stylesheet (text/css).
func IsCSSType(contentType string) bool { return mediaType(contentType) == "text/css" }

// mediaType is contentType's media type, lower-cased, without parameters.
func mediaType(contentType string) string {
	mt, _, _ := strings.Cut(strings.ToLower(contentType), ";")
	return strings.TrimSpace(mt)
}
