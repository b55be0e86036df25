// Fetching a model into the wasm heap: its files (web/model_files.js lists them: config.json,
// tokenizer.json, the weights in one file or in shards), their sizes first (HEAD, or a one-byte
// ranged GET) so that web/model_memory.js can judge whether they fit, then the bytes with one
// progress for them all, streamed straight into one buffer the C++ side allocates, and every file
// kept in Cache Storage so the next visit starts at once. Also the file picker and drag-and-drop
// of a local file. The C++ side (src/platform/web_model_source.cpp) owns the
// state; this file only does the browser's part and reports back through Module._attnlab_fetch_*.
//
// Every operation carries an id from the C++ side. A cancel (or a newer operation) makes the id
// stale there, so late callbacks of an abandoned operation are ignored.
//
// [SECTION] Reporting to C++
// [SECTION] Errors in words
// [SECTION] Will it fit?
// [SECTION] The cache
// [SECTION] Streaming into the heap
// [SECTION] A link's download, started before the app is up
// [SECTION] The operations C++ asks for
// [SECTION] Keeping a loaded model in Cache Storage, from the heap
// [SECTION] The file picker
// [SECTION] Drag and drop anywhere on the page
// [SECTION] What the page calls (window.attnlabModelFetch)
"use strict";
(function () {
  const CACHE = "attnlab-models";
  const MB = 1024 * 1024;
  const hasCacheApi = typeof caches !== "undefined";

  let current = null;  // { id, controller, reader }: the operation in flight

  // [SECTION] Reporting to C++ ------------------------------------------------------------------
  const M = () => window.Module;
  // Deferred: a callback may run inside a frame (a synchronous failure), whose end would
  // swallow the request; the UI must get a frame after it.
  function redraw() { setTimeout(() => M()._attnlab_request_redraw(), 0); }
  function probed(id, total, cached) { M()._attnlab_fetch_probed(id, total, cached ? 1 : 0); redraw(); }
  function progress(id, done, total) { M()._attnlab_fetch_progress(id, done, total); }
  function failed(id, message) { M().ccall("attnlab_fetch_failed", null, ["number", "string"], [id, message]); redraw(); }
  // The copy kept for the next visit: 0 none, 1 being saved (`bytes` so far), 2 complete.
  const COPY_NONE = 0, COPY_SAVING = 1, COPY_KEPT = 2;
  function cacheCopy(id, state, bytes) { M()._attnlab_fetch_cache_copy(id, state, bytes); redraw(); }
  function notice(id, message) { M().ccall("attnlab_fetch_notice", null, ["number", "string"], [id, message]); redraw(); }
  // `files`: [{ name, kind ("weights", "config", "tokenizer", "tokenizer_config", "index"), offset, size }]
  // inside the buffer of `size` bytes.
  function finished(id, size, files, source) {
    try { performance.mark("attnlab-bytes-handed"); } catch (e) { /* for the page-load benchmark only */ }
    M().ccall("attnlab_fetch_done", null, ["number", "number", "string", "string"], [id, size, JSON.stringify({ files }), source]);
    redraw();
  }
  function downloadingFrom(id, url) { M().ccall("attnlab_fetch_host", null, ["number", "string"], [id, F.host(url)]); }

  // [SECTION] Errors in words ---------------------------------------------------------------------
  // Thrown when the C++ side has moved on (cancel, newer operation): stop quietly.
  class Stale extends Error {}
  class OutOfMemory extends Error {}

  const F = window.attnlabModelFiles;
  const { announcedSize, host } = F;
  const { mb } = window.attnlabModelMemory;

  function readable(error, url, total) {
    if (error instanceof F.Refusal) return error.message;
    if (error instanceof OutOfMemory || error instanceof RangeError)
      return `Not enough memory for a ${total > 0 ? mb(total) + " MB model" : "model of this size"} in this tab; ` +
             "the page keeps the model it has. Close other tabs or reload the page, or try a smaller checkpoint.";
    if (error && error.name === "AbortError") return "Cancelled.";
    if (error instanceof TypeError)
      return `Could not reach ${host(url)}: the server may not allow cross-origin downloads (CORS), ` +
             "or you are offline.";
    return `Loading ${url} failed: ${error && error.message ? error.message : String(error)}`;
  }

  function begin(id) {
    stopCurrent();  // an early download stays: this may be the operation that takes it over
    current = { id, controller: new AbortController(), reader: null, ptr: 0, capacity: 0, total: -1 };
    return current;
  }

  function stopCurrent() {
    if (!current) return;
    current.controller.abort();
    if (current.reader) current.reader.cancel().catch(() => {});
    current = null;
  }

  function cancel() {
    dropEarly();
    stopCurrent();
  }

  // [SECTION] Will it fit? ------------------------------------------------------------------------
  // web/model_memory.js judges; a tight fit is said as a notice.
  // Said before the download: in the question (probe) or as the download begins (a one-click load).
  // `held`: bytes of this model already in the heap (what the early download landed), which count
  // as room: without them a 2.4 GB model that had landed whole was said not to fit.
  function warnIfTight(id, url, bytes, held = 0) {
    const v = window.attnlabModelMemory.verdict(url, bytes, held);
    if (v && v.sentence) notice(id, v.sentence);
  }

  // [SECTION] The cache ---------------------------------------------------------------------------
  // Cache Storage's first answer in a fresh profile took 1.2 s here, and download() asks it before
  // its first request: a link's model (prefetch) opens it as the page loads, for download() to reuse.
  let opened = null;  // caches.open's promise; null again after the cache is deleted
  function openCache() {
    if (!hasCacheApi) return Promise.resolve(null);
    if (!opened) opened = caches.open(CACHE).catch((e) => { opened = null; throw e; });
    return opened;
  }

  async function cachedResponse(url) {
    try {
      const cache = await openCache();
      return cache ? (await cache.match(url)) || null : null;
    } catch (e) {
      return null;  // no cache (private mode, storage off): behave as if empty
    }
  }

  // The bytes our cache holds, as its entries announce them (-1: no Cache Storage in this page).
  async function cacheBytes() {
    if (!hasCacheApi) return -1;
    let total = 0;
    try {
      if (!(await caches.has(CACHE))) return 0;
      const cache = await openCache();
      for (const request of await cache.keys()) {
        const response = await cache.match(request);
        const n = response ? Number(response.headers.get("content-length")) : 0;
        if (Number.isFinite(n)) total += n;
      }
    } catch (e) { total = 0; }
    return total;
  }

  // A download or cache write that the page's end cut off leaves no entry, and nothing else would
  // tell the next visit why it downloads again: a mark in localStorage, from the download's start
  // until the copy is complete, does.
  const savingKey = (url) => "attnlab-cache-saving " + url;
  let leaving = false;  // a write the page's end aborts must keep its mark
  addEventListener("pagehide", () => { leaving = true; });
  addEventListener("pageshow", () => { leaving = false; });
  function markSaving(url, on) {
    if (!on && leaving) return;
    try { if (on) localStorage.setItem(savingKey(url), new Date().toISOString()); else localStorage.removeItem(savingKey(url)); }
    catch (e) { /* no localStorage: no explanation, nothing else lost */ }
  }
  function wasCutOff(url) {
    try { return localStorage.getItem(savingKey(url)) !== null; } catch (e) { return false; }
  }
  // And a mark once the copy is complete, read synchronously at the page's start: asking Cache
  // Storage itself took up to 1.8 s in a fresh profile, which an early download would wait for.
  const keptKey = (url) => "attnlab-cache-kept " + (url && absolute(url) || url);
  function markKept(url, on) {
    try { if (on) localStorage.setItem(keptKey(url), new Date().toISOString()); else localStorage.removeItem(keptKey(url)); }
    catch (e) { /* no localStorage: downloads start once the app asks, as without the mark */ }
  }
  function wasKept(url) {
    try { return localStorage.getItem(keptKey(url)) !== null; } catch (e) { return false; }
  }
  // The marks of the weights files whose address starts with `prefix` ("" for every one).
  function keptMarks(prefix) {
    try {
      return Object.keys(localStorage).filter((key) => key.startsWith(keptKey(prefix)));
    } catch (e) { return []; }  // no localStorage: as without the marks
  }
  // Whether any weights file under `base` (a repository's or folder's files) was kept.
  const keptUnder = (base) => keptMarks(base).length > 0;
  function forgetKept() {
    try { for (const key of keptMarks("")) localStorage.removeItem(key); } catch (e) { /* nothing to forget */ }
  }

  async function reportCacheBytes() {
    M()._attnlab_fetch_cache_bytes(await cacheBytes());
    redraw();
  }

  // [SECTION] Streaming into the heap ---------------------------------------------------------------
  // One C++ buffer holds every file of the model, one after another: reserved up front at the sum
  // of their sizes when known, grown by doubling otherwise. Module.HEAPU8 and the buffer's address
  // are re-read after every reserve (the heap's growth replaces one, realloc the other).
  function reserve(op, need) {
    if (need <= op.capacity) return;
    const capacity = op.capacity > 0 ? Math.max(op.capacity * 2, need) : need;
    const ptr = M()._attnlab_fetch_reserve(op.id, capacity) >>> 0;  // an address past 2 GB comes back as a negative i32
    if (op !== current) throw new Stale();
    if (!ptr) { if (op.reader) op.reader.cancel().catch(() => {}); throw new OutOfMemory(); }
    op.ptr = ptr;
    op.capacity = capacity;
  }

  // Reads a body into the buffer at `offset`, after the `already` bytes of it that are there,
  // reporting progress over all the files (`before` bytes of them done already). Returns the
  // body's byte count.
  async function streamIntoHeap(op, reader, offset, before, already = 0) {
    op.reader = reader;
    let done = already, lastReport = 0;
    for (;;) {
      const { value, done: end } = await reader.read();
      if (op !== current) throw new Stale();
      if (end) break;
      reserve(op, offset + done + value.length);
      M().HEAPU8.set(value, op.ptr + offset + done);
      done += value.length;
      const now = performance.now();
      if (now - lastReport > 50) { progress(op.id, before + done, op.total); lastReport = now; }
    }
    progress(op.id, before + done, op.total);
    return done;
  }

  // A safetensors file has its JSON header at byte 8. Anything else (an HTML error page served
  // with 200) must not stay in the cache, or every later visit would load it again.
  function looksLikeSafetensors(op, file) {
    return file.size >= 9 && M().HEAPU8[op.ptr + file.offset + 8] === 0x7b;  // '{'
  }

  // Cache Storage's copy of each of a model's files (a Promise of a Response, or of null): the
  // usual names are all asked at once, before anything is written there. Its operations queue
  // behind each other: asked one by one, between the texts' writes, they took 1.3-2.0 s in a
  // fresh profile before the weights were taken over.
  function keptCopies(model, useCache) {
    if (!useCache) return () => Promise.resolve(null);
    const names = ["config.json", "tokenizer.json", "tokenizer_config.json"];
    if (model.kind !== "file") names.push("model.safetensors.index.json", model.weights);  // a file's was opened first
    const asked = new Map(names.map((n) => [model.base + n, cachedResponse(model.base + n)]));
    return (url) => asked.get(url) ?? cachedResponse(url);
  }

  // A GET of a small file of the model, from Cache Storage when it is there (and kept there once
  // fetched); the site's own built-in files skip it (fetchFresh).
  async function getText(url, signal, useCache, kept) {
    const early = useCache ? await takeEarlyText(url) : null;  // asked for as the page loaded: not kept then
    const cached = early ? null : await kept(url);
    if (cached) return cached;
    const response = early ?? (useCache ? await fetch(url, { signal }) : await fetchFresh(url, signal));
    if (response.ok && useCache) {
      const copy = response.clone();  // kept in the background: the listing goes on meanwhile
      openCache().then((cache) => cache && cache.put(url, copy)).catch(() => { /* not cached: fine */ });
    }
    return response;
  }

  // The size of a weights file: { ok, size, cached, response }. The early download's answer, when
  // it is this file's, gives it without a request of its own.
  async function weightsSize(url, signal, kept) {
    const [cached, early] = await Promise.all([kept(url), Early.head(absolute(url))]);
    if (cached) return { ok: true, size: announcedSize(cached), cached: true, response: cached };
    if (early) return { ok: early.ok, size: early.ok ? announcedSize(early) : -1, cached: false, response: early };
    const { response, size } = await F.sizeOf(url, signal);
    return { ok: response.ok, size, cached: false, response };
  }

  // config.json's model_type (and every field), checked by the engine itself before any weights
  // are downloaded: a Refusal with the sentence it refuses it with.
  function refuseConfig(op, model, texts) {
    if (op !== current) throw new Stale();
    const config = texts.find((t) => t.kind === "config");
    if (!config) return;
    const where = model.kind === "file" ? config.url : `${model.name}/config.json`;
    const why = M().ccall("attnlab_config_problem", "string", ["string", "string"], [config.text, where]);
    if (why) throw new F.Refusal(why);
  }

  // [SECTION] A link's download, started before the app is up -------------------------------------------
  // web/early_download.js runs it; this decides which address it may start: a weights file's (the
  // link's own, or a repository's or folder's model.safetensors), over http(s), and not
  // marked as kept in Cache Storage (download() reads that copy; a copy without the mark, kept by
  // an older version of the page, is found by download(), which then drops the early download).
  const Early = window.attnlabEarlyDownload;
  function absolute(url) { try { return new URL(url, location.href).href; } catch (e) { return null; } }

  function prefetch(url) {
    // A repository or a folder may be sharded; most small models are one model.safetensors, which
    // starts early (a sharded one answers 404, and download() lists its shards as it would anyway).
    const model = url ? F.resolve(url) : null;  // "" would resolve to the page itself
    if (model) openCache().catch(() => {});  // for download(), which asks it first (the cache section)
    const href = model ? absolute(model.base + model.weights) : null;
    if (!href || !/^https?:/.test(href) || (model.kind === "file" ? wasKept(href) : keptUnder(model.base))) return;
    Early.start(href);
    if (model.kind !== "file") Early.whenOpen(() => prefetchTexts(model));  // not twice across the service worker's reload
  }
  const dropEarly = () => { Early.drop(); earlyTexts.clear(); };

  // A repository's or folder's texts, asked for beside its weights as the page loads: after the
  // app's first frame, listing them held the weights back 0.1-0.4 s on the 2-core machine (the
  // requests, and Cache Storage asked first). Each answer is taken once (takeEarlyText), by
  // listTexts's GET of that address; Cache Storage keeps it then as any other.
  const earlyTexts = new Map();  // absolute address -> Promise of a Response, or of null (the request failed)
  function prefetchTexts(model) {
    for (const name of ["config.json", "tokenizer.json", "tokenizer_config.json"]) {
      const href = absolute(model.base + name);
      earlyTexts.set(href, fetch(href, { priority: "low" }).catch(() => null));
    }
  }
  function takeEarlyText(url) {
    const href = absolute(url), answer = earlyTexts.get(href);
    earlyTexts.delete(href);
    return answer ?? Promise.resolve(null);
  }
  const claimEarly = (url) => Early.claim(absolute(url));

  // [SECTION] The operations C++ asks for -------------------------------------------------------------
  // The model's files and their sizes (texts fetched, weights asked for their size), and the
  // engine's verdict on config.json, before any weights are downloaded.
  async function listModel(op, model, useCache) {
    const signal = op.controller.signal, kept = keptCopies(model, useCache);
    const list = await F.listFiles(model, { get: (u) => getText(u, signal, useCache, kept), size: (u) => weightsSize(u, signal, kept),
                                            has: async (u) => (await kept(u)) !== null, bare: !useCache, checkTexts: (texts) => refuseConfig(op, model, texts) });
    if (op !== current) throw new Stale();
    return list;
  }
  const sum = (weights) => (weights.every((w) => w.size >= 0) ? weights.reduce((a, w) => a + w.size, 0) : -1);

  async function probe(id, address) {
    const op = begin(id);
    const model = F.resolve(address);
    if (!model || Early.url() !== absolute(model.base + model.weights)) dropEarly();
    if (!model || (model.kind !== "repo" && !/^https?:/.test(model.base))) {
      failed(id, `"${address}" is not a web address (it should start with https://) nor a Hugging Face model (ORG/NAME).`);
      return;
    }
    downloadingFrom(id, model.base);
    try {
      const list = await listModel(op, model, true);
      const total = sum(list.weights), cached = list.weights.every((w) => w.cached);
      if (op === current) { if (!cached) warnIfTight(id, model.name, total); probed(id, total, cached); }
    } catch (e) {
      if (e instanceof Stale || op !== current) return;
      failed(id, readable(e, model.base + model.weights, -1));
    }
  }

  // The site's own files (the built-in model) skip Cache Storage: the HTTP cache revalidates them
  // ("no-cache"), so a new version of the site is never shadowed by an old copy. Offline, the
  // HTTP cache's copy is taken as it is, when the browser kept one.
  async function fetchFresh(url, signal) {
    try {
      return await fetch(url, { signal, cache: "no-cache" });
    } catch (e) {
      if (e && e.name === "AbortError") throw e;
      return await fetch(url, { signal, cache: "force-cache" });
    }
  }

  // One weights file's body: from Cache Storage, the early download, or the network.
  async function openWeights(op, file, useCache) {
    // file.cached false: the listing asked Cache Storage a moment ago.
    let response = useCache && file.cached !== false ? await cachedResponse(file.url) : null;
    const fromCache = response !== null;
    if (!fromCache && useCache) markKept(file.url, false);  // evicted, or cleared elsewhere
    if (!fromCache && useCache && wasCutOff(file.url)) {
      notice(op.id, `This browser did not finish keeping ${file.name} on an earlier visit (the page was ` +
                    "closed or reloaded first), so it is downloaded again.");
    }
    // The early download serves an address kept out of Cache Storage too (the built-in SSMax
    // twin named by a share link), which would otherwise be fetched twice.
    const taken = !fromCache ? await claimEarly(file.url) : (dropEarly(), null);
    if (taken) response = taken.response;
    else if (!fromCache) response = useCache ? await fetch(file.url, { signal: op.controller.signal }) : await fetchFresh(file.url, op.controller.signal);
    if (op !== current) { if (taken) taken.reader.cancel(); throw new Stale(); }
    return { response, fromCache, reader: taken ? taken.reader : response.body && response.body.getReader(),
             landed: taken ? taken.landed : null, adopt: taken ? taken.adopt : () => false, already: 0 };
  }

  // What the early download landed in the heap while the app started becomes the operation's
  // buffer: the rest streams in after it.
  function adoptLanded(op, body) {
    if (!body.landed) return;
    if (!body.adopt(op.id)) throw new Error("the early download's buffer could not be taken over");
    op.ptr = body.landed.ptr;
    op.capacity = body.landed.capacity;
    body.already = body.landed.bytes;
  }

  async function download(id, address, useCache = true) {
    const op = begin(id);
    const model = F.resolve(address);
    const toKeep = [];
    let first = null;  // the first weights file's body, opened before the buffer is reserved
    try {
      if (!model) throw new F.Refusal(`"${address}" is not a web address nor a Hugging Face model (ORG/NAME).`);
      downloadingFrom(id, model.base);
      let texts, weights;
      if (model.kind === "file") {
        // One file: its own answer gives the size (no HEAD first), as the early download may have begun.
        weights = [{ name: model.weights, url: model.base + model.weights, size: -1 }];
        first = await openWeights(op, weights[0], useCache);
        if (!first.fromCache && !first.response.ok) throw new F.Refusal(F.httpError(first.response, weights[0].url));
        weights[0].size = announcedSize(first.response);
        weights[0].cached = first.fromCache;
        const kept = keptCopies(model, useCache);
        texts = await F.listTexts(model, (u) => getText(u, op.controller.signal, useCache, kept), !useCache);
        refuseConfig(op, model, texts);
      } else {
        ({ texts, weights } = await listModel(op, model, useCache));
        first = await openWeights(op, weights[0], useCache);  // a repository's single file may have begun early too
      }
      op.total = sum(weights);
      const cached = weights.every((w) => w.cached);
      // Again: a one-click load was never asked, and memory may have gone since. What landed is held already.
      if (!cached) warnIfTight(id, model.name, op.total, first.landed ? first.landed.capacity : op.capacity);
      probed(id, op.total, cached);  // C++ keeps Downloading; this updates total and cached
      adoptLanded(op, first);
      const encoded = texts.map((t) => new TextEncoder().encode(t.text));
      reserve(op, (op.total > 0 ? op.total : 64 * MB) + encoded.reduce((a, b) => a + b.length, 0));
      const files = [];
      let offset = 0;
      for (const w of weights) {
        const body = first || (await openWeights(op, w, useCache));
        first = null;
        if (!body.fromCache && !body.response.ok) throw new F.Refusal(F.httpError(body.response, w.url));
        // Cache Storage gets the bytes after the model is loaded, from the heap (keepFromHeap): written
        // while they stream in, the cache held the download to its own pace, about half the speed.
        const keep = !body.fromCache && useCache && body.response.status === 200 && hasCacheApi;
        if (keep) markSaving(w.url, true);
        const size = await streamIntoHeap(op, body.reader, offset, offset, body.already);
        const file = { name: w.name, kind: "weights", offset, size };
        files.push(file);
        if (keep) toKeep.push({ url: w.url, file, headers: { "content-type": body.response.headers.get("content-type") || "application/octet-stream",
                                                              "content-length": String(size) } });
        offset += size;
      }
      texts.forEach((t, i) => {
        reserve(op, offset + encoded[i].length);
        M().HEAPU8.set(encoded[i], op.ptr + offset);
        files.push({ name: t.name, kind: t.kind, offset, size: encoded[i].length });
        offset += encoded[i].length;
      });
      if (op !== current) throw new Stale();
      current = null;
      const good = toKeep.filter((k) => looksLikeSafetensors(op, k.file));
      for (const k of toKeep) if (!good.includes(k)) markSaving(k.url, false);
      pendingKeep = good.length ? { id, entries: good } : null;
      finished(id, offset, files, model.name);
    } catch (e) {
      for (const k of toKeep) markSaving(k.url, false);
      if (first && first.reader) first.reader.cancel().catch(() => {});  // refused before its body was read
      if (e instanceof Stale || op !== current) return;
      dropEarly();  // refused before the weights were asked for: a repository's early download is not wanted
      current = null;
      failed(id, readable(e, model ? model.base + model.weights : address, op.total));
    }
  }

  // [SECTION] Keeping a loaded model in Cache Storage, from the heap -----------------------------------
  let pendingKeep = null;  // { id, entries: [{ url, file, headers }] }: the download just handed to C++, to keep once loaded
  let keeping = null;      // { id, stop }: the write in progress

  function stopKeeping() {
    if (keeping) keeping.stop();
    keeping = null;
  }

  // Whether the download `id` handed to C++ is to be kept (C++ then says when: keepFromHeap).
  const willKeep = (id) => hasCacheApi && pendingKeep !== null && pendingKeep.id === id;

  // C++ calls this with the loaded model's bytes, which it keeps alive until the write reports its
  // end. Returns 1 when a write starts, 0 when this download is not to be kept. Each weights file
  // goes to the cache 4 MB at a time, each slice copied out of the heap when the cache asks for it
  // (the heap may grow meanwhile), so JS never holds a second copy of the model.
  function keepFromHeap(id, ptr, size) {
    ptr >>>= 0;  // an address past 2 GB comes back as a negative i32
    const k = pendingKeep;
    pendingKeep = null;
    if (!k || k.id !== id || !hasCacheApi) return 0;
    stopKeeping();
    let stopped = false, saved = 0, lastReport = 0;
    keeping = { id, stop: () => { stopped = true; } };
    const bodyOf = (entry) => {
      let at = 0;
      const end = entry.file.size;
      return new ReadableStream({
        pull(controller) {
          if (stopped) { controller.error(new Stale()); return; }
          const n = Math.min(4 * MB, end - at);
          const from = ptr + entry.file.offset + at;
          controller.enqueue(M().HEAPU8.slice(from, from + n));
          at += n;
          saved += n;
          const now = performance.now();
          if (now - lastReport > 250) { lastReport = now; M()._attnlab_fetch_cache_copy(id, COPY_SAVING, saved); }
          if (at >= end) controller.close();
        },
      }, { highWaterMark: 8 });  // 32 MB queued: the cache keeps writing while a forward pass holds the main thread
    };
    cacheCopy(id, COPY_SAVING, 0);
    (async () => {
      let error = null;
      const cache = await openCache();
      for (const entry of k.entries) {
        if (error) { markSaving(entry.url, false); continue; }
        try { await cache.put(entry.url, new Response(bodyOf(entry), { headers: entry.headers })); } catch (e) { error = e; }
        markSaving(entry.url, false);
        markKept(entry.url, !error);
      }
      return error;
    })().then((e) => e, (e) => e).then((e) => {
      if (keeping && keeping.id === id) keeping = null;
      cacheCopy(id, e ? COPY_NONE : COPY_KEPT, e ? 0 : saved);
      reportCacheBytes();
      if (e && !stopped) {
        notice(id, `The model loaded but could not be kept in the browser's cache (${e.name === "QuotaExceededError" ?
               "not enough storage space" : e.message || e}); the next visit downloads it again.`);
      }
    });
    return 1;
  }

  // Local files: the .safetensors one, and config.json if it came along.
  async function loadFiles(fileList) {
    const files = Array.from(fileList || []);
    if (files.length === 0) return;
    const model = files.find((f) => !/\.json$/i.test(f.name));
    const config = files.find((f) => /\.json$/i.test(f.name));
    if (!model) {
      const id = M().ccall("attnlab_fetch_begin", "number", ["string", "number"], [files[0].name, files[0].size]);
      failed(id, "That was only a .json file: choose the .safetensors checkpoint (config.json may come with it).");
      return;
    }
    const id = M().ccall("attnlab_fetch_begin", "number", ["string", "number"], [model.name, model.size]);
    const op = begin(id);
    op.total = model.size;
    redraw();
    try {
      const configText = config ? new TextEncoder().encode(await config.text()) : null;
      reserve(op, model.size + (configText ? configText.length : 0));
      const size = await streamIntoHeap(op, model.stream().getReader(), 0, 0);
      const files = [{ name: model.name, kind: "weights", offset: 0, size }];
      if (configText) {
        reserve(op, size + configText.length);
        M().HEAPU8.set(configText, op.ptr + size);
        files.push({ name: "config.json", kind: "config", offset: size, size: configText.length });
      }
      if (op !== current) return;
      current = null;
      finished(id, size + (configText ? configText.length : 0), files, model.name);
    } catch (e) {
      if (e instanceof Stale || op !== current) return;
      current = null;
      failed(id, e instanceof OutOfMemory || e instanceof RangeError ? readable(e, model.name, model.size)
                                                                    : `Reading ${model.name} failed: ${(e && e.message) || e}`);
    }
  }

  // [SECTION] The file picker ----------------------------------------------------------------------
  function pickFile() {
    const input = document.createElement("input");
    input.type = "file";
    input.accept = ".safetensors,.json";
    input.multiple = true;
    input.addEventListener("change", () => loadFiles(input.files), { once: true });
    input.click();  // within the click's user activation (the frame right after the mouse-up)
  }

  async function clearCache(id) {
    cancel();
    stopKeeping();
    if (!hasCacheApi) { notice(id, "This page has no cache to clear (Cache Storage needs https or localhost)."); return; }
    // The browser's own estimate when it notices at once, else what the entries announced.
    const announced = await cacheBytes();
    let before = -1;
    try { before = (await navigator.storage.estimate()).usage; } catch (e) { before = -1; }
    let had = false;
    try { had = await caches.delete(CACHE); } catch (e) { had = false; }
    opened = null;
    forgetKept();
    let after = -1;
    try { after = (await navigator.storage.estimate()).usage; } catch (e) { after = -1; }
    const freed = before >= 0 && after >= 0 && before > after ? before - after : announced;
    notice(id, !had ? "There was no cached model to clear."
                    : freed > 0 ? `Cleared the cached model: about ${mb(freed)} MB freed.` : "Cleared the cached model.");
    reportCacheBytes();
  }

  // [SECTION] Drag and drop anywhere on the page ------------------------------------------------------
  function installDropZone() {
    const overlay = document.createElement("div");
    overlay.id = "drop-zone";
    overlay.hidden = true;
    overlay.textContent = "Drop a .safetensors file (and its config.json, if you have it)";
    document.body.appendChild(overlay);
    const hasFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types || []).includes("Files");
    let depth = 0;  // dragenter/dragleave fire for every element crossed
    window.addEventListener("dragenter", (e) => { if (!hasFiles(e)) return; e.preventDefault(); depth++; overlay.hidden = false; });
    window.addEventListener("dragover", (e) => { if (!hasFiles(e)) return; e.preventDefault(); e.dataTransfer.dropEffect = "copy"; });
    window.addEventListener("dragleave", (e) => { if (!hasFiles(e)) return; if (--depth <= 0) { depth = 0; overlay.hidden = true; } });
    window.addEventListener("drop", (e) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth = 0;
      overlay.hidden = true;
      loadFiles(e.dataTransfer.files);
    });
  }

  // [SECTION] What the page calls (window.attnlabModelFetch) -------------------------------------
  window.attnlabModelFetch = {
    probe, download, cancel, pickFile, clearCache, loadFiles, willKeep, keepFromHeap, stopKeeping, prefetch, startEarly: Early.open,
    memory: () => window.attnlabModelMemory.memory(),
    hasCacheApi: () => hasCacheApi,
    // At start-up: the drop zone, the cache's size, and the ?model= address ("" when none).
    init() {
      installDropZone();
      reportCacheBytes();
      Early.dropLater();
      return linkModel();
    },
  };

  function linkModel() {
    const model = new URLSearchParams(location.search).get("model") || "";
    if (F.isRepoId(model)) return model;  // a Hugging Face repository id, as given
    return model ? absolute(model) || model : "";  // a relative address is fine here
  }
  prefetch(linkModel());
})();
