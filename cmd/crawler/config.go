package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v3"

	"github.com/politecrawl/crawler"
)

// The config of crawl and discover is built in one order: DefaultConfig, then
// the YAML file named by -c, then each flag given on the command line, then
// the seed URLs given as arguments, then crawler.Config.Validate. Every
// problem found on the way is reported at once, each naming where it came
// from (file and line, flag, or command line) and the key at fault; an
// invalid config is a usage error, exit code 2.
//
// The YAML is read as a node tree and walked against crawler.Config's yaml
// tags rather than decoded in one go, so that every unknown key, duplicate
// key and bad value is reported with its line, not just the first. Its rules:
//   - An empty file (or one holding only comments) means all defaults.
//   - A key with no value (`seeds:` or `delay: ~`) keeps its default.
//   - Durations are Go durations ("500ms", "2s", "24h"); a bare number is
//     refused except 0, since 5 could mean seconds or milliseconds.
//   - Sizes are crawler.ByteSize: bytes (10485760) or with a unit (10MiB).
//   - Booleans are true or false; integers are whole numbers; lists are YAML
//     sequences, even of one item.
//   - Anchors and aliases work; merge keys (<<) do not.

// maxConfigSize bounds the config file read, so that -c /dev/zero fails
// rather than eating memory.
const maxConfigSize = 4 << 20

// maxProblemsShown bounds the problems printed for one config.
const maxProblemsShown = 50

// problem is one thing wrong with the config, and where it came from.
type problem struct {
	file string // the config file; "" when the value did not come from one
	line int    // the line in file; 0 when unknown
	from string // the flag ("--delay") or "command line" that set the value
	key  string // the key at fault; "" for the file as a whole
	msg  string
}

func (p problem) String() string {
	var b strings.Builder
	switch {
	case p.from != "":
		b.WriteString(p.from + ": ")
	case p.file != "" && p.line > 0:
		fmt.Fprintf(&b, "%s:%d: ", p.file, p.line)
	case p.file != "":
		b.WriteString(p.file + ": ")
	}
	if p.key != "" {
		b.WriteString(p.key + ": ")
	}
	b.WriteString(p.msg)
	return b.String()
}

// configError turns problems into one usage error (exit code 2), one problem
// per line, those of the file first in the order of their lines.
func configError(probs []problem) error {
	slices.SortStableFunc(probs, func(a, b problem) int {
		return lineOrder(a) - lineOrder(b)
	})
	if len(probs) == 1 {
		return usageErrorf("%s", probs[0])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "invalid config (%d problems):", len(probs))
	for i, p := range probs {
		if i == maxProblemsShown {
			fmt.Fprintf(&b, "\n  and %d more", len(probs)-i)
			break
		}
		b.WriteString("\n  " + p.String())
	}
	return usageErrorf("%s", b.String())
}

// lineOrder sorts problems with a line before the others.
func lineOrder(p problem) int {
	if p.line > 0 && p.from == "" {
		return p.line
	}
	return maxConfigSize // more than any line
}

// loadConfig reads a config file that is meant to be complete on its own:
// DefaultConfig, then the file, then Validate.
func loadConfig(path string) (crawler.Config, error) {
	return buildConfig(path, nil, nil)
}

