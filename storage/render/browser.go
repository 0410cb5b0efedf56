package render

import (
	"errors"
	"fmt"
	"os/exec"
)

// browserNames are the commands FindBrowser looks for in PATH, in order.
var browserNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"}

// ErrNoBrowser is FindBrowser's error when no browser can be run.
var ErrNoBrowser = errors.New("no Chromium or Chrome found")

// FindBrowser returns the path of the browser to run: path itself when it
// is not empty (a file that can be executed, or a command in PATH), or the
// first of chromium, chromium-browser, google-chrome, google-chrome-stable
// and chrome found in PATH. Its error wraps ErrNoBrowser.
func FindBrowser(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("%w: %s: %v", ErrNoBrowser, path, err)
		}
		return p, nil
	}
	for _, name := range browserNames {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w in PATH (looked for %v)", ErrNoBrowser, browserNames)
}
