// The early download of a link's model (web/model_fetch.js, prefetch), read on a thread of its
// own: the page's thread is busy for a second or more while the app starts, and a body read there
// stalls the network for as long. One message starts it: { url, cap }. It answers with
//   { kind: "head", ok, status, statusText, headers }   once the server has answered,
//   { kind: "chunk", value }                            for each piece of the body (transferred),
//   { kind: "end" } or { kind: "error", message }       at the end,
// and pauses while `cap` bytes or more are sent but not yet taken ({ taken: n } says n were).
"use strict";

let cap = Infinity, waiting = 0, resume = null;

self.onmessage = ({ data }) => {
  if (data.url) { cap = data.cap; read(data.url); return; }
  waiting -= data.taken;
  if (resume && waiting < cap) { const r = resume; resume = null; r(); }
};

async function read(url) {
  try {
    const response = await fetch(url, { priority: "low" });
    self.postMessage({ kind: "head", ok: response.ok, status: response.status, statusText: response.statusText,
                       headers: [...response.headers] });
    if (response.ok && response.body) {
      const reader = response.body.getReader();
      for (;;) {
        if (waiting >= cap) await new Promise((r) => { resume = r; });
        const { value, done } = await reader.read();
        if (done) break;
        waiting += value.length;
        self.postMessage({ kind: "chunk", value }, [value.buffer]);
      }
    }
    self.postMessage({ kind: "end" });
  } catch (e) {
    self.postMessage({ kind: "error", message: String((e && e.message) || e) });
  }
  self.close();
}
