// What every part of the browser test shares: the pass/fail tally, Chromium's flags, waiting
// on the page, widget positions from status().widgets, and a small PNG decoder for looking
// at screenshots. No test logic here.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { inflateSync } from "node:zlib";

export const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";

// Flags that work as root in this sandbox: SwiftShader for WebGL2, and no background
// networking (the network is closed, so those connections only produce noise).
export const chromiumArgs = [
  "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--disable-quic",
  "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

// --- the tally ------------------------------------------------------------------------------
export const tally = { passed: 0, failed: 0, failures: [] };
const started = Date.now();
// E2E_VERBOSE=1 adds each check's details and the seconds since the start.
export function check(ok, what, detail = "") {
  if (process.env.E2E_VERBOSE) what = `[${((Date.now() - started) / 1000).toFixed(1)}] ${what}`;
  if (ok) { tally.passed++; console.log(`  ok    ${what}${detail && process.env.E2E_VERBOSE ? ` (${detail})` : ""}`); }
  else { tally.failed++; tally.failures.push(what); console.log(`  FAIL  ${what}${detail ? `: ${detail}` : ""}`); }
  return !!ok;
}

export function parseArgs(argv) {
  return Object.fromEntries(
    argv.reduce((acc, a, i, all) => (a.startsWith("--")
      ? [...acc, [a.slice(2), all[i + 1] !== undefined && !all[i + 1].startsWith("--") ? all[i + 1] : true]] : acc), []));
}

// --- waiting on the page -------------------------------------------------------------------
// False when the state did not come within `timeout`. A wait that ends for another reason (the
// test function threw in the page, the page closed) is false too, and says why: the check that
// reads the state next then fails with the cause beside it, not as a silent timeout.
export async function waitFor(page, fn, arg, timeout = 10000) {
  try {
    await page.waitForFunction(fn, arg, { timeout, polling: 50 });
    return true;
  } catch (e) {
    if (e?.name !== "TimeoutError") console.log(`        (a wait ended early: ${String(e?.message ?? e).split("\n")[0]})`);
    return false;
  }
}

export const status = (page) => page.evaluate(() => window.attnlab.status());
export const state = (page) => page.evaluate(() => window.attnlab.state());

// When, on the page's clock (ms), a link's early download started (web/early_download.js), the app
// took it over, and the app's script was first requested.
export const earlyDownloadTimes = (page) => page.evaluate(() => {
  const mark = (name) => performance.getEntriesByName(name, "mark")[0]?.startTime;
  const app = performance.getEntriesByType("resource").filter((e) => /\/attnlab(-mt)?(-relaxed)?\.js$/.test(e.name));
  return { early: mark("attnlab-early-download"), taken: mark("attnlab-early-download-taken"),
           app: app.length ? Math.min(...app.map((e) => e.startTime)) : undefined };
});

// Waits until the app reports ready (the first frame has been drawn).
export const waitReady = (page, timeout = 60000) =>
  waitFor(page, () => window.attnlab && window.attnlab.status().ready, undefined, timeout);

// Waits until a model is loaded and the forward pass over the current tokens is done (the
// all-heads summaries may still run in the background).
export const waitForward = (page, timeout = 60000) => waitFor(page, () => {
  const st = window.attnlab.status();
  return st.model && st.model.loaded && st.tokens > 0 && st.forward_tokens === st.tokens;
}, undefined, timeout);

// Waits until nothing runs: no download, no forward pass, no background summaries.
export const waitNotBusy = (page, timeout = 30000) => waitFor(page, () => !window.attnlab.status().busy, undefined, timeout);

// Centre of a widget the app reports in status().widgets (CSS pixels); null when not drawn.
export async function findWidget(page, name) {
  const r = (await page.evaluate(() => window.attnlab.status().widgets))[name];
  return r ? { ...r, cx: r.x + r.w / 2, cy: r.y + r.h / 2 } : null;
}
// The widget `name` once the layout has settled: the same rect in a frame drawn after the one it
// was read from. A change the reader makes (a step deleted, a row added) is applied while a frame is
// drawn, and the widgets below it move in the next one; status() reports the frame drawn last, so
// a rect read right after the change can be where the widget was. The page draws only when asked:
// each round asks for one frame and waits until it is drawn.
export async function settledWidget(page, name, timeout = 5000) {
  const read = () => page.evaluate((n) => {
    const st = window.attnlab.status();
    return { frames: st.frames, rect: JSON.stringify(st.widgets[n] ?? null) };
  }, name);
  const end = Date.now() + timeout;
  for (let last = await read(); Date.now() < end; ) {
    await page.evaluate(() => window.Module._attnlab_request_redraw());
    if (!await waitFor(page, (f) => window.attnlab.status().frames > f, last.frames, Math.max(1, end - Date.now()))) break;
    const now = await read();
    if (now.rect === last.rect && now.rect !== "null") return findWidget(page, name);
    last = now;
  }
  throw new Error(`status().widgets['${name}'] did not settle in ${timeout} ms`);
}
export async function widget(page, name) {
  const r = await findWidget(page, name);
  if (!r) throw new Error(`status().widgets has no '${name}'`);
  return r;
}

// Clicks a tab ("tab.attention", ...) and waits until the app shows that panel.
export async function openTab(page, panel) {
  const w = await findWidget(page, `tab.${panel}`);
  if (!w) return false;
  await page.mouse.click(w.cx, w.cy);
  return waitFor(page, (p) => window.attnlab.status().panel === p, panel, 5000);
}

// Opens `url` in a new page of `context` and waits for the app's first frame. Errors are collected
// from the first request on (watchErrors); `ignoreRequests` are failed requests that are expected
// (a held huggingface.co, a 404 on purpose); `initScript` runs in the page before its own scripts.
export async function openPage(context, url, { ignoreRequests = [], initScript } = {}) {
  const page = await context.newPage();
  const errors = watchErrors(page, { ignoreRequests });
  if (initScript) await page.addInitScript(initScript);
  await page.goto(url);
  return { page, errors, ready: await waitReady(page) };
}

// Collects console errors, uncaught exceptions and failed requests of a page.
export function watchErrors(page, { ignoreRequests = [] } = {}) {
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => errors.push(`uncaught: ${String(e)}`));
  // ERR_ABORTED is the page itself stopping a request (a cancel, a stream it no longer needs).
  page.on("requestfailed", (r) => {
    if (r.failure()?.errorText === "net::ERR_ABORTED") return;
    if (!ignoreRequests.some((re) => re.test(r.url()))) errors.push(`request failed: ${r.url()} (${r.failure()?.errorText})`);
  });
  return errors;
}

