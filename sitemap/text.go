package sitemap

import "bytes"

// parseText reads a plain text sitemap: one absolute URL per line, blank
// lines skipped, white space around a URL trimmed. A last line without a
// newline is a URL only when the file ended there: one cut by the byte
// cap or by a failing input may have lost the rest of it.
func (p *parser) parseText() {
	p.res.Kind = KindText
	for !p.done {
		i := bytes.IndexByte(p.buf[p.r:p.w], '\n')
		if i < 0 {
			p.loc.add(p.buf[p.r:p.w], maxLocRaw)
			p.r = p.w
			if !p.fill() {
				if p.inErr == nil && !p.capr.over {
					p.textLine()
				}
				p.ended("")
			}
			continue
		}
		p.loc.add(p.buf[p.r:p.r+i], maxLocRaw)
		p.r += i + 1
		p.textLine()
	}
}

// textLine handles the line gathered in p.loc.
func (p *parser) textLine() {
	line := trimSpace(p.loc.b)
	if len(line) == 0 && !p.loc.over {
		p.loc.reset()
		return
	}
	if bytes.IndexByte(line, 0) >= 0 {
		p.res.Cut = true
		p.done = true
		p.warnf(RuleFormat, "", 0, "binary data at byte %d: not a text sitemap", p.offset())
		return
	}
	p.loc.b = line
	p.endEntry()
	p.loc.reset()
}
