package render

// pageScript runs in every document before its own scripts: it records
// the URLs given to history.pushState and replaceState (a router's
// routes), the time the document last changed, and the timers the page
// set that are still to fire, and hides service workers, which could
// answer a page's requests from a cache of their own.
//
// A timer counts (the page is not quiet until it fired or was cleared)
// when it is set in the page's first timerWindow ms, outside a timer's
// own callback, for at most timerMost ms: the "link added after a
// delay". A timer set again from its callback (a carousel, a poll) and
// setInterval do not count, so that they cannot keep a page from
// settling.
const pageScript = `(() => {
	if (window.__politecrawl) return;
	const timerWindow = 5000, timerMost = 5000;
	const routes = [];
	const born = Date.now();
	let changed = born;
	const pending = new Set();
	let inTimer = false;
	const setT = window.setTimeout, clearT = window.clearTimeout;
	window.setTimeout = function (fn, ms, ...args) {
		if (typeof fn !== 'function') return setT.apply(this, arguments);
		const counts = !inTimer && (Number(ms) || 0) <= timerMost && Date.now() - born <= timerWindow;
		const id = setT.call(this, function () {
			pending.delete(id);
			const outer = inTimer;
			inTimer = true;
			try { return fn.apply(this, args); } finally { inTimer = outer; }
		}, ms);
		if (counts) pending.add(id);
		return id;
	};
	window.clearTimeout = function (id) { pending.delete(id); return clearT.apply(this, arguments); };
	window.__politecrawl = {
		routes: () => routes.slice(0, 1000),
		quietMS: () => pending.size > 0 ? 0 : Date.now() - changed,
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