// buildConfig builds a Config in the order the comment at the top gives.
// flags may be nil, and path empty for no file.
func buildConfig(path string, flags *configFlags, seeds []string) (crawler.Config, error) {
	cfg := crawler.DefaultConfig()
	var (
		lines map[string]int
		probs []problem
	)
	if path != "" {
		data, err := readConfigFile(path)
		if err != nil {
			return crawler.Config{}, usageErrorf("%v", err)
		}
		var usable bool
		cfg, lines, probs, usable = decodeConfig(path, data)
		if !usable {
			return crawler.Config{}, configError(probs)
		}
	}
	from := map[string]string{}
	if flags != nil {
		from = flags.apply(&cfg)
	}
	if len(seeds) > 0 {
		cfg.Seeds = seeds
		from["seeds"] = "command line"
	}
	var ce *crawler.ConfigError
	if err := cfg.Validate(); errors.As(err, &ce) {
		wrong := wrongKeys(probs)
		for _, p := range ce.Problems {
			if wrong.related(p.Key) {
				continue // a value the file got wrong was left at its default
			}
			probs = append(probs, placeProblem(p, path, lines, from))
		}
	} else if err != nil {
		return crawler.Config{}, usageErrorf("%v", err)
	}
	if p := checkWebConfig(cfg.Daemon); p != nil && !wrongKeys(probs).related(p.Key) {
		probs = append(probs, placeProblem(*p, path, lines, from))
	}
	if len(probs) > 0 {
		return crawler.Config{}, configError(probs)
	}
	return cfg, nil
}

// checkWebConfig checks daemon.web_config as the exporter-toolkit reads it
// (its TLS files and users' password hashes included); the command line
// checks it, as the only one to import the toolkit.
func checkWebConfig(dc crawler.DaemonConfig) *crawler.Problem {
	const key = "daemon.web_config"
	switch fi, err := os.Stat(dc.WebConfig); {
	case dc.WebConfig == "":
		return nil
	case dc.Listen == "":
		return &crawler.Problem{Key: key, Message: "protects daemon.listen, which is not set"}
	case err != nil:
		return &crawler.Problem{Key: key, Message: err.Error()}
	case !fi.Mode().IsRegular():
		return &crawler.Problem{Key: key, Message: dc.WebConfig + ": not a regular file"}
	}
	if err := web.Validate(dc.WebConfig); err != nil {
		return &crawler.Problem{Key: key, Message: dc.WebConfig + ": " + err.Error()}
	}
	return nil
}

// placeProblem says where the value a Validate problem is about came from.
func placeProblem(p crawler.Problem, path string, lines map[string]int, from map[string]string) problem {
	for k := p.Key; k != ""; k = parentKey(k) {
		if f, ok := from[k]; ok {
			return problem{from: f, key: p.Key, msg: p.Message}
		}
	}
	q := problem{file: path, key: p.Key, msg: p.Message}
	for k := p.Key; k != "" && q.line == 0; k = parentKey(k) {
		q.line = lines[k]
	}
	return q
}

// parentKey returns the key holding k: scope for scope.include, and
// scope.include for scope.include[2]; "" at the top.
func parentKey(k string) string {
	i := strings.LastIndexAny(k, ".[")
	if i < 0 {
		return ""
	}
	return k[:i]
}

// keySet is the keys the file got wrong, for leaving out what Validate says
// of the same values.
type keySet struct {
	exact  map[string]bool // the keys of the problems
	holder map[string]bool // those keys and every key holding one of them
}

func wrongKeys(probs []problem) keySet {
	s := keySet{exact: map[string]bool{}, holder: map[string]bool{}}
	for _, p := range probs {
		s.exact[p.key] = true
		for k := p.key; k != ""; k = parentKey(k) {
			s.holder[k] = true
		}
	}
	return s
}

// related reports whether k is a wrong key, holds one, or is held by one.
func (s keySet) related(k string) bool {
	if s.holder[k] {
		return true
	}
	for ; k != ""; k = parentKey(k) {
		if s.exact[k] {
			return true
		}
	}
	return false
}

// readConfigFile reads the config file at path, which must be a regular
// file: it is opened without blocking (O_NONBLOCK), so that a named pipe
// or a device at path is refused at once rather than holding a SIGHUP
// reload, and with it the crawl's stop, until something writes to it.
func readConfigFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s), not a config file", path, fileKind(fi.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxConfigSize {
		return nil, fmt.Errorf("%s: larger than %v, not a config file", path, crawler.ByteSize(maxConfigSize))
	}
	return data, nil
}

