package links

import "strings"

// elements are those that can hold a URL in an attribute other than style;
// holdsURL says the same for one name.
var elements = []string{
	"a", "area", "audio", "base", "blockquote", "body", "button", "del", "embed", "form", "frame", "iframe",
	"img", "input", "ins", "link", "meta", "object", "q", "script", "source", "table", "td", "th",
	"track", "video",
}

// holdsURL reports whether the element name (lower-case) is one of
// elements.
func holdsURL(name []byte) bool { return elementOf(name)&elURL != 0 }

// element is what the walker does with an element's start tag, told by
// its name alone.
type element uint16

const (
	elURL       element = 1 << iota // one of elements
	elHidden                        // its text is not the page's visible text (see Facts)
	elMarkup                        // noscript, noframes: its content is read as markup
	elStyle                         // <style>: its text is CSS
	elFactAttrs                     // img and a: the facts read attributes of each
	elHTML                          // <html>: the facts read its lang
	elHead                          // link, meta, base: the head document's
	elTitle                         // <title>: Page.Title
	elH1                            // <h1>: Page.H1 and the facts' count
	elImage                         // <image>, read as <img>
)

// elementOf says what name (lower-case) is to the walker. One switch,
// which the compiler makes a search on length and bytes, asked once for
// every start tag of every page, rather than a switch or a map for each
// question (holds a URL? hidden? a head element? ...): hashing a name for
// a map was 4% of a docs mirror's CPU.
func elementOf(name []byte) element {
	switch string(name) {
	case "a", "img":
		return elURL | elFactAttrs
	case "image":
		return elURL | elFactAttrs | elImage
	case "base", "link", "meta":
		return elURL | elHead
	case "script":
		return elURL | elHidden
	case "area", "audio", "blockquote", "body", "button", "del", "embed", "form", "frame", "iframe",
		"input", "ins", "object", "q", "source", "table", "td", "th", "track", "video":
		return elURL
	case "style":
		return elStyle | elHidden
	case "title":
		return elTitle | elHidden
	case "template":
		return elHidden
	case "noscript":
		return elMarkup | elHidden
	case "noframes":
		return elMarkup
	case "h1":
		return elH1
	case "html":
		return elHTML
	}
	return 0
}

// attrNames are the attribute names the grammar knows.
var attrNames = []string{"href", "xlink:href", "src", "srcset", "longdesc", "poster", "formaction",
	"action", "data", "background", "content", "cite", "style"}

// intern returns b as a string, without allocating for a name of elements
// or attrNames. A switch, not a map: it is asked for each reference's tag
// and attribute, and hashing them was 2% of reading the docs pages.
func intern(b []byte) string {
	switch string(b) {
	case "a":
		return "a"
	case "area":
		return "area"
	case "audio":
		return "audio"
	case "base":
		return "base"
	case "blockquote":
		return "blockquote"
	case "body":
		return "body"
	case "button":
		return "button"
	case "del":
		return "del"
	case "embed":
		return "embed"
	case "form":
		return "form"
	case "frame":
		return "frame"
	case "iframe":
		return "iframe"
	case "img":
		return "img"
	case "input":
		return "input"
	case "ins":
		return "ins"
	case "link":
		return "link"
	case "meta":
		return "meta"
	case "object":
		return "object"
	case "q":
		return "q"
	case "script":
		return "script"
	case "source":
		return "source"
	case "table":
		return "table"
	case "td":
		return "td"
	case "th":
		return "th"
	case "track":
		return "track"
	case "video":
		return "video"
	case "href":
		return "href"
	case "xlink:href":
		return "xlink:href"
	case "src":
		return "src"
	case "srcset":
		return "srcset"
	case "longdesc":
		return "longdesc"
	case "poster":
		return "poster"
	case "formaction":
		return "formaction"
	case "action":
		return "action"
	case "data":
		return "data"
	case "background":
		return "background"
	case "content":
		return "content"
	case "cite":
		return "cite"
	case "style":
		return "style"
	}
	return string(b)
}

// What an attribute's value holds.
const (
	roleNone    = iota
	roleURL     // one URL
	roleSrcset  // image candidates, each a URL
	roleRefresh // a meta refresh content, with a URL in it
	roleStyle   // CSS declarations
)

