package robots

import "bytes"

// rule is a compiled allow or disallow pattern.
type rule struct {
	// segs are the literal runs of the pattern between its "*"s, decoded:
	// %2A and %24 are the octets "*" and "$". segs[0] must start the path;
	// the others follow in order, anywhere after it.
	segs     [][]byte
	prio     int32 // the length of the normalised pattern, in octets
	bucket   uint8 // bucketOf(segs[0])
	allow    bool
	anchored bool // the pattern ends in "$": the last run must end the path
}

// match reports whether the rule matches the normalised path p. Taking each
// run at its leftmost place leaves the most room for the runs after it, so
// this greedy scan finds a match whenever one exists; each run is searched
// once, from where the one before it ended, so there is no backtracking
// whatever the "*"s.
func (r *rule) match(p []byte) bool {
	first := r.segs[0]
	if len(r.segs) == 1 {
		if r.anchored {
			return bytes.Equal(p, first)
		}
		return bytes.HasPrefix(p, first)
	}
	if !bytes.HasPrefix(p, first) {
		return false
	}
	p = p[len(first):]
	last := len(r.segs) - 1
	for _, s := range r.segs[1:last] {
		i := bytes.Index(p, s)
		if i < 0 {
			return false
		}
		p = p[i+len(s):]
	}
	if r.anchored {
		return bytes.HasSuffix(p, r.segs[last])
	}
	return bytes.Contains(p, r.segs[last])
}

// compiler turns normalised patterns into rules.
type compiler struct {
	rules []rule
}

// add compiles a normalised pattern. An empty pattern matches everything
// with priority 0, which never decides anything, so it is dropped; so is a
// pattern that cannot match because it does not start with "/" or "*".
func (c *compiler) add(pattern string, allow bool) {
	if pattern == "" {
		return
	}
	r := rule{prio: int32(min(len(pattern), 1<<31-1)), allow: allow}
	body := pattern
	if body[len(body)-1] == '$' {
		r.anchored = true
		body = body[:len(body)-1]
	}
	lit := make([]byte, 0, len(body))
	start := 0 // start of the current run in lit
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '*':
			if len(r.segs) == 0 || start < len(lit) {
				r.segs = append(r.segs, lit[start:len(lit):len(lit)])
			}
			start = len(lit)
		case c == '%' && i+2 < len(body) && body[i+1] == '2' && (body[i+2] == 'A' || body[i+2] == '4'):
			// %2A and %24: the literal "*" and "$" (normalising upper-cased them).
			if body[i+2] == 'A' {
				lit = append(lit, '*')
			} else {
				lit = append(lit, '$')
			}
			i += 2
		default:
			lit = append(lit, c)
		}
	}
	// The last run, even if empty: after a final "*" it matches anything,
	// and with "$" it is what must end the path.
	r.segs = append(r.segs, lit[start:len(lit):len(lit)])
	if first := r.segs[0]; len(first) > 0 && first[0] != '/' {
		return // a path starts with "/"
	}
	r.bucket = uint8(bucketOf(r.segs[0]))
	c.rules = append(c.rules, r)
}
