package crawler

import (
	"fmt"
	"slices"
	"sync"

	"github.com/politecrawl/crawler/frontier"
	"github.com/politecrawl/crawler/storage"
)

// A redirect's inventory record names the end of its whole chain:
// final_url is the chain's last URL and redirect_chain every hop after the
// URL, in order (README, "Outputs"). Hops are fetched as URLs of their own,
// politely and in their turn, so the end is not known when a redirect's
// answer is. Its record waits instead for the URL its chain reached last,
// held by chains (in memory, and in the state, committed with the
// redirect's Done so that a kill loses none), and is written once that
// URL's visit ends the chain: when it answers anything but a redirect
// followed, or is refused, or its redirect leads to a URL whose chain is
// known already from page records (a loop, or a URL fetched before).

// chains holds the records of redirects whose chain has not ended.
type chains struct {
	store *storage.Chains
	pages *storage.Pages
	hops  func() int // fetch.max_redirects: no walk goes much further
	mu    sync.Mutex
	// waiting holds, by the key of the URL their chain reached last, the
	// records that wait for it: the truth while the crawl runs, which the
	// store mirrors.
	waiting map[string][]storage.Record
	// ended holds, by key, where the visits that ended this run lead:
	// their redirect's next hop, or "" for none. A chain walks through it
	// where page records are silent: a visit settled whose page record is
	// not yet committed, and one that keeps no page record (refused by
	// robots.txt or scope, no answer, an external link checked). An entry
	// goes once its page record is committed; those of visits without one
	// stay, up to maxEnded (past that, such a chain ends when the run's
	// end writes what waits).
	ended map[string]string
}

// maxEnded bounds chains.ended.
const maxEnded = 100_000

func newChains(st *storage.State, hops func() int) (*chains, error) {
	waiting, err := st.Chains.All()
	if err != nil {
		return nil, err
	}
	return &chains{store: st.Chains, pages: st.Pages, hops: hops, waiting: waiting, ended: map[string]string{}}, nil
}

// settle is what the end of l's visit, with record rec, does to redirect
// chains. target is the redirect's next hop when it is followed. It
// returns the records to write now (rec among them unless it waits for its
// own chain to end) and the change to the state to commit with l's Done,
// after which the caller calls committed. It changes waiting at once: the
// writes and the commit that follow either succeed, or fail and stop the
// crawl, which then writes nothing of waiting until a new run reads it
// back from the store.
func (ch *chains) settle(l *frontier.Lease, rec storage.Record, target *frontier.Item) ([]storage.Record, storage.Hook) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	next := ""
	switch {
	case target != nil:
		next = target.Request
	case redirectAnswer(rec.Status) && rec.FinalURL != "" && rec.FinalURL != rec.URL:
		next = rec.FinalURL
	}
	if len(ch.ended) >= maxEnded {
		clear(ch.ended)
	}
	ch.ended[l.Key] = next
	held, wasHeld := ch.waiting[l.Key]
	delete(ch.waiting, l.Key)
	if !wasHeld && next == "" {
		return []storage.Record{rec}, nil // the common case: no chain at all
	}
	group := append(held, rec)
	var hops []string
	waitFor := ""
	switch {
	case target != nil:
		hops, waitFor = ch.walk(l.Key, target.Request)
	case next != "":
		hops = []string{next} // not followed: the chain ends at it
	}
	for i := range group {
		extend(&group[i], hops)
	}
	var hooks []storage.Hook
	if wasHeld {
		hooks = append(hooks, ch.sync(l.Key))
	}
	if waitFor == "" {
		return group, storage.Hooks(hooks...)
	}
	ch.waiting[waitFor] = append(ch.waiting[waitFor], group...)
	return nil, storage.Hooks(append(hooks, ch.sync(waitFor))...)
}

// committed tells chains that the Done of the URL of key committed: its
// page record, if it keeps one, now says where it leads.
func (ch *chains) committed(key string, page bool) {
	if !page {
		return
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	delete(ch.ended, key)
}

// sync returns a hook that stores what waits for key now, at commit time,
// so that two commits touching one key store the last state whatever
// their order.
func (ch *chains) sync(key string) storage.Hook {
	return ch.store.SetHook(key, func() []storage.Record {
		ch.mu.Lock()
		defer ch.mu.Unlock()
		return slices.Clone(ch.waiting[key])
	})
}

// walk follows a chain from raw, the next hop of the URL of key from, as
// far as this run's visits and page records know it. It returns the hops,
// and the key of the last one when nothing says where it leads yet (its
// visit is to come), or "" when the chain ends: at a URL answered
// otherwise than by a redirect, or kept no page record, at a URL it passed
// already (a loop, whose repeated URL is the last hop), or at a URL that
// is not valid. ch.mu is held.
func (ch *chains) walk(from, raw string) (hops []string, waitFor string) {
	passed := map[string]bool{from: true}
	for range ch.hops() + 2 {
		hops = append(hops, raw)
		u, err := frontier.Canonicalize(raw, 0)
		if err != nil || passed[u.Key] {
			return hops, ""
		}
		passed[u.Key] = true
		if next, ok := ch.ended[u.Key]; ok {
			if next == "" {
				return hops, ""
			}
			raw = next
			continue
		}
		p, ok, err := ch.pages.Get(u.Key)
		switch {
		case err != nil:
			return hops, ""
		case !ok:
			return hops, u.Key
		case !redirectAnswer(p.Status) || p.FinalURL == "" || p.FinalURL == p.URL:
			return hops, ""
		}
		raw = p.FinalURL
	}
	return hops, ""
}

// extend adds hops to the chain of r, stopping after the first URL its
// path has passed already (a loop, said in its error), and makes the
// chain's last URL its final URL.
func extend(r *storage.Record, hops []string) {
	if r.Error == "redirect loop" {
		return // its chain ended where it came back
	}
	passed := map[string]bool{keyOf(r.URL): true}
	for _, h := range r.RedirectChain {
		passed[keyOf(h)] = true
	}
	for _, h := range hops {
		r.RedirectChain = append(r.RedirectChain, h)
		k := keyOf(h)
		if passed[k] {
			if r.Error == "" {
				r.Error = "redirect loop"
			}
			break
		}
		passed[k] = true
	}
	if n := len(r.RedirectChain); n > 0 {
		r.FinalURL = r.RedirectChain[n-1]
	}
}

// keyOf is the canonical key of raw, or raw itself when it has none.
func keyOf(raw string) string {
	u, err := frontier.Canonicalize(raw, 0)
	if err != nil {
		return raw
	}
	return u.Key
}

// redirectAnswer reports whether a page's status makes answer follow its
// Location.
func redirectAnswer(status int) bool { return status >= 300 && status < 400 && status != 304 }

// flush writes every record still waiting, its chain followed as far as
// it is known: at the end of a run, so that an audit of a crawl stopped
// early has them. When the crawl is over (ended) they are forgotten;
// otherwise they go on waiting, and a resumed run writes them again once
// their chain ends.
func (ch *chains) flush(ended bool, write func(storage.Record) error) error {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	for _, recs := range ch.waiting {
		last := recs[0].URL
		if n := len(recs[0].RedirectChain); n > 0 {
			last = recs[0].RedirectChain[n-1]
		}
		hops, _ := ch.walk("", last)
		for _, r := range recs {
			extend(&r, hops[1:])
			if err := write(r); err != nil {
				return err
			}
		}
	}
	if !ended {
		return nil
	}
	if err := ch.store.Clear(); err != nil {
		return fmt.Errorf("forget redirect chains: %w", err)
	}
	clear(ch.waiting)
	return nil
}