// attrRole says what attribute key of element tag holds, given the tag's
// attributes, and the reference it makes without its URL. This is the one
// table of what counts as a link.
func attrRole(tag, key string, attrs []attr) (int, Ref) {
	if key == "style" {
		return roleStyle, Ref{}
	}
	switch tag {
	case "a", "area":
		if key == "href" {
			rel, _ := find(attrs, "rel")
			return roleURL, Ref{Kind: Anchor, Rel: rel, Nofollow: hasToken(rel, "nofollow")}
		}
	case "link":
		if key == "href" {
			rel, _ := find(attrs, "rel")
			ref := Ref{Kind: LinkKind(rel), Rel: rel}
			if ref.Kind == Alternate {
				ref.Nofollow = hasToken(rel, "nofollow")
				if firstRel(rel) == "alternate" {
					lang, _ := find(attrs, "hreflang")
					ref.Hreflang = strings.TrimSpace(lang)
				}
			}
			return roleURL, ref
		}
	case "frame", "iframe":
		if key == "src" {
			return roleURL, Ref{Kind: Frame}
		}
	case "img", "source":
		switch key {
		case "src":
			return roleURL, Ref{Kind: Requisite}
		case "srcset":
			return roleSrcset, Ref{Kind: Requisite}
		case "longdesc":
			return roleURL, Ref{Kind: Other}
		}
	case "script", "audio", "embed", "track":
		if key == "src" {
			return roleURL, Ref{Kind: Requisite}
		}
	case "video":
		if key == "src" || key == "poster" {
			return roleURL, Ref{Kind: Requisite}
		}
	case "input":
		switch key {
		case "src":
			if t, _ := find(attrs, "type"); strings.EqualFold(strings.TrimSpace(t), "image") {
				return roleURL, Ref{Kind: Requisite}
			}
		case "formaction":
			return roleURL, Ref{Kind: Form}
		}
	case "button":
		if key == "formaction" {
			return roleURL, Ref{Kind: Form}
		}
	case "form":
		if key == "action" {
			return roleURL, Ref{Kind: Form}
		}
	case "object":
		if key == "data" {
			return roleURL, Ref{Kind: Requisite}
		}
	case "body", "table", "td", "th":
		if key == "background" {
			return roleURL, Ref{Kind: Requisite}
		}
	case "meta":
		if key == "content" {
			if e, _ := find(attrs, "http-equiv"); strings.EqualFold(strings.TrimSpace(e), "refresh") {
				return roleRefresh, Ref{Kind: Refresh}
			}
		}
	case "base":
		if key == "href" {
			return roleURL, Ref{Kind: Base}
		}
	case "blockquote", "q", "ins", "del":
		if key == "cite" {
			return roleURL, Ref{Kind: Other}
		}
	}
	return roleNone, Ref{}
}

// LinkKind is the kind of a <link href> with the given rel, by its first
// token that names one: a canonical; navigation between pages (alternate,
// next, prev and the other HTML 4 link types that name documents),
// followed as links; or what a page needs to display (stylesheets, icons,
// preloads, a manifest, an OpenSearch description), a requisite. Other
// rels, such as preconnect or dns-prefetch, give Other.
func LinkKind(rel string) Kind {
	for _, tok := range strings.Fields(rel) {
		if k, ok := relKinds[strings.ToLower(tok)]; ok {
			return k
		}
	}
	return Other
}

var relKinds = map[string]Kind{
	"canonical": Canonical,
	"alternate": Alternate, "next": Alternate, "prev": Alternate, "previous": Alternate,
	"first": Alternate, "last": Alternate, "up": Alternate, "index": Alternate,
	"contents": Alternate, "start": Alternate,
	"stylesheet": Requisite, "icon": Requisite, "apple-touch-icon": Requisite,
	"apple-touch-icon-precomposed": Requisite, "mask-icon": Requisite, "preload": Requisite,
	"modulepreload": Requisite, "manifest": Requisite, "search": Requisite,
}

// firstRel is the first token of rel that LinkKind knows, lower case.
func firstRel(rel string) string {
	for _, tok := range strings.Fields(rel) {
		if _, ok := relKinds[strings.ToLower(tok)]; ok {
			return strings.ToLower(tok)
		}
	}
	return ""
}
