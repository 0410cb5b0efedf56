// Package cluster makes several workers one crawl through NATS JetStream,
// as the README's "Several machines" describes: hosts are split into
// partitions, each held by one worker at a time under a lease, so that
// politeness holds across workers; what must outlive a worker is written to
// JetStream before the worker acknowledges it, so that a worker that dies
// loses nothing but its requests in flight.
//
// The package is the cluster's half of the engine's frontier: it knows
// NATS (the client, github.com/nats-io/nats.go, and its jetstream package)
// and frontier's Item, and nothing of fetching. The engine keeps each held
// partition's frontier in bbolt as on one machine and calls this package
// at the points listed under "The engine's part".
//
// # Partitions
//
// Partition(origin, P) is FNV-1a of the origin, mixed by splitmix64's
// finaliser, modulo P (cluster.partitions, 256 by default). A partition is
// the unit of ownership, routing and recovery. P and the lease are written
// to the crawl's state bucket by its first worker; Join refuses a worker
// configured otherwise, naming the key.
//
// # JetStream objects, for a crawl named N
//
//	crawl-N-members  KV, TTL = lease   w.<worker>: status (held, Load, Through, version), heartbeat every lease/4
//	crawl-N-leases   KV, TTL = lease   p.<n>: the claim {worker, nonce}
//	crawl-N-state    KV, no TTL        crawl: {partitions, lease}; pages: the budget used;
//	                                   snap.<n>: the snapshot pointer {seq, object}
//	crawl-N-robots   KV, TTL = 24 h    robots.<hash>: a robots.txt answer a worker shared (ShareRobots)
//	crawl-N-plan     KV, no TTL        p.<n>: the worker a partition was moved to for balance
//	crawl-N          stream            crawl.N.p.<n>.log: the owner's changelog (Append)
//	                                   crawl.N.p.<n>.in:  URLs routed to the partition (Route)
//	crawl-N-snaps    object store      p<n>-<seq>-<claim revision>: partition snapshots
//
// Everything is file storage with one replica; a JetStream cluster with
// replicas works the same way (compare-and-set conflicts come back as code
// 10164 there, which the package handles), but is untested.
//
// # A partition's life
//
// Every quarter lease (the first time an eighth of a lease after Join, so
// that workers started together see each other before they claim) a
// Member's loop renews its claims (Update with the claim's revision, 32 at
// a time), drops those whose window closed,
// heartbeats, lists the live workers (membership keys not yet expired,
// itself included) and runs rendezvous (highest random weight) hashing
// over them: each partition belongs to the worker of highest score, so a
// join moves about P/N partitions, all to the newcomer, and a leave moves
// only the leaver's; except a partition moved for balance, which belongs
// to the worker the plan bucket names while it is live. For each
// partition:
//
//   - Free and ours: claim it with Create (compare-and-set on "no key"),
//     then fence it (below), then report Gained. The engine restores the
//     snapshot (Restore), replays the stream from it (Replay) and crawls.
//   - Held by us and ours: renew. Each successful renewal sets the window
//     in which requests may start (Hold.Until, MayStart) to the renewal's
//     send time + lease − lease/5.
//   - Held by us and another's: Handover. MayStart is false at once; the
//     engine settles the requests in flight, writes them, and calls
//     Release; a release mark is written to the log, the claim is deleted
//     with its revision, and the new owner claims it at its next turn. An
//     engine that does not release within a lease loses the partition
//     anyway, without the mark.
//   - Renewal refused because another process claimed it, or the window
//     closed: Lost. (A renewal refused because this process's own earlier
//     renewal landed, its reply lost, carries on; a claim dropped when the
//     window closed that the server still keeps is taken up again at the
//     next turn, fenced anew, and reported Gained.)
//
// Then the balance (balance.go): the engine reports the work left in each
// partition it holds (ReportWeights: its queued URLs times each host's
// interval), published with the status. The busiest worker by those
// weights, when the idlest is more than a fifth of the mean behind, moves
// partitions to it, the heaviest of its own at most half the gap each, so
// the receiver never ends busier than the giver, up to 16 a turn: it
// writes each to the plan bucket, then hands it over. It judges again once
// its receivers report holding them, or after a lease. Only the busiest
// moves, and only what closes the gap; a worker whose weights are a
// heartbeat stale may misjudge for a turn, and the next undoes no more
// than that turn did.
//
// Close deletes the member's membership, then its claims with their
// revisions, so that the others take its partitions at their next turn
// rather than after a lease.
//
// # No two workers start requests for one host at once
//
// A worker's window ends at send + lease − margin by its own monotonic
// clock, where send is when it sent the last write of the claim that the
// server accepted. The server stored that write after it was sent and
// keeps it a lease by its clock (the bucket's max age); a successor's
// Create succeeds only once the key is gone; and the successor's window
// opens after its Create and fence returned. So the old window closes
// before the new one opens provided the worker's clock does not run 20%
// (margin/lease) slower than the server's over one lease, and
// the server's wall clock does not jump forward (JetStream ages messages by
// their wall-clock timestamps: a step of more than the margin could expire
// claims early; run the server with a slewing NTP client). No clocks are
// compared across machines. The reply's arrival time is not used: a reply
// delayed by a long pause would otherwise extend a window the server has
// already started counting down. TestPausedMemberLosesPartitions checks
// the two windows against each other.
//
// Windows do not overlap, but requests outlive their start. So that
// politeness (max_per_host, the delay) holds across a change of owner, an
// owner that gives a partition up with nothing in flight (Release, Close)
// writes a release mark last in its log, after the host waits still to
// come (HostWait entries for hosts whose next request is not yet due). A
// successor whose fence finds that mark, or an empty log, reports Gained
// with Clean set and may start at once; otherwise the previous owner died
// or hung, its last requests started before its window closed, at least
// lease/5 before the new one opened, and may still be in flight: the
// engine waits its fetch timeout before starting requests in that
// partition, and a host delay longer than that plus lease/5 must have
// been written as a HostWait before the request that needs it started.
// What a superseded owner writes afterwards is what fencing is for.
//
// # Fencing
//
// Each partition's log subject is written only with JetStream's expected
// last subject sequence: a new owner first writes a claim mark expecting
// the sequence it read, and every Append expects the sequence of this
// owner's last write. So once the mark is written, a write of any earlier
// owner fails on the server (ErrFenced; the member reports the partition
// Lost), and a write that got in before the mark is in the log the new
// owner replays: nothing a superseded worker writes can land after its
// successor has read the log. The snapshot pointer is fenced the same way:
// the new owner rewrites it with its revision as it claims, and Snapshot
// updates it with the revision this owner last wrote. Routed URLs go to a
// subject of their own, so that their writers, who hold nothing, do not
// move the log's sequence.
//
// An Append whose reply is lost is sent again with the same Nats-Msg-Id,
// one of its own per call; since the server checks the expected sequence
// before its duplicate window, the retry fails on the sequence if the first
// write landed, and the log's last entry carrying the call's id tells that
// case from a successor's write. The connection has no reconnect buffer, so
// a write made while it is down fails at once instead of landing later,
// after the caller gave up on it.
//
// # What is durable where
//
//   - On the worker, in bbolt: the frontier of each held partition. It is a
//     cache of snapshot + stream: a worker that loses its disk loses nothing.
//   - In the log: what the owner learned that a successor needs, written
//     before the owner acknowledges it locally: URLs found for its own
//     partition, URLs done (with a revisit time), host waits that outlast a
//     lease (Retry-After, parking, long Crawl-delay). An Entry holds any
//     number of each, so one settled request is one write.
//   - In .in: URLs found by any worker for a partition, published by Route.
//   - In the object store and the pointer: a partition's state as of a
//     stream sequence. Compact folds the last snapshot and the entries
//     since (each URL once, found or done; each host's last wait) into the
//     next, which ReadSnapshot reads. Snapshot puts the object, moves the
//     pointer (fenced),
//     writes a mark so the log keeps an entry of this owner's, purges the
//     partition's subjects up to the sequence, and deletes the previous
//     object. A snapshot whose pointer update failed leaves its object
//     behind (deleted only when a later owner's snapshot names it: never);
//     such orphans need a superseded owner and are small.
//   - In the state bucket: the pages budget and the crawl's settings.
//
// # Routing
//
// Route groups URLs by partition, removes repeats, sorts them, cuts them
// into messages that fit the server's max_payload, and names each message
// by a hash of the crawl, partition and keys (Nats-Msg-Id). The stream
// stores a message named as one within its duplicate window (10 minutes)
// once; beyond it, the owner's frontier.Add, which ignores URLs seen, makes
// adding exactly-once. The owner reads .in and .log together, in stream
// order, with Replay.
//
// # Global limits and the end of a crawl
//
// Take takes pages from the scope.max_pages budget: one KV key updated with
// compare-and-set, so the workers together never exceed it. A member takes
// a batch at a time (16, or a tenth of what is left when less) and hands
// pages out of it, a write per batch rather than per page; GiveBack
// returns what it did not hand out, when the engine is idle and on Close.
// A member holding such pages says so in its status (Lent), and another
// that finds the budget spent meanwhile gets ErrPagesLent, not 0: the
// budget may come back. Pages taken by a worker that dies before fetching
// them are not returned (a crawl with deaths may stop a batch a death
// short).
//
// Each worker Reports its Load (queued, in flight, unrouted, done) whenever
// it changes, and says after each Replay how far it has applied each
// partition (Applied, with the Tenure of the Gained that began its hold).
// Its status carries Through, the least of those over the partitions it
// holds: 0 for a partition gained and not yet replayed, or replayed into
// the state of an earlier hold, so a Gained still queued in the engine
// keeps the crawl going. The crawl is over (Quiescent) when, in two looks a
// gap apart that see the same stream sequence and the same status
// versions, every live worker is idle with Through at the stream's last
// sequence, and every partition is claimed by a live worker whose status
// lists it. A URL routed and not yet read moves the sequence past
// Through; a worker that becomes busy, gains a partition or applies more
// moves its version. Workers must therefore Replay their partitions now
// and then while idle, and must not
// Snapshot a partition unless entries were applied to it since its last
// snapshot: a snapshot writes a mark, which moves the sequence, which
// would otherwise make every worker replay and snapshot again for ever.
//
// # Failures
//
//   - A worker killed (kill -9, a lost machine): its membership and claims
//     expire a lease after its last renewal; the workers rendezvous hashing
//     now names claim them at their next turn (within a quarter lease),
//     fence, restore and replay. Its requests in flight wrote no Done and
//     are made again; URLs it found were written before it acknowledged
//     them.
//   - A worker paused (GC, SIGSTOP, a VM migration) or cut off from the
//     server: its windows close before the server lets its claims go; after
//     the pause its loop reports them Lost, and any write it still tries is
//     fenced. If the server still held a claim, the process takes it up
//     again at once (a nonce in the claim tells it from a namesake).
//   - A worker seen dead by others while it still renews (a slow
//     heartbeat): the others cannot claim what it holds; only balance
//     suffers until its next heartbeat.
//   - Two workers with one id: claims stay exclusive (compare-and-set, and
//     the nonce), but they share a status and a share of the partitions;
//     Join warns.
//   - The server restarts: file storage keeps everything; clients reconnect
//     for ever; claims that were not renewed meanwhile expire and are
//     claimed again. While the server is away no window is renewed, so the
//     crawl stops starting requests within a lease: correct, not available.
//   - The server unreachable or without JetStream at Join or Status: an
//     error naming cluster.nats (ErrNoJetStream for the latter), with any
//     password in it masked (user:xxxxx@). An endpoint that is not a NATS
//     server and sends over 1 MiB without a newline is refused then,
//     rather than read until the connect times out. The client's own
//     reports (a slow consumer) go to the worker's log.
//
// # Scale, on paper
//
// Leases cost P/(lease/4) writes a second for the whole crawl (256 claims,
// 15 s: 68/s) plus a heartbeat per worker per quarter lease: nothing. Each
// turn lists the members with a watcher (a consumer created and deleted):
// fine to a few hundred workers; beyond, a long-lived watch would replace
// it. Appends to one partition are serialised, one round trip each: at
// 1 ms that is 1,000 writes a second per partition, far above what polite
// hosts allow, but at 50 ms with hundreds of busy hosts in a partition the
// engine must put several settled requests in one Entry. One stream takes
// every write of the crawl: a JetStream stream sustains tens of thousands
// of small messages a second on one node, so a crawl of about 10,000 pages
// a second (each page a log entry and a few routed batches) is where one
// stream would saturate; the subjects are per partition, so the stream can
// be split by partition range without changing the protocol. The duplicate
// window keeps every message id of the last 10 minutes in server memory:
// at 1,000 routed messages a second, about 60 MB. A snapshot is the
// partition's frontier: at 100M URLs over 256 partitions about 40 MB each.
// Replay with nothing new costs two reads (the stream's info, the
// partition's last entry); with something new it also makes and deletes an
// ordered consumer: right for recovery and for polling a few times a
// second, but a busy worker would rather keep one consumer; see below.
//
// Measured (BenchmarkAppend, BenchmarkRoute; a local server with file
// storage, client and server sharing two cores): an append of a settled
// request with 20 links takes 190 µs, about 5,000 a second on one
// partition, no more across 64 partitions on those two cores; routing a
// page's links to 50 partitions takes 1.5 ms (published together, acks
// awaited together; 8 ms one after another).
//
// # Where this departs from the sketch of issue #15
//
//   - Fencing is the server's expected last subject sequence on the
//     partition's log, after a claim mark by the new owner, rather than the
//     claim's revision in a header for readers to check: a stale write is
//     refused, not stored and filtered. Routed URLs have a subject of their
//     own so that their writers do not move that sequence.
//   - The last snapshot is found through a pointer key, fenced by its
//     revision, rather than by reading the stream: restoring is one read,
//     and a superseded owner cannot point at, purge for, or delete a
//     snapshot its successor relies on.
//   - Claims use the bucket's TTL, not per-key TTLs (which need the
//     bucket's LimitMarkerTTL and server 2.11): every claim has the same
//     lease.
//   - Handover waits for the engine's Release (at most a lease), so that
//     requests in flight are written by their owner rather than redone.
//   - The end of the crawl also asks how far each worker has applied each
//     of its partitions' entries, per hold, so that a URL routed to a
//     worker that has not read it yet, or a partition it has gained and not
//     yet recovered, keeps the crawl going even if the worker says it is
//     idle. (A first version took one Through from the engine's report,
//     and the simulation found it ending a crawl early: the engine
//     reported before it had seen a Gained still in its queue.)
//
// # The engine's part
//
// The engine (the module's root package, shared.go) keeps one frontier
// for every partition it holds, and held before, and hands out only the
// hosts of partitions it may start requests for. It: on Gained, Restores
// (ReadSnapshot) and Replays into the frontier, and after an unclean one
// waits its fetch timeout; as it takes a slot of a host for a request,
// checks MayStart; before frontier.Done, SetHostWait and Park, Appends the same
// facts (a done URL with the links found for its own partition, in one
// Entry; links for other partitions through Route), and a HostWait before
// starting a request whose host's interval is longer than fetch.timeout +
// lease/5; on Handover, lets the requests in flight settle, Appends the
// waits still to come, and Releases; on Lost, stops handing the partition's
// hosts out and treats ErrFenced as "the new owner redoes it". It polls
// Inbound a few times a second and Replays only the partitions routed to
// since, telling Applied; Compacts a partition whose new entries outnumber
// its last snapshot's URLs; shares the robots.txt answers it gets
// (ShareRobots), which a worker whose host's robots.txt redirects to
// another worker's host waits for, having asked that worker for it
// (WantRobots: the holder may have no URL of that host); Takes a page as
// each is requested when max_pages is set (the member hands them out of a
// batch it took, and GiveBack returns what is left when the worker is
// idle); Reports its Load, and when idle asks Quiescent; and Closes on the
// way out, after settling. Retries are not logged: a successor starts a
// URL's attempts again. A long-lived consumer of a busy worker's partitions
// could replace polling.
package cluster
