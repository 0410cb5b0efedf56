package cluster

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/politecrawl/crawler/frontier"
)

func TestEntryRoundTrip(t *testing.T) {
	e := Entry{
		Found: []frontier.Item{
			item(t, "http://h.test:8080", "/a b?q=1"),
			{URL: frontier.URL{Request: "https://x.test/", Key: "https://x.test/", Origin: "https://x.test"}, Kind: frontier.KindSitemap, Via: frontier.ViaSitemap, InSitemap: true, Attempts: 2, LinkDepth: frontier.NoLinkDepth},
			{URL: frontier.URL{Request: "https://x.test/deep", Key: "https://x.test/deep", Origin: "https://x.test"}, Depth: 4, LinkDepth: 3},
			{URL: frontier.URL{Request: "https://cdn.test/a.css", Key: "https://cdn.test/a.css", Origin: "https://cdn.test"}, Depth: 4, LinkDepth: 5, Requisite: true},
		},
		Done:  []Done{{Key: "https://x.test/", Kind: frontier.KindSitemap}, {Key: "http://h.test:8080/", RevisitAt: time.Unix(1, 2).UTC()}},
		Waits: []HostWait{{Origin: "https://x.test", Until: time.Unix(3, 0).UTC(), Parked: true, Reason: "gone"}},
	}
	b, err := e.encode()
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeEntry(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, e) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, e)
	}
	if strings.Contains(string(b), `"u":"https://x.test/","k"`) {
		t.Errorf("the key is written where it equals the request form: %s", b)
	}
}

func TestDecodeEntryRefuses(t *testing.T) {
	for _, in := range []string{
		``, `{`, `[]`, `{"v":2}`, `{"v":1,"found":[{"u":"http://a.test/","o":"http://b.test"}]}`,
		`{"v":1,"found":[{"u":"http://a.test/"}]}`, `{"v":1,"found":[{"u":"http://a.test","o":"http://a.test"}]}`,
	} {
		if _, err := decodeEntry([]byte(in)); err == nil {
			t.Errorf("decodeEntry(%s) accepted it", in)
		}
	}
	if _, err := decodeEntry(make([]byte, maxEntry+1)); err == nil {
		t.Error("decodeEntry accepted an entry over maxEntry")
	}
}

// FuzzDecodeEntry: whatever the stream holds, decoding does not panic, and
// what it accepts encodes to an entry that decodes the same.
func FuzzDecodeEntry(f *testing.F) {
	f.Add([]byte(`{"v":1,"found":[{"u":"http://a.test/x","o":"http://a.test","d":3}],"done":[{"k":"http://a.test/x","at":5}],"waits":[{"o":"http://a.test","until":7,"parked":true}]}`))
	f.Add([]byte(`{"v":1,"claim":"w1"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntry(b)
		if err != nil {
			return
		}
		again, err := e.encode()
		if err != nil {
			t.Fatal(err)
		}
		e2, err := decodeEntry(again)
		if err != nil {
			t.Fatalf("re-encoded entry refused: %v\n%s", err, again)
		}
		if !reflect.DeepEqual(e, e2) {
			t.Fatalf("round trip changed the entry:\n%+v\n%+v", e, e2)
		}
	})
}
