package render

// pageScript runs in every document before its own scripts: it records
// the URLs given to history.pushState and replaceState (a router's
// routes), the time the document last changed, and hides service workers,
// which could answer a page's requests from a cache of their own.
const pageScript = `(() => {
	if (window.__politecrawl) return;
	const routes = [];
	let changed = Date.now();
	window.__politecrawl = {
		routes: () => routes.slice(0, 1000),
		quietMS: () => Date.now() - changed,
	};
	for (const name of ['pushState', 'replaceState']) {
		const orig = history[name];
		history[name] = function (state, title, url) {
			if (url !== undefined && url !== null) {
				try { routes.push(new URL(String(url), location.href).href); } catch (e) {}
			}
			changed = Date.now();
			return orig.apply(this, arguments);
		};
	}
	new MutationObserver(() => { changed = Date.now(); })
		.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
	try { Object.defineProperty(navigator, 'serviceWorker', {get: () => undefined}); } catch (e) {}
})();`

// quietExpr is how long, in ms, the document has been unchanged.
const quietExpr = `window.__politecrawl ? window.__politecrawl.quietMS() : 0`

// resultExpr is the rendered document and the routes its script took.
const resultExpr = `JSON.stringify({html: document.documentElement ? document.documentElement.outerHTML : "",
	routes: window.__politecrawl ? window.__politecrawl.routes() : []})`
