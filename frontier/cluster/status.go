package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// WorkerStatus is one live worker, as Status sees it.
type WorkerStatus struct {
	Worker     string
	Partitions []int // held, by the claims bucket
	Load       Load  // as last reported
	Seen       time.Time
}

// Overview is the state of a crawl, as `crawler cluster status` shows it.
type Overview struct {
	Name       string
	Partitions int
	Workers    []WorkerStatus
	Unheld     []int // partitions no live worker holds
	Pages      int64 // taken from the pages budget
	Sequence   uint64
	Entries    uint64 // in the stream, not yet folded into snapshots
}

// Status reads the state of the crawl of cfg without joining it. It
// returns an error naming the problem when the server is unreachable,
// lacks JetStream, or has no such crawl.
func Status(ctx context.Context, cfg Config) (Overview, error) {
	if err := cfg.Validate(); err != nil {
		return Overview{}, err
	}
	if !cfg.Enabled() {
		return Overview{}, fmt.Errorf("cluster.nats: no server given")
	}
	c, err := dial(ctx, cfg, "crawler cluster status", false, nil)
	if err != nil {
		return Overview{}, err
	}
	defer c.nc.Close()
	meta, err := c.state.Get(ctx, "crawl")
	if err == nil {
		var cm crawlMeta
		if jerr := json.Unmarshal(meta.Value(), &cm); jerr == nil {
			c.cfg.Partitions = cm.Partitions
		}
	}
	out := Overview{Name: cfg.Name, Partitions: c.cfg.Partitions}
	statuses, err := c.statuses(ctx)
	if err != nil {
		return out, err
	}
	holders, err := c.holders(ctx)
	if err != nil {
		return out, err
	}
	byWorker := map[string][]int{}
	for p := range c.cfg.Partitions {
		if w, ok := holders[p]; ok {
			byWorker[w] = append(byWorker[w], p)
		} else {
			out.Unheld = append(out.Unheld, p)
		}
	}
	for _, s := range statuses {
		out.Workers = append(out.Workers, WorkerStatus{Worker: s.Worker, Partitions: byWorker[s.Worker], Load: s.Load, Seen: s.At})
	}
	if out.Pages, _, err = c.pagesUsed(ctx); err != nil {
		return out, err
	}
	info, err := c.stream.Info(ctx)
	if err != nil {
		return out, fmt.Errorf("cluster: stream: %w", err)
	}
	out.Sequence, out.Entries = info.State.LastSeq, info.State.Msgs
	return out, nil
}

// Write prints s as a table, one line per worker, for a terminal.
func (s Overview) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "crawl %s: %d partitions, %d workers, %d pages taken, %d entries in the stream\n",
		s.Name, s.Partitions, len(s.Workers), s.Pages, s.Entries)
	fmt.Fprintln(tw, "WORKER\tPARTS\tQUEUED\tIN FLIGHT\tDONE\tSEEN\tHOLDS")
	var queued, done int64
	for _, ws := range s.Workers {
		queued += ws.Load.Queued
		done += ws.Load.Done
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\n", ws.Worker, len(ws.Partitions), ws.Load.Queued,
			ws.Load.InFlight, ws.Load.Done, ws.Seen.Format(time.RFC3339), ranges(ws.Partitions))
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t\t%d\n", s.Partitions-len(s.Unheld), queued, done)
	if len(s.Unheld) > 0 {
		fmt.Fprintf(tw, "not held: %s\n", ranges(s.Unheld))
	}
	return tw.Flush()
}

// ranges writes sorted ints as "0-3,7,9-10".
func ranges(ps []int) string {
	ps = slices.Clone(ps)
	slices.Sort(ps)
	var b strings.Builder
	for i := 0; i < len(ps); {
		j := i
		for j+1 < len(ps) && ps[j+1] == ps[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ps[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(ps[j]))
		}
		i = j + 1
	}
	return b.String()
}
