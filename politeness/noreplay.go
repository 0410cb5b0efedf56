package politeness

import "io"

// NoReplay returns an empty request body that net/http cannot replay. Go's
// transport silently sends an idempotent request again when a kept-alive
// connection closes under it, unseen by the gate that counted one request;
// a GET whose Body is NoReplay() is sent once (and, being empty, carries no
// Content-Length or Transfer-Encoding).
func NoReplay() io.ReadCloser { return noReplay{} }

type noReplay struct{}

func (noReplay) Read([]byte) (int, error) { return 0, io.EOF }
func (noReplay) Close() error             { return nil }