// fileKind names the kind of a file that is not a regular one.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// decodeConfig reads a YAML config over DefaultConfig. It returns the config,
// the line of each key it set ("scope.include[2]" included), and the
// problems found; usable is false when the file could not be read as a
// mapping at all, so that validating the defaults would only add noise.
func decodeConfig(file string, data []byte) (cfg crawler.Config, lines map[string]int, probs []problem, usable bool) {
	cfg = crawler.DefaultConfig()
	d := &configDecoder{file: file, lines: map[string]int{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return cfg, d.lines, nil, true
		}
		return cfg, d.lines, []problem{d.syntaxProblem(err)}, false
	}
	for { // more documents are refused, bar empty ones (a trailing ---)
		var extra yaml.Node
		err := dec.Decode(&extra)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return cfg, d.lines, []problem{d.syntaxProblem(err)}, false
		}
		if len(extra.Content) > 0 && !isNull(extra.Content[0]) {
			return cfg, d.lines, []problem{{file: file, line: extra.Line, msg: "a second YAML document; a config is one mapping"}}, false
		}
	}
	if len(doc.Content) == 0 {
		return cfg, d.lines, nil, true
	}
	root := resolveAlias(doc.Content[0])
	if root.Kind != yaml.MappingNode && !isNull(root) {
		return cfg, d.lines, []problem{{file: file, line: root.Line, msg: "a config is a mapping of keys, got " + describe(root)}}, false
	}
	d.value(root, reflect.ValueOf(&cfg).Elem(), "")
	return cfg, d.lines, d.probs, true
}

// configDecoder walks a YAML node tree against crawler.Config, setting each
// good value and noting each problem with its line.
type configDecoder struct {
	file  string
	lines map[string]int
	probs []problem
}

func (d *configDecoder) addf(line int, key, format string, a ...any) {
	d.probs = append(d.probs, problem{file: d.file, line: line, key: key, msg: fmt.Sprintf(format, a...)})
}

// syntaxProblem turns the YAML library's "yaml: line 3: did not find
// expected key" into a problem at line 3. Some of its errors carry no line.
func (d *configDecoder) syntaxProblem(err error) problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	p := problem{file: d.file}
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				p.line, msg = n, text
			}
		}
	}
	p.msg = "invalid YAML: " + msg
	switch {
	case strings.Contains(msg, "block sequence entries are not allowed"):
		// Most often `urls: -`, where a lone - starts a list.
		p.msg += ` (a lone - starts a list item; to mean stdout, quote it: "-")`
	case strings.Contains(msg, "unknown escape character"):
		// Most often a regex in double quotes: "\.pdf$".
		p.msg += ` (double quotes read \ escapes; write a regex in single quotes: '\.pdf$')`
	}
	return p
}

var (
	durationType   = reflect.TypeFor[time.Duration]()
	byteSizeType   = reflect.TypeFor[crawler.ByteSize]()
	requisitesType = reflect.TypeFor[crawler.Requisites]()
)

