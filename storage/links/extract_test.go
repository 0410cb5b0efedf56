package links

import (
	"reflect"
	"testing"
)

func TestExtract(t *testing.T) {
	var xs []Extraction
	for _, c := range []struct {
		name, css, attr string
		all             bool
	}{
		{"price", ".price", "", false},
		{"sku", "[data-sku]", "data-sku", false},
		{"tags", "ul.tags li", "", true},
		{"none", "#nothing", "", false},
		{"noattr", ".price", "title", false},
	} {
		x, err := CompileExtraction(c.name, c.css, c.attr, c.all)
		if err != nil {
			t.Fatal(err)
		}
		xs = append(xs, x)
	}
	got := Extract([]byte(`<html><body><span class="price"> 9.99
	 EUR </span><span class=price>1</span><div data-sku="A-1"></div>
	<ul class=tags><li>red</li><li> big </li></ul></body></html>`), "text/html", xs)
	want := map[string]any{"price": "9.99 EUR", "sku": "A-1", "tags": []string{"red", "big"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("extracted %v, want %v", got, want)
	}
	if _, err := CompileExtraction("x", "div[", "", false); err == nil {
		t.Error("a bad selector compiled")
	}
}
