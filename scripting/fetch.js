// The fetch API over the runtime's native request function (fetch.go): Headers, Response,
// AbortController, AbortSignal and fetch itself, after the WHATWG standard, without streams.
// It runs once per runtime, before the script, and receives the native functions as its
// argument, so they are never reachable from scripts.
(function (native) {
	'use strict';
	const secret = Symbol('jsinformer');
	const hdrs = new WeakMap();
	const sigs = new WeakMap();
	const bodies = new WeakMap();

	function name(n) {
		n = String(n).toLowerCase();
		if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(n)) throw new TypeError('invalid header name: ' + n);
		return n;
	}
	class Headers {
		constructor(init) {
			hdrs.set(this, new Map());
			if (init == null) return;
			if (init instanceof Headers) { init.forEach((v, k) => this.append(k, v)); return; }
			if (Array.isArray(init)) { for (const [k, v] of init) this.append(k, v); return; }
			if (typeof init !== 'object') throw new TypeError('headers must be an object, an array of pairs or a Headers');
			for (const k of Object.keys(init)) this.append(k, init[k]);
		}
		append(k, v) {
			const m = hdrs.get(this), n = name(k), s = String(v);
			m.set(n, m.has(n) ? m.get(n) + ', ' + s : s);
		}
		set(k, v) { hdrs.get(this).set(name(k), String(v)); }
		get(k) { const v = hdrs.get(this).get(name(k)); return v === undefined ? null : v; }
		has(k) { return hdrs.get(this).has(name(k)); }
		delete(k) { hdrs.get(this).delete(name(k)); }
		forEach(fn, thisArg) { for (const [k, v] of this.entries()) fn.call(thisArg, v, k, this); }
		*entries() { yield* [...hdrs.get(this).entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)); }
		*keys() { for (const [k] of this.entries()) yield k; }
		*values() { for (const [, v] of this.entries()) yield v; }
		[Symbol.iterator]() { return this.entries(); }
	}

	class Response {
		constructor(body, init) {
			init = init || {};
			const status = init.status === undefined ? 200 : Number(init.status);
			const inner = init[secret];
			if (!inner && (!Number.isInteger(status) || status < 200 || status > 599)) throw new RangeError('status must be an integer from 200 to 599');
			this.status = status;
			this.statusText = init.statusText === undefined ? '' : String(init.statusText);
			this.ok = status >= 200 && status < 300;
			this.headers = new Headers(init.headers);
			this.url = init.url === undefined ? '' : String(init.url);
			this.redirected = !!init.redirected;
			this.type = 'basic';
			if (body !== null && body !== undefined && typeof body !== 'string') {
				throw new TypeError('a Response body must be a string (use JSON.stringify for objects)');
			}
			bodies.set(this, { text: body == null ? '' : body, tooLarge: inner ? inner.tooLarge : null, used: false });
		}
		get bodyUsed() { return bodies.get(this).used; }
		text() {
			const b = bodies.get(this);
			if (b.used) return Promise.reject(new TypeError('the body of this response was already read'));
			b.used = true;
			if (b.tooLarge) return Promise.reject(new RangeError(b.tooLarge));
			return Promise.resolve(b.text);
		}
		json() { return this.text().then((t) => JSON.parse(t)); }
		clone() {
			const b = bodies.get(this);
			if (b.used) throw new TypeError('the body of this response was already read');
			const r = new Response(b.text, { status: this.status, statusText: this.statusText, headers: this.headers, url: this.url, redirected: this.redirected });
			bodies.get(r).tooLarge = b.tooLarge;
			return r;
		}
		static json(data, init) {
			init = Object.assign({}, init);
			const h = new Headers(init.headers);
			if (!h.has('content-type')) h.set('content-type', 'application/json');
			init.headers = h;
			return new Response(JSON.stringify(data), init);
		}
	}

	function abortError() { const e = new Error('This operation was aborted'); e.name = 'AbortError'; return e; }
	function timeoutError() { const e = new Error('The operation timed out'); e.name = 'TimeoutError'; return e; }

	function signalAbort(s, reason) {
		const st = sigs.get(s);
		if (st.aborted) return;
		st.aborted = true;
		st.reason = reason === undefined ? abortError() : reason;
		for (const fn of st.listeners.slice()) fn.call(s, { type: 'abort', target: s });
		if (typeof s.onabort === 'function') s.onabort.call(s, { type: 'abort', target: s });
	}
	class AbortSignal {
		constructor(key) {
			if (key !== secret) throw new TypeError('Illegal constructor: use new AbortController().signal, AbortSignal.timeout or AbortSignal.abort');
			sigs.set(this, { aborted: false, reason: undefined, listeners: [], deadline: 0 });
			this.onabort = null;
		}
		get aborted() { return sigs.get(this).aborted; }
		get reason() { return sigs.get(this).reason; }
		throwIfAborted() { if (this.aborted) throw this.reason; }
		addEventListener(type, fn) { if (type === 'abort' && typeof fn === 'function') sigs.get(this).listeners.push(fn); }
		removeEventListener(type, fn) {
			const l = sigs.get(this).listeners, i = l.indexOf(fn);
			if (type === 'abort' && i >= 0) l.splice(i, 1);
		}
		static abort(reason) { const s = new AbortSignal(secret); signalAbort(s, reason); return s; }
		static timeout(ms) {
			ms = Number(ms);
			if (!(ms >= 0) || !Number.isFinite(ms)) throw new TypeError('AbortSignal.timeout needs a non-negative number of milliseconds');
			const s = new AbortSignal(secret);
			sigs.get(s).deadline = native.now() + ms;
			return s;
		}
	}
	class AbortController {
		constructor() { this.signal = new AbortSignal(secret); }
		abort(reason) { signalAbort(this.signal, reason); }
	}

	function fetch(input, init) {
		init = init || {};
		if (input instanceof Object && !(input instanceof String) && typeof input.url === 'string' && input.href === undefined) input = input.url;
		const url = String(input instanceof Object && typeof input.href === 'string' ? input.href : input);
		const method = init.method === undefined ? 'GET' : String(init.method).toUpperCase();
		const headers = [...new Headers(init.headers).entries()];
		let body = init.body;
		if (body !== undefined && body !== null && typeof body !== 'string') {
			throw new TypeError('fetch: body must be a string; pass JSON.stringify(value) for an object');
		}
		const signal = init.signal;
		if (signal !== undefined && signal !== null && !sigs.has(signal)) throw new TypeError('fetch: signal must be an AbortSignal');
		if (signal && signal.aborted) return Promise.reject(signal.reason);
		const st = signal ? sigs.get(signal) : null;
		const timeout = st && st.deadline ? Math.max(0, st.deadline - native.now()) : -1;
		const [p, id] = native.start(method, url, headers, body == null ? null : body, timeout);
		let onAbort;
		if (st) {
			onAbort = () => native.abort(id);
			st.listeners.push(onAbort);
		}
		const off = () => { if (st) { const i = st.listeners.indexOf(onAbort); if (i >= 0) st.listeners.splice(i, 1); } };
		return p.then((raw) => {
			off();
			const init = { status: raw.status, statusText: raw.statusText, headers: raw.headers, url: raw.url, redirected: raw.redirected };
			init[secret] = { tooLarge: raw.tooLarge };
			const r = new Response(null, init);
			bodies.get(r).text = raw.body;
			return r;
		}, (e) => {
			off();
			if (st && st.aborted) throw st.reason;
			if (e && e.name === 'TimeoutError' && st) signalAbort(signal, timeoutError());
			throw e;
		});
	}
	return { fetch, Headers, Response, AbortController, AbortSignal };
});
