package mirror_test

import (
	"fmt"
	"log"
	"net/url"
	"os"
	"strings"

	"github.com/politecrawl/crawler/storage/mirror"
)

func ExamplePath() {
	for _, raw := range []string{
		"https://example.com/docs/",
		"https://example.com/docs/intro",
		"http://127.0.0.1:8001/search?q=go&page=2",
		"https://example.com/%2e%2e/%2e%2e/etc/passwd",
	} {
		u, _ := url.Parse(raw)
		fmt.Println(mirror.Path(u, "text/html"))
	}
	// Output:
	// example.com/docs/index.html
	// example.com/docs/intro.html
	// 127.0.0.1:8001/search@q=go&page=2.html
	// example.com/%2E%2E/%2E%2E/etc/passwd.html
}

func ExampleRelativeRef() {
	fmt.Println(mirror.RelativeRef("example.com/docs/intro.html", "example.com/search@q=go.html"))
	// Output: ../search@q=go.html
}

func ExampleMirror() {
	dir, _ := os.MkdirTemp("", "mirror")
	defer os.RemoveAll(dir)
	m, err := mirror.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	u, _ := url.Parse("https://example.com/about")
	rel, err := m.Write(u, "text/html", strings.NewReader("<h1>About</h1>"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rel)
	// Output: example.com/about.html
}