// A trap's stack numbers the wasm functions (wasm-function[N]); the build's symbol map (the
// page's .js.symbols, CMakeLists.txt) names each, and c++filt demangles the names where it is.
export function nameWasmFrames(text, symbolsFile) {
  if (!/wasm-function\[\d+\]/.test(text) || !existsSync(symbolsFile)) return text;
  const names = new Map(readFileSync(symbolsFile, "utf8").split("\n").map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1)]));
  const named = text.replace(/wasm-function\[(\d+)\]/g, (frame, n) => (names.has(n) ? `${frame} ${names.get(n)}` : frame));
  try { return execFileSync("c++filt", [], { input: named }).toString().trimEnd(); } catch { return named; }
}

// --- just enough PNG decoding to look at a screenshot's pixels ----------------------------
export function decodePng(buf) {
  let pos = 8, width = 0, height = 0, channels = 0;
  const idat = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos), type = buf.toString("ascii", pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    if (type === "IHDR") {
      width = data.readUInt32BE(0); height = data.readUInt32BE(4);
      channels = { 2: 3, 6: 4 }[data[9]];
      if (data[8] !== 8 || !channels || data[12]) throw new Error("unexpected PNG format");
    } else if (type === "IDAT") idat.push(data);
    pos += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels, px = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)], line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? px[y * stride + x - channels] : 0;
      const b = y > 0 ? px[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? px[(y - 1) * stride + x - channels] : 0;
      const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][filter];
      px[y * stride + x] = (line[x] + pred) & 255;
    }
  }
  return { width, height, channels, px };
}

// Distinct colours and the share of pixels that differ from the most common one.
export function pictureStats(png) {
  const counts = new Map();
  for (let i = 0; i < png.px.length; i += png.channels * 3) {  // every third pixel is plenty
    const key = (png.px[i] << 16) | (png.px[i + 1] << 8) | png.px[i + 2];
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const top = Math.max(...counts.values());
  return { colours: counts.size, inked: 1 - top / total };
}

// The share of pixels (every third one) that differ between two pictures of the same size; 1
// when the sizes differ.
export function pictureDifference(a, b) {
  if (a.width !== b.width || a.height !== b.height) return 1;
  let differ = 0, n = 0;
  for (let i = 0, j = 0; i < a.px.length && j < b.px.length; i += a.channels * 3, j += b.channels * 3, n++)
    if (a.px[i] !== b.px[j] || a.px[i + 1] !== b.px[j + 1] || a.px[i + 2] !== b.px[j + 2]) differ++;
  return n ? differ / n : 0;
}
