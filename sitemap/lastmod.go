package sitemap

import (
	"strings"
	"time"
)

// parseW3C parses a W3C Datetime (https://www.w3.org/TR/NOTE-datetime), the
// format of <lastmod>: YYYY, YYYY-MM, YYYY-MM-DD, YYYY-MM-DDThh:mmTZD,
// YYYY-MM-DDThh:mm:ssTZD and YYYY-MM-DDThh:mm:ss.sTZD (any number of
// fraction digits), where TZD is Z, +hh:mm or -hh:mm. It also takes what
// generators commonly write instead: a lower-case t or z, a space for the
// T, +hhmm or +hh, and no TZD at all (read as UTC). The result is in UTC.
func parseW3C(s []byte) (time.Time, bool) {
	n := len(s)
	if n < 4 {
		return time.Time{}, false
	}
	year, ok := num(s[0:4])
	if !ok {
		return time.Time{}, false
	}
	month, day := 1, 1
	if n > 4 {
		if n < 7 || s[4] != '-' {
			return time.Time{}, false
		}
		if month, ok = num(s[5:7]); !ok || month < 1 || month > 12 {
			return time.Time{}, false
		}
	}
	if n > 7 {
		if n < 10 || s[7] != '-' {
			return time.Time{}, false
		}
		if day, ok = num(s[8:10]); !ok || day < 1 || day > daysIn(year, month) {
			return time.Time{}, false
		}
	}
	if n <= 10 {
		return time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC), true
	}
	if c := s[10]; c != 'T' && c != 't' && c != ' ' {
		return time.Time{}, false
	}
	t := s[11:]
	if len(t) < 5 || t[2] != ':' {
		return time.Time{}, false
	}
	hour, ok1 := num(t[0:2])
	minute, ok2 := num(t[3:5])
	if !ok1 || !ok2 || hour > 23 || minute > 59 {
		return time.Time{}, false
	}
	t = t[5:]
	sec, nsec := 0, 0
	if len(t) > 0 && t[0] == ':' {
		if len(t) < 3 {
			return time.Time{}, false
		}
		if sec, ok = num(t[1:3]); !ok || sec > 60 {
			return time.Time{}, false
		}
		t = t[3:]
		if len(t) > 0 && (t[0] == '.' || t[0] == ',') {
			i := 1
			for scale := 100_000_000; i < len(t) && '0' <= t[i] && t[i] <= '9'; i++ {
				nsec += int(t[i]-'0') * scale
				scale /= 10
			}
			if i == 1 {
				return time.Time{}, false
			}
			t = t[i:]
		}
	}
	offset, ok := zone(t)
	if !ok {
		return time.Time{}, false
	}
	d := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	return d.Add(-time.Duration(offset) * time.Second), true
}

// zone parses a time zone designator: "", Z, ±hh:mm, ±hhmm or ±hh. It
// returns the offset east of UTC in seconds.
func zone(t []byte) (int, bool) {
	switch {
	case len(t) == 0:
		return 0, true
	case len(t) == 1 && (t[0] == 'Z' || t[0] == 'z'):
		return 0, true
	case t[0] != '+' && t[0] != '-':
		return 0, false
	}
	sign := 1
	if t[0] == '-' {
		sign = -1
	}
	t = t[1:]
	var hh, mm int
	var ok bool
	switch len(t) {
	case 2:
		hh, ok = num(t)
	case 4:
		hh, ok = num(t[:2])
		if ok {
			mm, ok = num(t[2:])
		}
	case 5:
		hh, ok = num(t[:2])
		if ok && t[2] == ':' {
			mm, ok = num(t[3:])
		} else {
			ok = false
		}
	}
	if !ok || hh > 23 || mm > 59 {
		return 0, false
	}
	return sign * (hh*3600 + mm*60), true
}

// num parses a run of decimal digits.
func num(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, len(b) > 0
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// rfc822Layouts are the date forms RSS feeds write in <pubDate> (RFC 822
// with four-digit years, as RSS 2.0 asks, and the usual departures).
var rfc822Layouts = [...]string{
	"Mon, 2 Jan 2006 15:04:05 -0700",
	"Mon, 2 Jan 2006 15:04:05 MST",
	"Mon, 2 Jan 2006 15:04 -0700",
	"Mon, 2 Jan 2006 15:04 MST",
	"2 Jan 2006 15:04:05 -0700",
	"2 Jan 2006 15:04:05 MST",
	"Mon, 2 Jan 06 15:04:05 -0700",
	"Mon, 2 Jan 06 15:04:05 MST",
	"Mon, 2 January 2006 15:04:05 -0700",
	"Mon, 2 January 2006 15:04:05 MST",
}

// rfc822Zones are the zone names RFC 822 defines.
var rfc822Zones = map[string]string{
	"UT": "+0000", "GMT": "+0000", "Z": "+0000",
	"EST": "-0500", "EDT": "-0400", "CST": "-0600", "CDT": "-0500",
	"MST": "-0700", "MDT": "-0600", "PST": "-0800", "PDT": "-0700",
}

// parseFeedDate parses an RSS <pubDate>: an RFC 822 date, or failing that
// a W3C Datetime. Named zones other than RFC 822's are read as UTC. The
// result is in UTC.
func parseFeedDate(s []byte) (time.Time, bool) {
	if t, ok := parseW3C(s); ok {
		return t, true
	}
	str := string(s)
	if i := strings.LastIndexByte(str, ' '); i >= 0 {
		if off, ok := rfc822Zones[strings.ToUpper(str[i+1:])]; ok {
			str = str[:i+1] + off
		}
	}
	for _, layout := range rfc822Layouts {
		if t, err := time.ParseInLocation(layout, str, time.UTC); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
