// Package cluster shares one crawl among several workers through NATS
// JetStream: hosts are split into partitions, each held by one worker at a
// time under a lease, with what must outlive a worker kept in a stream.
// The design note is to follow.
package cluster
