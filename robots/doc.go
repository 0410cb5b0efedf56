// Package robots parses robots.txt files and answers whether a crawler may
// fetch a URL, as RFC 9309 (the Robots Exclusion Protocol) and Google's
// reading of it specify. Google's open-source C++ library
// (github.com/google/robotstxt) is the reference for every detail the RFC
// leaves open; this package agrees with it except where noted below.
//
// Parse reads a body once into an immutable *Rules; ForAgent picks the group
// for a crawler once; Group.Allowed then answers many URLs without
// allocating. All values are safe for concurrent use.
//
// # Syntax
//
// Lines end in CR, LF or CRLF; a UTF-8 byte order mark, even a partial one,
// is skipped at the start; "#" starts a comment anywhere; only the first 500
// KiB (MaxSize) are read, and a line is cut after MaxLineLength bytes, as
// Google cuts it. A line is "key: value", keys are matched case-insensitively
// by prefix, and the misspellings Google accepts are accepted (useragent,
// user agent; dissallow, dissalow, disalow, diasllow, disallaw; site-map). A
// line without a colon is read as "key value" when it holds exactly two
// words, as Google reads it. Crawl-delay (also crawldelay) is read too,
// fractional or whole seconds; Google ignores it.
//
// # Groups
//
// One or more user-agent lines start a group; rules before the first group
// are ignored; sitemap, crawl-delay and unknown lines neither belong to the
// user-agent list nor end it. Groups naming the same agent are merged. The
// crawler's product token (see ProductToken) is compared case-insensitively
// and exactly with the token of each user-agent line, extracted the same
// way; the groups that match win, otherwise the "*" groups apply, otherwise
// nothing does. A matched group with no rules allows everything.
//
// # Matching
//
// The path, params and query of the URL are compared with each rule's
// pattern: "*" matches any run of octets and a final "$" anchors the end.
// The rule whose pattern has the most octets wins; on a tie, allow wins; an
// empty Disallow allows. "/robots.txt" is always allowed. Google's
// "Allow: /dir/index.html" (or .htm) also allows "/dir/".
//
// Before comparison both the patterns and the URL are normalised as RFC 9309
// §2.2.2 asks: octets outside US-ASCII are percent-encoded, hex digits are
// upper-cased, and percent-encoded unreserved characters (ALPHA DIGIT - . _
// ~) are decoded. Reserved characters (/ ? = & : and the rest) are compared
// as written. Because "*" and "$" are special in patterns, RFC 9309 §2.2.3
// has a pattern spell them %2A and %24 to match them literally; so %2A and
// "*", and %24 and "$", are the same octet in a URL, and %2A, %24 and a "$"
// that is not last are literal in a pattern. A "%" that starts no
// percent-encoding stands for %25. The length of a rule is counted on its
// normalised pattern.
//
// # Where this package deviates from Google's library
//
//   - Google leaves the URL as given, so "/foo/bar/ツ" does not match a rule
//     for "/foo/bar/%E3%83%84" there, nor "/foo/bar/baz" one for
//     "/foo/bar/%62%61%7A", nor "/%aa" one for "/%AA". Here both sides are
//     normalised, as the RFC asks, and all match. The same holds for %2A and
//     %24 against "*" and "$", and for a stray "%" against %25; and a rule's
//     length is that of its normalised pattern, which is shorter than
//     Google's count when unreserved characters were encoded.
//   - "/robots.txt" is always allowed (RFC 9309 §2.2.2); Google's library
//     leaves that to its caller.
//   - The crawler's user agent is reduced to its product token: the leading
//     letters, "-" and "_", when followed by the end or by "/" (as in
//     "ExampleBot/1.0 (+https://example.com/bot)"). Google's library takes
//     the agent as a bare token. An agent whose leading word is followed by
//     anything else ("Foo Bar", "Foobot*", "Foobot2") matches no group, which
//     is what Google's library does with it too. An empty agent, as there,
//     matches the user-agent lines that start with no token ("User-agent:",
//     "User-agent: 123").
//   - The body is cut at 500 KiB, as Googlebot does; the library reads all.
//
// # Fetch policy
//
// Update is the policy of RFC 9309 §2.3 and §2.4 as a pure function: given
// what a fetch of /robots.txt returned and the time, it returns the State to
// keep (and persist) for the host: the rules that apply now, when to fetch
// again, and what is known of the last good copy.
//
// Caveats: patterns are matched against the path as octets, so rules for
// paths that are not valid UTF-8 or not percent-encoded consistently match
// as written; a Crawl-delay that is not a non-negative decimal number is
// ignored; Stats counts what was skipped, but line numbers are not kept.
package robots
