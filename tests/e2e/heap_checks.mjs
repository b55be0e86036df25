// The page's heap, as status().memory reports it (issue 38, points 2 and 6): heap_bytes (in use
// now) and peak_heap_bytes (the most since the page opened) are there and plausible, and the peak
// grows linearly in the text's length L, not as L^2, over one run up to 8,192 tokens of a small
// random Llama. Part of the hub suite: the model comes from its stand-in hub.
//
// The criterion mirrors the native app:pass-memory-grows-linearly (tests/app/pass_memory_test.mjs):
// the peak P at three lengths L1 < L2 < L3, all past kExactCaptureTokens (2,048, where the capture
// turns 16-bit). With P = a + b L the ratio of the increments (P3 - P2) / (P2 - P1) is
// (L3 - L2) / (L2 - L1); with a term in L^2 it is (L3^2 - L2^2) / (L2^2 - L1^2), about twice that.
// The check: under the midpoint of the two. The peak only grows, so each length's run is measured
// after the shorter ones: what a longer pass needs beyond them.
import { check, waitFor, status } from "./lib.mjs";

// The repository the checks open: 1 layer, 2 query heads on 1 key/value head of 32 dimensions,
// 8,192 positions, BF16, with Llama 3's tokenizer (the tokens then cost what they do in the big
// models, and the weights almost nothing: what grows with L is the pass's).
export const HEAP_REPO = ["test/llama-8k", ["--arch", "llama", "--layers", 1, "--heads", 2, "--kv-heads", 1, "--embd", 64,
  "--head-dim", 32, "--intermediate", 128, "--vocab", 128256, "--dtype", "bf16", "--positions", 8192], "llama3"];

// A text of about `n` tokens of Llama 3's tokenizer (one a word, and a full stop every eight).
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

export async function heapChecks(page, id) {
  await page.evaluate((m) => window.attnlab.setState({ model: m, text: "A short text." }), id);
  await waitFor(page, (want) => { const s = window.attnlab.status(); return s.model.loaded && s.model.source === want; }, id, 30000);
  await settled(page, 30000);
  let st = await status(page);
  const m = st.memory, wasm = st.heap.memory_bytes, weights = st.model_fetch.total_bytes;  // the weights files, every byte
  check(Number.isFinite(m.heap_bytes) && Number.isFinite(m.peak_heap_bytes) && m.heap_bytes > 0 && m.heap_bytes <= m.peak_heap_bytes &&
        m.peak_heap_bytes <= wasm, "status().memory: 0 < heap_bytes <= peak_heap_bytes <= the wasm memory's size",
        `${m.heap_bytes} <= ${m.peak_heap_bytes} <= ${wasm}`);
  check(m.peak_heap_bytes >= weights && weights > 0, "the peak holds at least the loaded model's weights", `${m.peak_heap_bytes} >= ${weights}`);

  // Three lengths, past 2,048; the last at the model's 8,192 positions.
  const peaks = [];
  for (const n of [2200, 4400, 8192]) {
    await page.evaluate((t) => window.attnlab.setState({ text: t }), textOf(n));
    const done = await settled(page, 40000);
    st = await status(page);
    peaks.push({ L: st.tokens, peak: st.memory.peak_heap_bytes, done });
  }
  const [a, b, c] = peaks;
  const MB = (x) => (x / 2 ** 20).toFixed(1);
  check(peaks.every((p) => p.done) && a.L > 2048 && c.L <= 8192 && c.L > 8000, "the page runs passes of three lengths up to 8,192 tokens",
        peaks.map((p) => `${p.L} tokens${p.done ? "" : " (not settled)"}`).join(", "));
  check(b.peak > a.peak && c.peak > b.peak, "the peak grows when a longer pass runs", peaks.map((p) => `${p.L}: ${MB(p.peak)} MB`).join(", "));
  const ratio = (c.peak - b.peak) / (b.peak - a.peak);
  const linear = (c.L - b.L) / (b.L - a.L), quadratic = (c.L ** 2 - b.L ** 2) / (b.L ** 2 - a.L ** 2);
  check(ratio < (linear + quadratic) / 2, "the heap's peak grows linearly in L",
        `increments ${MB(b.peak - a.peak)} MB then ${MB(c.peak - b.peak)} MB: ratio ${ratio.toFixed(2)} ` +
        `(linear ${linear.toFixed(2)}, quadratic ${quadratic.toFixed(2)}; ${peaks.map((p) => `${p.L}: ${MB(p.peak)} MB`).join(", ")})`);
  return peaks;
}
