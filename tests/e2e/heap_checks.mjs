// The page's heap, as status().memory reports it (issue 38, points 2 and 6): heap_bytes (in use
// now) and peak_heap_bytes (the most since the page opened) are there and plausible, and the heap a
// pass needs grows linearly in the text's length L, not as L^2, over one run up to 8,192 tokens of
// a small random Llama. Part of the hub suite: the model comes from its stand-in hub.
//
// The criterion mirrors the native app:pass-memory-grows-linearly (tests/app/pass_memory_test.mjs):
// the need P at three lengths L1 < L2 < L3, all past kExactCaptureTokens (2,048, where the capture
// turns 16-bit). With P = a + b L the ratio of the increments (P3 - P2) / (P2 - P1) is
// (L3 - L2) / (L2 - L1); with a term in L^2 it is (L3^2 - L2^2) / (L2^2 - L1^2), about twice that.
// The check: under the midpoint of the two. P is the most in use during the pass and its
// summaries (heap_bytes, sampled) less what was in use before it, each length starting from a short
// text (what a pass keeps lives until the next one replaces it). peak_heap_bytes counts from the
// page's opening, and the model's loading sets it above what these passes add. Measured: 6.3, 11.3
// and 19.9 MB at 2,179, 4,357 and 8,111 tokens, ratio 1.75 against a threshold of 2.51 (linear
// 1.72, quadratic 3.29). One byte per (query, key) cell of one head on top, 4 L^2 bytes less than a
// fp32 T x T map, adds 14 MB and 47 MB to the increments: ratio 3.1.
import { check, waitFor, status } from "./lib.mjs";

// The repository the checks open: 1 layer, 2 query heads on 1 key/value head of 32 dimensions,
// 8,192 positions, BF16, with Llama 2's tokenizer (32,000 words: a small one, so that loading it
// sets a low peak; the weights cost almost nothing: what grows with L is the pass's).
export const HEAP_REPO = ["test/llama-8k", ["--arch", "llama", "--layers", 1, "--heads", 2, "--kv-heads", 1, "--embd", 64,
  "--head-dim", 32, "--intermediate", 128, "--vocab", 32000, "--dtype", "bf16", "--positions", 8192], "llama2"];

// A text of about `n` tokens of Llama 2's tokenizer (one a word, and a full stop every eight).
function textOf(n) {
  const words = ["the", "cat", "sat", "on", "a", "mat", "and", "then", "ran", "to", "see", "her", "old", "friend", "by", "sea"];
  const out = [];
  for (let i = 0; out.length < n; ++i) out.push(words[(i * 7 + (i >> 4)) % words.length] + (i % 8 === 7 ? "." : ""));
  return out.slice(0, Math.round(n * 0.88)).join(" ");
}

async function settled(page, timeout) {
  return waitFor(page, () => {
    const s = window.attnlab.status();
    return s.tokens > 0 && s.forward_tokens === s.tokens && !s.busy;
  }, undefined, timeout);
}

// In a page of its own: the peak counts from the page's opening, and the suite's other models
// (vocabularies of 128K-152K words) would set it before these passes.
export async function heapChecks({ browser, server, hub }) {
  const id = HEAP_REPO[0];
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
  const page = await context.newPage();
  await page.goto(`${server.origin}/?hub=${encodeURIComponent(hub.origin)}&model=${id}`);
  await waitFor(page, (want) => { const s = window.attnlab?.status?.(); return s?.model?.loaded && s.model.source === want; }, id, 60000);
  await page.evaluate(() => window.attnlab.setState({ text: "A short text." }));
  await settled(page, 30000);
  let st = await status(page);
  const m = st.memory, wasm = st.heap.memory_bytes, weights = st.model_fetch.total_bytes;  // the weights files, every byte
  check(Number.isFinite(m.heap_bytes) && Number.isFinite(m.peak_heap_bytes) && m.heap_bytes > 0 && m.heap_bytes <= m.peak_heap_bytes &&
        m.peak_heap_bytes <= wasm, "status().memory: 0 < heap_bytes <= peak_heap_bytes <= the wasm memory's size",
        `${m.heap_bytes} <= ${m.peak_heap_bytes} <= ${wasm}`);
  check(m.peak_heap_bytes >= weights && weights > 0, "the peak holds at least the loaded model's weights", `${m.peak_heap_bytes} >= ${weights}`);

  // Three lengths, past 2,048; the last at the model's 8,192 positions. Each pass's own need: the
  // most in use while it and its summaries run (sampled every 50 ms) less what was in use before.
  // The peak since the page opened is the loading's until a pass needs more.
  const peaks = [];
  const before = st.memory.peak_heap_bytes;
  for (const n of [2200, 4400, 8192]) {
    // From a short text each time: what a pass keeps lives until the next one replaces it, so
    // measured from a long pass's leftovers the increments would be the difference of two
    // lengths' needs, and the ratio would say nothing about the growth.
    await page.evaluate(() => window.attnlab.setState({ text: "A short text." }));
    await waitFor(page, () => { const s = window.attnlab.status(); return s.tokens > 0 && s.tokens < 10 && s.forward_tokens === s.tokens && !s.busy; },
                  undefined, 60000);
    const r = await page.evaluate(async ({ text, timeout }) => {
      const start = performance.now(), was = window.attnlab.status(), base = was.memory.heap_bytes;
      let most = base;
      window.attnlab.setState({ text });
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        const s = window.attnlab.status();
        most = Math.max(most, s.memory.heap_bytes);
        const done = s.tokens > 0 && s.forward_tokens === s.tokens && !s.busy && s.tokens !== was.tokens;
        if (done || performance.now() - start > timeout)
          return { L: s.tokens, need: most - base, peak: s.memory.peak_heap_bytes, done, seconds: (performance.now() - start) / 1000 };
      }
    }, { text: textOf(n), timeout: 120000 });
    peaks.push(r);
  }
  const [a, b, c] = peaks;
  const MB = (x) => (x / 2 ** 20).toFixed(1);
  check(peaks.every((p) => p.done) && a.L > 2048 && c.L <= 8192 && c.L > 8000, "the page runs passes of three lengths up to 8,192 tokens",
        peaks.map((p) => `${p.L} tokens in ${p.seconds.toFixed(1)} s${p.done ? "" : " (not settled)"}`).join(", "));
  check(c.peak > before && c.need > b.need && b.need > a.need, "the peak grows when a longer pass runs",
        `peak ${MB(before)} MB after loading, ${MB(c.peak)} MB after ${c.L} tokens; ` + peaks.map((p) => `${p.L}: ${MB(p.need)} MB`).join(", "));
  const ratio = (c.need - b.need) / (b.need - a.need);
  const linear = (c.L - b.L) / (b.L - a.L), quadratic = (c.L ** 2 - b.L ** 2) / (b.L ** 2 - a.L ** 2);
  console.log(`        heap a pass needs: ${peaks.map((p) => `${p.L} tokens ${MB(p.need)} MB`).join(", ")}; ratio of increments ` +
              `${ratio.toFixed(2)} (linear ${linear.toFixed(2)}, quadratic ${quadratic.toFixed(2)})`);
  check(ratio < (linear + quadratic) / 2, "the heap a pass needs grows linearly in L",
        `increments ${MB(b.need - a.need)} MB then ${MB(c.need - b.need)} MB: ratio ${ratio.toFixed(2)} ` +
        `(linear ${linear.toFixed(2)}, quadratic ${quadratic.toFixed(2)}; ${peaks.map((p) => `${p.L}: ${MB(p.need)} MB`).join(", ")})`);
  await context.close();
  return peaks;
}
