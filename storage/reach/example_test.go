package reach_test

import (
	"fmt"
	"net/http"

	"github.com/politecrawl/crawler/storage/reach"
)

// A crawl behind a corporate proxy, with the sites NO_PROXY lists reached
// directly.
func ExampleNew() {
	env := map[string]string{"HTTPS_PROXY": "proxy.corp.example:3128", "NO_PROXY": ".corp.example"}
	r, err := reach.New(reach.Config{}, func(k string) string { return env[k] })
	if err != nil {
		fmt.Println(err)
		return
	}
	transport := &http.Transport{Proxy: r.Proxy, TLSClientConfig: r.TLSConfig()}
	for _, u := range []string{"https://example.org/", "https://wiki.corp.example/"} {
		req, _ := http.NewRequest("GET", u, nil)
		r.Authorize(req)
		p, _ := transport.Proxy(req)
		fmt.Println(u, "via", p)
	}
	// Output:
	// https://example.org/ via http://proxy.corp.example:3128
	// https://wiki.corp.example/ via <nil>
}
