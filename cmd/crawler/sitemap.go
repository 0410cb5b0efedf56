package main

import "context"

// runSitemap is `crawler sitemap`; the sitemap issue replaces this placeholder.
func runSitemap(ctx context.Context, args []string, s stdio) error {
	return usageErrorf("sitemap: not built yet")
}
