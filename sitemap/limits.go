package sitemap

// Default caps, as the sitemaps.org protocol sets them and as the
// configuration keys sitemap_limits.max_urls, max_bytes and max_children
// default to.
const (
	DefaultMaxURLs     = 50_000
	DefaultMaxBytes    = 10 << 20 // 10 MiB, 10,485,760 bytes
	DefaultMaxChildren = 1_000
)

// Limits caps what one file may cost. A zero or negative field means its
// default.
type Limits struct {
	// MaxURLs is the number of page entries read from one file; entries
	// beyond it are dropped with a warning and the rest of the file is not
	// read.
	MaxURLs int
	// MaxBytes is the number of uncompressed bytes read from one file; a
	// longer file is cut there with a warning, keeping the entries that
	// ended before the cut.
	MaxBytes int64
	// MaxChildren is the number of sitemaps read from one index; extras are
	// dropped with a warning.
	MaxChildren int
}

// DefaultLimits returns the protocol's caps: 50,000 URLs, 10 MiB and 1,000
// children per file.
func DefaultLimits() Limits {
	return Limits{MaxURLs: DefaultMaxURLs, MaxBytes: DefaultMaxBytes, MaxChildren: DefaultMaxChildren}
}

// withDefaults fills the zero or negative fields of l with the defaults.
func (l Limits) withDefaults() Limits {
	if l.MaxURLs <= 0 {
		l.MaxURLs = DefaultMaxURLs
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxChildren <= 0 {
		l.MaxChildren = DefaultMaxChildren
	}
	return l
}