// value sets v, found at key, from n.
func (d *configDecoder) value(n *yaml.Node, v reflect.Value, key string) {
	n = resolveAlias(n)
	if isNull(n) {
		return // a key with no value keeps its default
	}
	switch {
	case v.Type() == durationType:
		if n.Kind != yaml.ScalarNode {
			d.addf(n.Line, key, "want a duration such as 2s, got %s", describe(n))
		} else if dur, err := parseDuration(n.Value); err != nil {
			d.addf(n.Line, key, "%v", err)
		} else {
			v.SetInt(int64(dur))
		}
	case v.Type() == byteSizeType:
		if n.Kind != yaml.ScalarNode {
			d.addf(n.Line, key, "want a size such as 10MiB, got %s", describe(n))
		} else if size, err := crawler.ParseByteSize(n.Value); err != nil {
			d.addf(n.Line, key, "%v", err)
		} else {
			v.SetInt(int64(size))
		}
	case v.Type() == requisitesType && n.Kind == yaml.ScalarNode:
		// any, same, or one pattern; a list of patterns is read below.
		d.lines[key+"[0]"] = n.Line
		v.Set(reflect.ValueOf(crawler.Requisites{n.Value}))
	case v.Kind() == reflect.Struct:
		d.mapping(n, v, key)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		d.list(n, v, key)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Struct:
		d.structs(n, v, key)
	case v.Kind() == reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.addf(n.Line, key, "want a string, got %s", describe(n))
			return
		}
		v.SetString(n.Value)
	case v.Kind() == reflect.Bool:
		var b bool
		if n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
			d.addf(n.Line, key, "want true or false, got %s", describe(n))
			return
		}
		v.SetBool(b)
	case v.Kind() == reflect.Float64:
		var f float64
		if tag := n.ShortTag(); tag != "!!int" && tag != "!!float" || n.Decode(&f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			d.addf(n.Line, key, "want a number, got %s", describe(n))
			return
		}
		v.SetFloat(f)
	case v.Kind() == reflect.Int:
		var i int
		if n.ShortTag() != "!!int" || n.Decode(&i) != nil {
			d.addf(n.Line, key, "want a whole number, got %s", describe(n))
			return
		}
		v.SetInt(int64(i))
	default:
		// TestConfigTypesDecodable keeps this from happening.
		d.addf(n.Line, key, "cannot be set from YAML (type %s)", v.Type())
	}
}

// mapping sets the fields of struct v from the mapping n.
func (d *configDecoder) mapping(n *yaml.Node, v reflect.Value, key string) {
	if n.Kind != yaml.MappingNode {
		d.addf(n.Line, key, "want a mapping of keys, got %s", describe(n))
		return
	}
	fields := yamlFields(v.Type())
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn := resolveAlias(n.Content[i])
		if kn.Kind != yaml.ScalarNode {
			d.addf(kn.Line, key, "want a key name, got %s", describe(kn))
			continue
		}
		name := kn.Value
		path := joinKey(key, name)
		if first, dup := seen[name]; dup {
			d.addf(kn.Line, path, "duplicate key (first at line %d)", first)
			continue
		}
		seen[name] = kn.Line
		idx, ok := fields[name]
		if !ok {
			d.addf(kn.Line, path, "unknown key%s", suggestKey(v.Type(), key, name))
			continue
		}
		d.lines[path] = kn.Line
		d.value(n.Content[i+1], v.Field(idx), path)
	}
}

// list sets the []string v from the sequence n. A bad item is kept as ""
// so that the indexes Validate names stay those of the file.
func (d *configDecoder) list(n *yaml.Node, v reflect.Value, key string) {
	if n.Kind != yaml.SequenceNode {
		d.addf(n.Line, key, "want a list, got %s", describe(n))
		return
	}
	var out []string
	for i, item := range n.Content {
		item = resolveAlias(item)
		ik := fmt.Sprintf("%s[%d]", key, i)
		d.lines[ik] = item.Line
		if item.Kind != yaml.ScalarNode || isNull(item) {
			d.addf(item.Line, ik, "want a string, got %s", describe(item))
			out = append(out, "")
			continue
		}
		out = append(out, item.Value)
	}
	v.Set(reflect.ValueOf(out)) // nil for an empty list, as in DefaultConfig
}

// structs sets the slice of structs v from the sequence n, each item a
// mapping of the struct's keys (fetch.auth). A bad item is kept, zero where
// it is wrong, so that the indexes Validate names stay those of the file.
func (d *configDecoder) structs(n *yaml.Node, v reflect.Value, key string) {
	if n.Kind != yaml.SequenceNode {
		d.addf(n.Line, key, "want a list, got %s", describe(n))
		return
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		item = resolveAlias(item)
		ik := fmt.Sprintf("%s[%d]", key, i)
		d.lines[ik] = item.Line
		d.mapping(item, out.Index(i), ik)
	}
	if out.Len() == 0 {
		out = reflect.Zero(v.Type()) // nil for an empty list, as in DefaultConfig
	}
	v.Set(out)
}

