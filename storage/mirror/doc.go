// Package mirror keeps fetched bodies as a browsable file tree
// (output.mirror_dir) and, for output.mirror_links: relative, rewrites
// their links to point at one another, as wget -k does.
//
//   - Path maps a URL and its Content-Type onto a file name, laid out as
//     wget -x --adjust-extension would, from which no URL can escape; Mirror
//     writes files there atomically and finds them again (Locate).
//   - RewriteHTML and RewriteCSS rewrite a saved page's links: links to
//     files in the mirror become relative (RelativeRef), others absolute,
//     and <base href> is dropped. What counts as a link is storage/links'
//     grammar; this package only decides what each becomes.
//   - Check walks the mirror and reports relative links that lead to no
//     file; CheckKnown takes the links of files just rewritten from the
//     rewrite (RewriteHTMLRefs, RewriteCSSRefs) rather than reading them
//     again, while they are still the files written. UnlinkGone makes links
//     to files removed since (pages gone) absolute again.
//
// Mirror is safe for concurrent use by multiple goroutines within one
// process; two processes must not share a root.
//
// # Layout and collisions
//
// A few distinct URLs share a file: /a and /a.html both served as HTML (as
// in wget), /d/ and /d/index.html, http and https of one host, and
// spellings servers treat alike (a literal '@' and %40). The names are made
// for POSIX file systems: ':' (in host:port) and the other characters
// Windows forbids are kept, and names differing only in case (/A and /a)
// collide on case-insensitive file systems (macOS and Windows by default),
// where the later body replaces the earlier.
//
// When a URL's file and another URL's directory would have the same name
// (/e served as a file, and /e/ or /e/x needing e/ as a directory), the
// directory wins and the file is kept beside it, as e%! (see Mirror and
// AsidePath).
//
// # Links
//
// A link to a URL that redirected is pointed, by the engine's resolve
// function, at the mirror file of the end of the chain, as wget -k does. A
// form's action stays as written unless its target is mirrored: the
// mirror file sits where the page did, so it still means the page's
// target (a <base> that changed its meaning makes it absolute). Where
// several URLs share a file (/d/ and /d/index.html) the engine rewrites it
// once: RewriteHTML is not idempotent on a file it already rewrote, whose
// relative links it would read as the site's.
//
// # Caveats
//
// A crash can leave temporary ".tmp-*" files in the mirror; New removes
// them. Rewriting works on bytes and keeps all but the tags it changes
// (which are written again, lower-cased and double-quoted; see
// links.Rewrite), which suits UTF-8 and other ASCII-compatible pages; a
// page in UTF-16 is left as it is. Left alone: URLs in scripts, link
// imagesrcset and CSS image-set() strings.
package mirror
