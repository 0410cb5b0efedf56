package robots

import (
	"fmt"
	"strings"
	"testing"
)

const smallRobots = `User-agent: *
Disallow: /private/
Allow: /private/press/

User-agent: ExampleBot
Disallow: /drafts/
Disallow: /*.pdf$
Crawl-delay: 0.5

Sitemap: https://example.com/sitemap.xml
`

// bigRobots builds a robots.txt of MaxSize bytes: many groups of prefix,
// wildcard and anchored rules, as a site that generates its file might.
func bigRobots() []byte {
	var b strings.Builder
	for grp := 0; b.Len() < MaxSize; grp++ {
		if grp%10 == 0 {
			b.WriteString("User-agent: *\n")
		} else {
			fmt.Fprintf(&b, "User-agent: Bot%c%c\n", 'A'+grp%26, 'a'+grp/26%26)
		}
		for i := 0; i < 200 && b.Len() < MaxSize; i++ {
			switch i % 5 {
			case 0:
				fmt.Fprintf(&b, "Disallow: /section-%d/item-%d/\n", grp, i)
			case 1:
				fmt.Fprintf(&b, "Disallow: /*?ref=%d&*\n", grp*1000+i)
			case 2:
				fmt.Fprintf(&b, "Allow: /section-%d/item-%d/public\n", grp, i)
			case 3:
				fmt.Fprintf(&b, "Disallow: /%c%d/*.php$\n", 'a'+i%26, grp)
			default:
				fmt.Fprintf(&b, "Disallow: /tag/%d-%d # generated\n", grp, i)
			}
		}
		b.WriteString("\n")
	}
	return []byte(b.String()[:MaxSize])
}

var benchURLs = []string{
	"https://www.example.com/",
	"https://www.example.com/shoes/sale/item-91507.html",
	"https://www.example.com/search?q=red+shoes&sort=price&page=2",
	"https://www.example.com/account/orders/12345",
	"https://www.example.com/files/doc-12.pdf",
	"https://www.example.com/section-7/item-105/public/index.html",
	"https://www.example.com/tag/3-44?ref=3044&x=1",
	"https://www.example.com/books/123/reviews?page=4&utm_source=feed",
	"https://www.example.com/caf%C3%A9/men%c3%bc?x=%41",
	"https://www.example.com/drafts/2026/plan.html",
}

func benchBodies(b *testing.B) map[string][]byte {
	realistic, err := testdataFile("realistic.robots")
	if err != nil {
		b.Fatal(err)
	}
	return map[string][]byte{"small": []byte(smallRobots), "realistic300": realistic, "500KiB": bigRobots()}
}

func BenchmarkParse(b *testing.B) {
	bodies := benchBodies(b)
	for _, name := range []string{"small", "realistic300", "500KiB"} {
		body := bodies[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				Parse(body).ForAgent("ExampleBot/1.0")
			}
		})
	}
}

// BenchmarkAllowed measures one verdict, for a mix of URLs; the group is
// chosen once, as a crawler does.
func BenchmarkAllowed(b *testing.B) {
	bodies := benchBodies(b)
	for _, name := range []string{"small", "realistic300", "500KiB"} {
		for _, agent := range []string{"ExampleBot", "OtherBot"} {
			g := Parse(bodies[name]).ForAgent(agent)
			b.Run(name+"/"+agent, func(b *testing.B) {
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					g.Allowed(benchURLs[i%len(benchURLs)])
					i++
				}
			})
		}
	}
}

// BenchmarkAllowedHostile measures a pattern built to make backtracking
// matchers explode, against a 10 KB path.
func BenchmarkAllowedHostile(b *testing.B) {
	g := Parse([]byte("user-agent: *\ndisallow: /*a*a*a*a*a*a*a*a*a*a*a*b\n")).ForAgent("x")
	url := "/" + strings.Repeat("a", 10000)
	b.ReportAllocs()
	for b.Loop() {
		g.Allowed(url)
	}
}
