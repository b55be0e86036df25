// Will a model fit in this tab? What it needs, against what the device gives, as far as the browser
// tells; web/model_fetch.js asks before a download (a notice when it is tight) and status() reports
// the latest verdict (status().device.memory).
"use strict";
(function () {
  const MB = 1024 * 1024;
  const M = () => window.Module;
  // Megabytes as the page writes them: 523, or 9.6 under 10.
  function mb(bytes) { return bytes >= 10 * MB ? (bytes / MB).toFixed(0) : (bytes / MB).toFixed(1); }

  // What a model needs: its files, read in place (F16 and BF16 weights stay 16-bit),
  // plus the page's working memory for passes and analyses, about a quarter of the weights more.
  // What the device gives a tab, as far as the browser tells:
  //   the wasm heap: its limit (4 GB here) less what the page holds now: past it, the load fails;
  //   navigator.deviceMemory (Chromium; rounded to a power of two): phones and tablets with 4 GB or
  //     less often stop a tab near half of it;
  //   performance.memory.jsHeapSizeLimit (Chromium): under 1 GB it marks a small device as well;
  //   neither (Safari, Firefox) on a touch screen: a phone or a tablet, taken as 1.5 GB for a tab.
  // `last` is the latest verdict, for status().device.memory.
  const GB = 1024 * MB;
  let lastVerdict = null;
  function memory() {
    const M_ = M();
    const out = { wasm_room_bytes: M_ && M_._attnlab_heap_room ? M_._attnlab_heap_room() : -1, device_bytes: -1, js_heap_limit_bytes: -1,
                  tab_limit_bytes: -1, basis: "" };
    if (navigator.deviceMemory > 0) out.device_bytes = navigator.deviceMemory * GB;
    if (performance.memory && performance.memory.jsHeapSizeLimit > 0) out.js_heap_limit_bytes = performance.memory.jsHeapSizeLimit;
    if (out.device_bytes > 0 && out.device_bytes <= 4 * GB) {
      out.tab_limit_bytes = out.device_bytes / 2;
      out.basis = `this device reports ${out.device_bytes / GB} GB of memory, and browsers on such devices often stop a tab near half of it`;
    } else if (out.js_heap_limit_bytes > 0 && out.js_heap_limit_bytes < GB) {
      out.tab_limit_bytes = 2 * out.js_heap_limit_bytes;
      out.basis = `this browser allows its scripts ${mb(out.js_heap_limit_bytes)} MB, the mark of a small device`;
    } else if (out.device_bytes < 0 && navigator.maxTouchPoints > 0 && Math.min(innerWidth, innerHeight) < 1100) {
      out.tab_limit_bytes = 1.5 * GB;
      out.basis = "phones and tablets often stop a tab near 1-2 GB";
    }
    out.last = lastVerdict;
    return out;
  }
  // The verdict for a file of `bytes`, `held` of which the heap holds already (an early download's
  // buffer): {need_bytes, fits: "yes" | "maybe not" | "no", sentence}.
  function verdict(url, bytes, held = 0) {
    if (!(bytes > 0)) return null;
    const m = memory();
    if (m.wasm_room_bytes >= 0) m.wasm_room_bytes += held;
    const need = Math.round(bytes * 1.25);
    const name = url.replace(/^.*\//, "") || url;
    let fits = "yes", sentence = "";
    if (m.wasm_room_bytes >= 0 && need > m.wasm_room_bytes) {
      fits = "no";
      sentence = `${name} (${mb(bytes)} MB) needs about ${mb(need)} MB of memory, more than this page can still take ` +
                 `(${mb(m.wasm_room_bytes)} MB): the download would fail. Reloading the page frees what it holds.`;
    } else if (m.tab_limit_bytes > 0 && need > 0.8 * m.tab_limit_bytes) {
      fits = "maybe not";
      sentence = `${name} (${mb(bytes)} MB) needs about ${mb(need)} MB of memory, and ${m.basis}: it may not fit. ` +
                 "If memory runs out, the page says so and keeps the model it has.";
    }
    lastVerdict = { url, need_bytes: need, fits, sentence };
    return lastVerdict;
  }
  window.attnlabModelMemory = { memory, verdict, mb };
})();