func resolveAlias(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what a node holds, for messages.
func describe(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "nothing"
	case n.Kind == yaml.ScalarNode:
		v := n.Value
		if len(v) > 60 {
			v = v[:57] + "..."
		}
		return strconv.Quote(v)
	}
	return "an alias"
}

func joinKey(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// yamlFields maps the yaml names of struct type t to field indexes.
func yamlFields(t reflect.Type) map[string]int {
	m := make(map[string]int, t.NumField())
	for i := range t.NumField() {
		if name := yamlName(t.Field(i)); name != "" {
			m[name] = i
		}
	}
	return m
}

func yamlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	return name
}

// configKeys lists every key of crawler.Config in order: sections and the
// keys within them ("scope", "scope.hosts", …).
func configKeys() []string {
	var keys []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		for i := range t.NumField() {
			f := t.Field(i)
			if name := yamlName(f); name != "" {
				keys = append(keys, joinKey(prefix, name))
				if f.Type.Kind() == reflect.Struct {
					walk(f.Type, joinKey(prefix, name))
				}
			}
		}
	}
	walk(reflect.TypeFor[crawler.Config](), "")
	return keys
}

// suggestKey offers a likely meant key for an unknown name in the section
// of type t at key: a sibling a typo or two away, or a key of that name in
// another section ("delay" at the top is politeness.delay).
func suggestKey(t reflect.Type, key, name string) string {
	if len(name) > 64 {
		return ""
	}
	best, bestDist := "", 3
	for sibling := range yamlFields(t) {
		if d := editDistance(strings.ToLower(name), sibling); d < bestDist && d < len(sibling) {
			best, bestDist = joinKey(key, sibling), d
		}
	}
	if best == "" {
		for _, k := range configKeys() {
			if k == name || strings.HasSuffix(k, "."+name) {
				best = k
				break
			}
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// configFlags are the flags of crawl and discover: -c names the YAML file
// and the others override its keys. Only flags given on the command line
// override anything.
type configFlags struct {
	fs     *flag.FlagSet
	path   string
	staged crawler.Config                       // where flag values land
	keys   map[string]string                    // flag name → the key it overrides
	copy   map[string]func(dst *crawler.Config) // flag name → copies its value into dst
}

// addConfigFlags defines on fs -c/-config FILE and the flags that override
// config keys (each flag's help names its key). Call load after parsing.
func addConfigFlags(fs *flag.FlagSet) *configFlags {
	f := &configFlags{fs: fs, staged: crawler.DefaultConfig(), keys: map[string]string{}, copy: map[string]func(*crawler.Config){}}
	fs.StringVar(&f.path, "c", "", "read the YAML config `FILE` (see config.example.yaml)")
	fs.StringVar(&f.path, "config", "", "same as -c `FILE`")
	str := func(_ string, s string) (string, error) { return s, nil }
	list := func(old []string, s string) ([]string, error) { return append(old, s), nil }
	bindFlag(f, "user-agent", "user_agent", "send `string` as the User-Agent; its product token picks the robots.txt group",
		func(c *crawler.Config) *string { return &c.UserAgent }, str)
	bindFlag(f, "sitemap", "sitemaps", "read the sitemap or sitemap index at `URL` (repeatable; replaces the config's list)",
		func(c *crawler.Config) *[]string { return &c.Sitemaps }, list)
	bindFlag(f, "state-dir", "state_dir", "keep the crawl state in `directory`, to resume from",
		func(c *crawler.Config) *string { return &c.StateDir }, str)
	bindFlag(f, "max-depth", "scope.max_depth", "follow at most `n` link hops from a seed; 0 = unlimited",
		func(c *crawler.Config) *int { return &c.Scope.MaxDepth }, parseIntFlag)
	bindFlag(f, "max-pages", "scope.max_pages", "fetch at most `n` pages; 0 = unlimited",
		func(c *crawler.Config) *int { return &c.Scope.MaxPages }, parseIntFlag)
	bindFlag(f, "host", "scope.hosts", "fetch from the origin or host[:port] `H` (repeatable; replaces the config's list)",
		func(c *crawler.Config) *[]string { return &c.Scope.Hosts }, list)
	bindFlag(f, "include", "scope.include", "follow only URLs matching the `regexp` (repeatable; replaces the config's list)",
		func(c *crawler.Config) *[]string { return &c.Scope.Include }, list)
	bindFlag(f, "exclude", "scope.exclude", "skip URLs matching the `regexp` (repeatable; replaces the config's list)",
		func(c *crawler.Config) *[]string { return &c.Scope.Exclude }, list)
	bindFlag(f, "check-external", "scope.check_external", "ask each link to a host out of scope once whether it works (HEAD, or GET), following nothing there",
		func(c *crawler.Config) *bool { return &c.Scope.CheckExternal }, parseBoolFlag)
	bindFlag(f, "delay", "politeness.delay", "leave at least `duration` between two requests to one host",
		func(c *crawler.Config) *time.Duration { return &c.Politeness.Delay }, parseDurationFlag)
	bindFlag(f, "max-per-host", "politeness.max_per_host", "keep at most `n` requests in flight to one host",
		func(c *crawler.Config) *int { return &c.Politeness.MaxPerHost }, parseIntFlag)
	bindFlag(f, "workers", "fetch.workers", "keep at most `n` requests in flight in all",
		func(c *crawler.Config) *int { return &c.Fetch.Workers }, parseIntFlag)
	bindFlag(f, "timeout", "fetch.timeout", "give one request at most `duration`",
		func(c *crawler.Config) *time.Duration { return &c.Fetch.Timeout }, parseDurationFlag)
	bindFlag(f, "max-body", "fetch.max_body", "read at most `size` of a body (bytes or 10MiB)",
		func(c *crawler.Config) *crawler.ByteSize { return &c.Fetch.MaxBody },
		func(_ crawler.ByteSize, s string) (crawler.ByteSize, error) { return crawler.ParseByteSize(s) })
	bindFlag(f, "max-redirects", "fetch.max_redirects", "follow at most `n` redirect hops from one URL",
		func(c *crawler.Config) *int { return &c.Fetch.MaxRedirects }, parseIntFlag)
	bindFlag(f, "retries", "fetch.retries", "retry a 5xx answer or network error `n` times",
		func(c *crawler.Config) *int { return &c.Fetch.Retries }, parseIntFlag)
	bindFlag(f, "out", "output.urls", "write the JSON Lines inventory of URLs to `FILE` (- = stdout)",
		func(c *crawler.Config) *string { return &c.Output.URLs }, str)
	bindFlag(f, "urls", "output.urls", "same as -out `FILE`",
		func(c *crawler.Config) *string { return &c.Output.URLs }, str)
	bindFlag(f, "links", "output.links", "write the JSON Lines link graph, a line per link found, to `FILE` (- = stdout)",
		func(c *crawler.Config) *string { return &c.Output.Links }, str)
	bindFlag(f, "mirror", "output.mirror_dir", "write a browsable mirror of the pages under `directory`",
		func(c *crawler.Config) *string { return &c.Output.MirrorDir }, str)
	bindFlag(f, "mirror-links", "output.mirror_links", "`mode` of links in mirrored pages: keep, or relative to browse offline",
		func(c *crawler.Config) *string { return &c.Output.MirrorLinks }, str)
	bindFlag(f, "warc", "output.warc", "write WARC files into `directory`",
		func(c *crawler.Config) *string { return &c.Output.WARC }, str)
	bindFlag(f, "render", "render.enabled", "render HTML pages in headless Chromium and follow the links of the rendered page too",
		func(c *crawler.Config) *bool { return &c.Render.Enabled }, parseBoolFlag)
	bindFlag(f, "daemon", "daemon.enabled", "run until stopped, re-crawling on schedule",
		func(c *crawler.Config) *bool { return &c.Daemon.Enabled }, parseBoolFlag)
	bindFlag(f, "recrawl", "daemon.recrawl", "revisit a URL `duration` after its last visit",
		func(c *crawler.Config) *time.Duration { return &c.Daemon.Recrawl }, parseDurationFlag)
	bindFlag(f, "listen", "daemon.listen", "serve /metrics, /healthz and /hosts on `host:port`",
		func(c *crawler.Config) *string { return &c.Daemon.Listen }, str)
	bindFlag(f, "log-format", "log.format", "log in `format` text or json",
		func(c *crawler.Config) *string { return &c.Log.Format }, str)
	bindFlag(f, "log-level", "log.level", "log messages of at least `level`: debug, info, warn or error",
		func(c *crawler.Config) *string { return &c.Log.Level }, str)
	return f
}

// bindFlag defines the flag name overriding key, whose value parse reads
// (given the value so far, for lists) into the field of f.staged that field
// picks.
func bindFlag[T any](f *configFlags, name, key, usage string, field func(*crawler.Config) *T, parse func(old T, s string) (T, error)) {
	f.fs.Var(&flagValue[T]{p: field(&f.staged), parse: parse}, name, usage+" (overrides "+key+")")
	f.keys[name] = key
	f.copy[name] = func(dst *crawler.Config) { *field(dst) = *field(&f.staged) }
}

// flagValue is a flag.Value over one field of a Config.
type flagValue[T any] struct {
	p     *T
	parse func(old T, s string) (T, error)
}

func (v *flagValue[T]) Set(s string) error {
	x, err := v.parse(*v.p, s)
	if err != nil {
		return err
	}
	*v.p = x
	return nil
}

func (v *flagValue[T]) String() string {
	var x T // the zero value, which flag.PrintDefaults compares a default with
	if v != nil && v.p != nil {
		x = *v.p
	}
	if list, ok := any(x).([]string); ok {
		return strings.Join(list, ",")
	}
	return fmt.Sprint(x)
}

// IsBoolFlag lets a bool flag be given without a value (--daemon).
func (v *flagValue[T]) IsBoolFlag() bool {
	_, ok := any(v.p).(*bool)
	return ok
}

func parseIntFlag(_ int, s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, errors.New("want a whole number")
	}
	return n, nil
}

func parseDurationFlag(_ time.Duration, s string) (time.Duration, error) {
	return parseDuration(s)
}

// parseDuration is time.ParseDuration with messages for the config: a bare
// number other than 0 is refused with a hint, since it could mean seconds or
// milliseconds.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err == nil {
		return d, nil
	}
	if s != "" && strings.Trim(s, "0123456789.+-") == "" {
		return 0, fmt.Errorf("missing unit in duration %q (write %ss or %sms)", s, s, s)
	}
	return 0, errors.New(strings.TrimPrefix(err.Error(), "time: "))
}

func parseBoolFlag(_ bool, s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, errors.New("want true or false")
	}
	return b, nil
}

// apply copies the value of each flag given on the command line into cfg,
// and returns, for each key so set, the flag that set it ("--delay").
func (f *configFlags) apply(cfg *crawler.Config) map[string]string {
	from := map[string]string{}
	f.fs.Visit(func(fl *flag.Flag) {
		if cp, ok := f.copy[fl.Name]; ok {
			cp(cfg)
			from[f.keys[fl.Name]] = "--" + fl.Name
		}
	})
	return from
}

// load builds the Config: DefaultConfig, the -c file if one was given, the
// flags given, then seeds (the URL arguments, which replace the file's seeds
// when there are any), then Validate. Call it after fs is parsed. Its error
// is a usage error (exit code 2) listing every problem.
func (f *configFlags) load(seeds []string) (crawler.Config, error) {
	return buildConfig(f.path, f, seeds)
}
