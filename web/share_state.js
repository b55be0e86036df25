// Share links: the whole view state in the address, as #s= + base64url(deflate-raw(JSON)),
// compressed by the browser's CompressionStream; tour links the same way, as #t= + a tour's JSON.
// The C++ side owns the state and the tour (parse and validation in src/app/view_state.cpp and
// src/app/tour/tour.cpp); this file only encodes, decodes and talks to the page:
//   - on load, a #s= hash is decoded and applied (after the first frame) through
//     Module._attnlab_set_state; anything wrong is a message in the app, never an exception;
//   - "Copy link" (C++ calls copyLink) writes the link into the address and the clipboard;
//   - once the address shows a link, it follows the view (viewChanged, debounced);
//   - a #t= link plays its tour from step 1 (Module._attnlab_set_tour); the address keeps it.
// window.attnlab.state/setState/shareLink (web/index.html) use encode/decode from here.
"use strict";
(function () {
  const PREFIX = "#s=";
  const TOUR_PREFIX = "#t=";
  // Chromium's limit on a URL's length. Past it a tour goes by file (Export JSON) instead.
  const MAX_LINK_CHARS = 2 * 1024 * 1024;
  const MAX_JSON_BYTES = 4 * 1024 * 1024;  // a decoded link larger than this is not ours (or a zip bomb)
  const M = () => window.Module;

  let linkMode = false;        // the address shows a share link: keep it current
  let restored = false;        // the address's link (if any) has been dealt with
  let pendingJson = null;      // the latest state from viewChanged, not yet in the address
  let timer = 0;
  let encodedKey = null, encodedHash = null;  // the last encoding, reused while the state is unchanged

  const supported = typeof CompressionStream === "function" && typeof DecompressionStream === "function";

  // --- base64url --------------------------------------------------------------------------
  function toBase64url(bytes) {
    let bin = "";
    for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function fromBase64url(text) {
    if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) throw new LinkError("its data is not base64url");
    const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; ++i) bytes[i] = bin.charCodeAt(i);
    return bytes;
  }

  class LinkError extends Error {}

  // --- deflate-raw through the browser's streams -------------------------------------------
  async function readAll(stream, limit) {
    const reader = stream.getReader();
    const chunks = [];
    let size = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > limit) {
        reader.cancel().catch(() => {});
        throw new LinkError("it unpacks to more than " + (limit >> 20) + " MB");
      }
      chunks.push(value);
    }
    const out = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) { out.set(c, at); at += c.length; }
    return out;
  }

  async function encode(json, prefix = PREFIX) {
    if (prefix + json === encodedKey) return encodedHash;
    const input = new Blob([new TextEncoder().encode(json)]).stream();
    const bytes = await readAll(input.pipeThrough(new CompressionStream("deflate-raw")), Infinity);
    encodedKey = prefix + json;
    encodedHash = prefix + toBase64url(bytes);
    return encodedHash;
  }

  // hash: "#s=..." or "#t=..."; both prefixes are three characters.
  async function decode(hash) {
    const bytes = fromBase64url(hash.slice(PREFIX.length));
    if (bytes.length === 0) throw new LinkError("it is empty");
    let raw;
    try {
      raw = await readAll(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw")), MAX_JSON_BYTES);
    } catch (e) {
      if (e instanceof LinkError) throw e;
      throw new LinkError("its data is not compressed the way AttnLab writes it");
    }
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(raw);
    } catch (e) {
      throw new LinkError("its data is not text");
    }
  }

  // The page's address with `hash` (other parameters kept, ?model= dropped: the state names the model).
  function linkFor(hash) {
    const url = new URL(window.location.href);
    url.searchParams.delete("model");
    url.hash = hash;
    return url.href;
  }

  function replaceAddress(hash) {
    try { history.replaceState(history.state, "", linkFor(hash)); } catch (e) { /* sandboxed frames */ }
  }

  // --- talking to the C++ side -------------------------------------------------------------
  function applyState(json, fromLink) {
    const error = M().ccall("attnlab_set_state", "string", ["string", "number"], [json, fromLink ? 1 : 0]);
    return error === "" ? { ok: true } : { ok: false, error: error };
  }
  function linkError(message) {
    M().ccall("attnlab_link_error", null, ["string"], [message]);
  }
  function linkReady(link, copied) {
    M().ccall("attnlab_link_ready", null, ["string", "number"], [link, copied ? 1 : 0]);
  }
  async function copyToClipboard(text) {
    try {
      if (navigator.clipboard && navigator.clipboard.writeText) {
        await navigator.clipboard.writeText(text);
        return true;
      }
    } catch (e) { /* refused: the reader copies by hand */ }
    return false;
  }

  // The address's link, decoded as soon as the page loads (the wasm is still on its way) and
  // applied once the app draws.
  const hash = window.location.hash;
  const isTour = hash.startsWith(TOUR_PREFIX);
  const decoded = (async () => {
    if (!hash || hash === "#") return null;
    if (!hash.startsWith(PREFIX) && !isTour)
      throw new LinkError("the address ends in \u201c" + (hash.length > 40 ? hash.slice(0, 40) + "\u2026" : hash) +
                          "\u201d, which is not an AttnLab link (those end in #s=\u2026 or, for a tour, #t=\u2026)");
    if (!supported) throw new LinkError("this browser cannot unpack it (no DecompressionStream); try a current browser");
    return decode(hash);
  })();
  decoded.catch(() => {});  // handled in appRunning; never an unhandled rejection
  // The model the link names starts downloading now, not once the app is up (web/model_fetch.js).
  // index.html asks for the app's script once this has run (decoding takes a few milliseconds).
  const linkPrefetched = decoded.then((json) => {
    if (json === null || isTour) return;
    const model = JSON.parse(json).model;
    if (typeof model === "string" && model && window.attnlabModelFetch) window.attnlabModelFetch.prefetch(model);
  }).catch(() => {});

  async function appRunning() {
    let json = null;
    try {
      json = await decoded;
    } catch (e) {
      const why = e instanceof LinkError ? e.message : "it could not be read (" + String(e && e.message || e) + ")";
      linkError(isTour ? "This tour link could not be opened, so AttnLab starts without it: " + why + "."
                       : "This link's view could not be restored, so AttnLab starts with the defaults: " + why + ".");
      restored = true;
      linkRestored();
      return;
    }
    if (json !== null && isTour) {
      // A refusal is put in the banner by the C++ side; the address keeps the tour's link.
      M().ccall("attnlab_set_tour", "string", ["string", "number"], [json, 1]);
    } else if (json !== null) {
      const result = applyState(json, true);  // a refusal is put in the banner by the C++ side
      linkMode = result.ok;
      if (result.ok) { encodedKey = null; }
    }
    restored = true;
    linkRestored();
    if (pendingJson !== null) schedule();
  }

  // Tells the C++ side the link is dealt with: with a link, it waits for this before loading the
  // built-in model, so that a link naming another model does not download both.
  function linkRestored() {
    if (hasLink()) M()._attnlab_link_restored();
  }

  function hasLink() { return !!hash && hash !== "#"; }

  function schedule() {
    if (!linkMode || !restored || !supported) return;
    clearTimeout(timer);
    timer = setTimeout(async () => {
      const json = pendingJson;
      pendingJson = null;
      if (json === null) return;
      try { replaceAddress(await encode(json)); } catch (e) { console.warn("AttnLab: could not update the link: " + e); }
    }, 250);
  }

  window.attnlabShare = {
    supported: supported,
    encode: encode,
    decode: decode,
    linkFor: linkFor,
    applyState: applyState,
    // True when the address has a hash to apply after the first frame (the app asks at start).
    hasLink: hasLink,
    // Settles once the model the address's link names (if any) has been handed to prefetch.
    linkPrefetched: linkPrefetched,
    // window.attnlab.tourLink(): the #t= link of a tour's JSON.
    async tourLink(json) { return linkFor(await encode(json, TOUR_PREFIX)); },
    // C++ (the tour editor's "Copy tour link"): the link to the clipboard; the address stays.
    async copyTourLink(json) {
      if (!supported) {
        linkError("This browser cannot make compressed links (no CompressionStream); use Export JSON instead.");
        return;
      }
      let link;
      try {
        link = linkFor(await encode(json, TOUR_PREFIX));
      } catch (e) {
        linkError("The tour's link could not be made: " + String(e && e.message || e) + ".");
        return;
      }
      if (link.length > MAX_LINK_CHARS) {
        linkError("This tour's link would be " + (link.length / 1048576).toFixed(1) + " MB, more than a browser's " +
                  "address holds (2 MB): use Export JSON and share the file instead.");
        return;
      }
      const copied = await copyToClipboard(link);
      M().ccall("attnlab_tour_link_ready", null, ["string", "number"], [link, copied ? 1 : 0]);
    },
    // Called by index.html when the app has drawn its first frame.
    start() { appRunning(); },
    // C++ (menu "Copy link"): the link into the address, then the clipboard (which may refuse).
    async copyLink(json) {
      if (!supported) {
        linkError("This browser cannot make compressed links (no CompressionStream); try a current browser.");
        linkReady("", false);
        return;
      }
      let link;
      try {
        link = linkFor(await encode(json));
      } catch (e) {
        linkError("The link could not be made: " + String(e && e.message || e) + ".");
        return;
      }
      replaceAddress(new URL(link).hash);
      linkMode = true;
      linkReady(link, await copyToClipboard(link));
    },
    // C++ (every frame the state changed).
    viewChanged(json) {
      pendingJson = json;
      schedule();
    },
  };
})();
