// Package links is the crawler's one scanner of HTML and CSS that knows
// what a link is: the crawler finds the URLs a page refers to with it
// (Read, Scan, ScanCSS), and the mirror rewrites them with it (Rewrite,
// RewriteCSS), so that both agree on every attribute.
//
// # What counts
//
// attrRole in grammar.go is the one table: a and area href (Anchor, with
// rel=nofollow); frame and iframe src (Frame); link href by its rel
// (canonical, the page-naming rels alternate, next, prev, ... as
// Alternate with hreflang, requisite rels stylesheet, icon, preload,
// manifest, ... as Requisite, other rels as Other; see LinkKind); img and
// source src and each srcset candidate, script, audio, embed and track src,
// video src and poster, input src when type=image, object data, body, table,
// td and th background (Requisite); form action and formaction (Form); the
// URL of a meta http-equiv=refresh (Refresh); base href (Base); cite and
// longdesc (Other); and, as Requisite with CSS set, each url() and @import
// of a style attribute or a <style> element. Only the first of an
// attribute counts, as in the HTML tree; xlink:href counts as href (SVG
// links), <image> is <img>, and the content of <noscript> and <noframes> is
// read as markup, as by a browser without scripts or frames, and by wget.
//
// The page's own statements — <base href>, <link rel=canonical>, hreflang
// alternates, <meta name=robots> and <meta name=PRODUCT_TOKEN> — are
// selected with goquery (Page.Head, Base, Canonicals, Hreflangs,
// MetaRobots) from a small document of the page's link, meta and base
// elements that Read builds as it scans. goquery is used there, and only
// there, because selecting facts by element and attribute is what it is
// for, and the audit will select more of them (title, description, h1);
// walking every element of a page with it, as the crawler once did, cost a
// third of its CPU, so the links themselves come from the scanner.
//
// # How
//
// HTML is read token by token, as golang.org/x/net/html's Tokenizer reads
// it, not by its tree builder: the tokenizer already skips comments and
// the raw text of scripts, titles and text areas, and decodes character
// references. The tree builder's moves barely bear on links (an <a> in a
// <select> or after a <frameset> is kept here, as wget keeps it). The
// tokens come from the package's own tokenizer (tokenizer.go), which gives
// exactly x/net/html's at a quarter of the cost, and leaves the rare
// constructs to it. CSS is read by one small
// scanner that follows CSS Syntax Level 3 for url(), strings, comments and
// escapes. ReadHTML decodes other charsets first with x/net/html/charset.
// ReadHTMLLimit keeps only the first references of a page, counting the
// rest (Page.Cut), so that a page's cost is bounded by the limit and its
// size, not by how many links it packs in.
//
// Rewrite keeps every byte of a document but the tags whose URLs change;
// such a tag is written again from the tokenizer's attributes, in their
// order, lower-cased, each value double-quoted and escaped. A tag whose
// attribute names could not be read back the same (a name with '/', say) is
// kept as it was. Srcset candidates and refresh URLs are escaped so that a
// new URL cannot end them early (a srcset URL's first or last comma is
// kept, with "./" before or an empty fragment after it, where it can be);
// CSS strings and url() likewise. A NUL in CSS reads as U+FFFD, as CSS
// Syntax preprocesses it.
//
// # Caveats
//
// Rewriting works on bytes, which suits UTF-8 and other ASCII-compatible
// pages; URLs in scripts, link imagesrcset and CSS image-set() strings are
// not seen. In a rewritten style, srcset or refresh value, characters that
// were written as character references come back as UTF-8.
package links
