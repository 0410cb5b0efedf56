package main

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWACZOfACrawl crawls a small site into WARC files and packages them:
// the package holds the WARC stored, the index, and the site's two pages.
func TestWACZOfACrawl(t *testing.T) {
	srv := smallSite(t)
	dir := t.TempDir()
	inv, warcDir, out := filepath.Join(dir, "urls.jsonl"), filepath.Join(dir, "warc"), filepath.Join(dir, "site.wacz")
	cfg := filepath.Join(dir, "crawl.yaml")
	yaml := fmt.Sprintf("seeds: [%s/]\nstate_dir: %s\npoliteness: {delay: 0s}\noutput: {urls: %s, warc: %s}\n",
		srv.URL, filepath.Join(dir, "state"), inv, warcDir)
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCmd(t, "", "crawl", "-c", cfg); code != 0 {
		t.Fatalf("crawl: exit %d; stderr:\n%s", code, stderr)
	}
	if _, stderr, code := runCmd(t, "", "wacz", "--warc", warcDir, "--urls", inv, "--out", out); code != 0 {
		t.Fatalf("wacz: exit %d; stderr:\n%s", code, stderr)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	files := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		files[f.Name] = string(b)
		if strings.HasPrefix(f.Name, "archive/") && f.Method != zip.Store {
			t.Errorf("%s is compressed in the zip", f.Name)
		}
	}
	pages := files["pages/pages.jsonl"]
	for _, want := range []string{`"url":"` + srv.URL + `/"`, `"url":"` + srv.URL + `/a"`} {
		if !strings.Contains(pages, want) {
			t.Errorf("pages.jsonl lacks %s:\n%s", want, pages)
		}
	}
	if strings.Contains(pages, "/gone") || !strings.Contains(files["indexes/index.cdxj"], "/robots.txt") {
		t.Errorf("pages:\n%s\nindex:\n%s", pages, files["indexes/index.cdxj"])
	}
	for _, name := range []string{"datapackage.json", "datapackage-digest.json"} {
		if files[name] == "" {
			t.Errorf("no %s", name)
		}
	}

	for _, args := range [][]string{{"wacz"}, {"wacz", "--warc", warcDir}, {"wacz", "--out", out}, {"wacz", "--warc", warcDir, "--out", out, "extra"}} {
		if _, _, code := runCmd(t, "", args...); code != 2 {
			t.Errorf("%s: exit %d, want 2", strings.Join(args, " "), code)
		}
	}
	if _, _, code := runCmd(t, "", "wacz", "--warc", t.TempDir(), "--out", filepath.Join(dir, "empty.wacz")); code != 1 {
		t.Errorf("wacz of a directory without WARC files: exit %d, want 1", code)
	}
}

// The first signal stops crawler wacz, which may copy gigabytes: nothing
// is written, the temporary file is gone, and the exit status is 1 (the
// signal was taken by the command and ignored: the package was written
// whole).
func TestWACZStopsOnSignal(t *testing.T) {
	srv := smallSite(t)
	dir := t.TempDir()
	warcDir, out := filepath.Join(dir, "warc"), filepath.Join(dir, "site.wacz")
	if _, stderr, code := runCmd(t, "", "crawl", "--state-dir", filepath.Join(dir, "state"), "--delay", "0", "--warc", warcDir, srv.URL+"/"); code != 0 {
		t.Fatalf("crawl: exit %d; stderr:\n%s", code, stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the signal came
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"wacz", "--warc", warcDir, "--out", out}, strings.NewReader(""), &stdout, &stderr)
	if code := exitCode(err, &stderr); code != 1 || !strings.Contains(stderr.String(), "stopped by signal") {
		t.Errorf("exit %d, stderr %q; want 1, stopped by signal", code, stderr.String())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 { // state, warc
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("%s holds %q after the signal; want no package, no temporary file", dir, names)
	}
}
