// A link's download, started before the app is up. A link that names a model (?model=, or a share
// link's state) would wait for the wasm to compile and the app's first frames before its download
// began: 2.6 s of a 7.0 s load of GPT-2 small here (bench/RESULTS.md). The download starts as the
// page loads (at low priority, after the page's own files), and web/model_fetch.js's download()
// takes it over (claim) once the app asks for that address.
//
// The reading runs in a worker (early_download_worker.js): read on the page's thread, the stream
// stalled for as long as that thread was busy starting the app (1.1 s measured). The worker hands
// over each chunk as it arrives. Once the wasm runtime is up (before the app's first frame), each
// chunk lands in one heap buffer the size of the file, as it arrives: the copy into the heap that
// the app needs anyway is done while the app starts rather than after, and nothing waits in JS.
// Before that, the worker pauses once EARLY_CAP bytes wait here untaken. download() adopts the
// buffer (Module._attnlab_fetch_adopt) and streams the rest after what landed.
//
// web/model_fetch.js decides which addresses to start (prefetch) and opens the gate (open) once
// the page will not reload for its service worker; its early requests of a repository's texts
// wait for the gate too (whenOpen).
"use strict";
(function () {
  const MB = 1024 * 1024;
  // Chunks held in JS before the runtime is up: GPT-2 small (498 MB) arrives whole while the app
  // starts on a busy machine, and a model past it waits for the heap rather than doubling the tab's memory.
  const EARLY_CAP = 512 * MB;
  // Room after the weights for the texts download() appends (config.json, tokenizer.json): the
  // buffer then need not grow (a realloc would copy every landed byte once more).
  const TEXT_ROOM = 16 * MB;
  const UNCLAIMED_MS = 15000;  // after the app's start: a link the app did not follow is dropped
  const M = () => window.Module;
  let early = null;  // { url, worker, head, size, chunks, ended, error, stopped, wake, stop, land }
  let gateOpen = false;
  const wanted = [];

  function mark(name) {
    try { performance.mark(name); } catch (e) { /* no User Timing: only the tests and the bench read it */ }
  }

  // The runtime has run main(): malloc is there, and the app's C++ side can adopt a buffer.
  const heapReady = () => { const m = M(); return !!(m && m.calledRun && m._attnlab_heap_block && m._attnlab_fetch_adopt); };

  function open() {
    gateOpen = true;
    for (const run of wanted.splice(0)) run();
  }

  // Runs `fn` once the gate is open (at once if it is): whatever a link asks for early waits for it.
  function whenOpen(fn) {
    if (gateOpen) fn();
    else wanted.push(fn);
  }

  // `href`: an absolute http(s) address of one weights file, not kept in Cache Storage.
  function start(href) {
    if (!gateOpen) { whenOpen(() => start(href)); return; }
    if (early || typeof Worker !== "function") return;
    let worker;
    try { worker = new Worker("early_download_worker.js"); } catch (err) { return; }  // download() fetches
    const e = early = { url: href, worker, head: null, size: -1, chunks: [], ended: false, error: null, stopped: false, wake: null,
                        landing: null };  // landing: { ptr, capacity, bytes } once chunks go to the heap
    mark("attnlab-early-download");  // for the browser tests: started before the app's script (index.html)
    const wake = () => { if (e.wake) { const w = e.wake; e.wake = null; w(); } };
    // head: the answer's status and headers, or null when the request failed (download() retries
    // it and reports its own error).
    e.head = new Promise((resolve) => {
      worker.onmessage = ({ data }) => {
        if (data.kind === "head") {
          const head = { ok: data.ok, status: data.status, statusText: data.statusText, headers: new Headers(data.headers) };
          e.size = head.ok ? window.attnlabModelFiles.announcedSize(head) : -1;
          resolve(head);
        } else if (data.kind === "chunk") e.chunks.push(data.value);
        else if (data.kind === "end") e.ended = true;
        else if (data.kind === "error") { e.error = data.message; resolve(null); }
        land(e);
        wake();
      };
      worker.onerror = () => { e.error = "the download's worker stopped"; resolve(null); wake(); };
      e.stop = () => {
        e.stopped = true;
        e.chunks = [];
        worker.terminate();
        if (e.landing) { M()._attnlab_heap_block_free(e.landing.ptr); e.landing = null; }
        resolve(null);
        wake();
      };
    });
    worker.postMessage({ url: href, cap: EARLY_CAP });
    // The runtime comes up between chunks, or after the last one: look again until it has.
    const poll = setInterval(() => { if (e.stopped || e !== early || heapReady()) { clearInterval(poll); land(e); } }, 50);
  }

  // Copies the waiting chunks into the heap buffer, allocating it first, while the download is
  // not yet claimed. Without a runtime, a known size or memory, the chunks wait for download().
  function land(e) {
    if (e !== early || e.stopped || !e.chunks.length || !heapReady()) return;
    if (!e.landing) {
      if (!(e.size > 0)) return;
      const capacity = e.size + TEXT_ROOM;
      const ptr = M()._attnlab_heap_block(capacity) >>> 0;  // an address past 2 GB comes back as a negative i32
      if (!ptr) return;
      e.landing = { ptr, capacity, bytes: 0 };
      mark("attnlab-early-landing");
    }
    const L = e.landing;
    let taken = 0;
    while (e.chunks.length && L.bytes + e.chunks[0].length <= e.size) {  // more than announced: download() sorts it out
      const value = e.chunks.shift();
      M().HEAPU8.set(value, L.ptr + L.bytes);
      L.bytes += value.length;
      taken += value.length;
    }
    if (taken) e.worker.postMessage({ taken });
  }

  function drop() {
    const e = early;
    early = null;
    if (e) e.stop();
  }

  // The reader download() streams from: the chunks not landed, then the rest as the worker sends
  // it. Each chunk taken makes room for the worker to read on.
  function reader(e) {
    return {
      async read() {
        for (;;) {
          if (e.stopped) throw new DOMException("The download was stopped.", "AbortError");
          if (e.chunks.length) {
            const value = e.chunks.shift();
            e.worker.postMessage({ taken: value.length });
            return { value, done: false };
          }
          if (e.error !== null) throw new TypeError(e.error);
          if (e.ended) return { value: undefined, done: true };
          await new Promise((resolve) => { e.wake = resolve; });
        }
      },
      // Stops the download, and frees what landed unless download() adopted it.
      async cancel() { e.stop(); },
    };
  }

  // The early download of `href`: { response (its status and headers), reader, landed } or null
  // (none for this address, or its request failed: download() fetches). landed: { ptr, capacity,
  // bytes }, the heap buffer holding the body's first `bytes`, or null; adopt() hands it over.
  async function claim(href) {
    const e = early;
    if (!e || e.url !== href) { drop(); return null; }
    early = null;  // landing stops: what has not landed comes through the reader
    const head = await e.head;
    if (!head) { e.stop(); return null; }
    mark("attnlab-early-download-taken");  // the app reads this download, and fetches no other
    const landed = e.landing;
    const adopt = (id) => {
      if (!landed || !M()._attnlab_fetch_adopt(id, landed.ptr, landed.capacity)) return false;
      e.landing = null;  // C++ owns it now
      return true;
    };
    return { response: head, reader: reader(e), landed, adopt };
  }

  // The early download's answer (status and headers) if it is `href`'s, else null; a Promise of
  // null when its request failed.
  const head = (href) => (early && early.url === href ? early.head : null);

  // dropLater: called at the app's start.
  window.attnlabEarlyDownload = { open, whenOpen, start, claim, drop, head, url: () => (early ? early.url : null),
                                  dropLater: () => setTimeout(drop, UNCLAIMED_MS) };
})();
