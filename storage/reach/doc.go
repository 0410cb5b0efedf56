// Package reach is how a crawl's requests get to sites that an ops team
// must reach through its network: a proxy (an explicit one, or the
// environment's HTTPS_PROXY, HTTP_PROXY and NO_PROXY as curl and wget read
// them), certificates trusted besides the system's (a PEM file), and HTTP
// basic auth for some origins, each password read from a file of its own.
// The README's "Reaching sites" section is the contract.
//
// New reads the files once; a Reach is immutable and safe for concurrent
// use. Its Proxy and TLSConfig go into an http.Transport, and Authorize
// into each request as it is built. The checks New makes are exported
// one by one (ParseProxy, LoadCAs, Origin, ReadPassword), so that a
// config's validation can name each fault by its own key.
//
// # Deviations
//
// The environment's proxy is read as curl reads it, not as Go's
// http.ProxyFromEnvironment does: a loopback host is proxied unless
// NO_PROXY lists it, a NO_PROXY entry may be a CIDR range, and a proxy
// given as host:port means http://host:port.
//
// # Caveats
//
// Credentials go to their origin only (scheme, host and port, the default
// port left out): each hop of a redirect is a request of its own, built
// and authorized afresh, so they never follow one to another origin. A
// caller that keeps requests (a WARC writer) must drop their Authorization
// header itself. The files are read when New is called: a password or
// certificate changed later takes effect with the next New.
package reach
