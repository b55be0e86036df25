// The page in Firefox ESR and in WebKitGTK (Safari's engine), both from Debian, under Xvfb: a lean
// smoke test that each engine runs the site as a visitor gets it (served without COOP/COEP, so that
// web/sw.js must make the page cross-origin isolated, as on GitHub Pages). In each engine:
//   the plain page opens on the built-in model with no console error;
//   every panel draws (its screenshot is not blank and differs from the panel before);
//   the built-in tour plays two steps (the second by the Right arrow key);
//   ?model= loads a small random checkpoint (made by the native CLI);
//   a share link made there reopens the same view and model;
//   ?model=ORG/NAME opens a Qwen3 (F16, its own tokenizer.json) from a stand-in Hugging Face hub;
//   on every page the threaded build runs wherever the page is cross-origin isolated, with one
//   thread per core (at most 8), except in WebKit, and the pages after the first are isolated.
// WebKitGTK 2.50 reports crossOriginIsolated true but exposes no SharedArrayBuffer at all (the GLib
// ports do not switch it on: WebKit bug 317847, pull requests 67868 and 74274, open), so the page
// rightly falls back to the single-threaded build there, and status().threads is 1. Safari does
// expose it in isolated pages. To run the page in Safari's engine as Safari would, the suite starts
// WebKit with JSC_useSharedArrayBuffer=1 (a JavaScriptCore option), and the first check says what
// WebKit gives without the option (served with COOP/COEP, so that no service worker is needed).
// Even so, WebKit gets the single-threaded build, saying why: its shared memory, grown by one
// thread while others ran, trapped here once in many runs ("Out of bounds memory access" on the
// shared link's page; web/index.html, threadsWhy()). --stress keeps watching that with ?threads=on.
// Firefox is driven by puppeteer-core over WebDriver BiDi, WebKit by selenium-webdriver through
// WebKitWebDriver. Run it under a display:
//
//   xvfb-run -a -s "-screen 0 1600x1000x24" node tests/e2e/engines.mjs --site dist --out build/e2e-engines \
//     --cli build/native/attnlab [--only firefox|webkit]
//
// --stress N runs only the threaded WebKit page (?threads=on), loaded N times in a row (stress
// below): not part of the suite, a loop to look for WebKit's out-of-bounds access with growing
// shared memory.
//
// result.txt in --out gets "N passed, N failed"; the screenshots stay there.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { check, tally, parseArgs, decodePng, pictureStats, pictureDifference, nameWasmFrames } from "./lib.mjs";
import { serve } from "./server.mjs";
import { makeFixtures } from "./fixtures.mjs";
import { PANELS } from "./model_suite.mjs";
import { makeRepos, cliRun, TEXT } from "./hub_suite.mjs";
import { serveHub } from "./hub_server.mjs";

const FIREFOX = process.env.FIREFOX ?? "/usr/bin/firefox-esr";
const WEBKIT_DRIVER = process.env.WEBKIT_DRIVER ?? "/usr/bin/WebKitWebDriver";
const MINIBROWSER = process.env.MINIBROWSER ?? "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser";
const WIDTH = 1280, HEIGHT = 800;

// Console errors, uncaught exceptions, rejections and resources that failed to load, recorded from
// the page's first script on (the test server puts this first in index.html's <head>).
const RECORDER = `<script>
(function () {
  var errors = window.__attnlabErrors = [], original = console.error;
  console.error = function () { errors.push("console: " + Array.prototype.map.call(arguments, String).join(" ")); return original.apply(console, arguments); };
  // A wasm trap's stack names its functions (wasm-function[N]: the build's .symbols file maps N).
  addEventListener("error", function (e) {
    var stack = e.error && e.error.stack ? " [stack: " + String(e.error.stack).split("\\n").slice(0, 16).join(" < ") + "]" : "";
    errors.push("uncaught: " + (e.message || (e.target && (e.target.src || e.target.href)) || e.type) + stack);
  }, true);
  addEventListener("unhandledrejection", function (e) { errors.push("unhandled rejection: " + String(e.reason)); });
  // Each Worker the page makes, and when (for checkWorkersUpFront).
  var workers = window.__attnlabWorkers = [], Native = window.Worker;
  if (Native) window.Worker = function (url, options) {
    workers.push({ url: String(url).split("/").pop(), at: performance.now() });
    return new Native(url, options);
  };
  if (Native) window.Worker.prototype = Native.prototype;
})();
</script>`;

// --- the two drivers, one interface ---------------------------------------------------------------
// { name, open(url), evaluate(fn, arg), screenshot() -> PNG, click(x, y), move(x, y), press(key),
//   driverErrors(), close() }. Coordinates are CSS pixels of the viewport.
async function firefox() {
  const { default: puppeteer } = await import("puppeteer-core");
  const browser = await puppeteer.launch({
    browser: "firefox", executablePath: FIREFOX, headless: false,  // headless Firefox has no WebGL2 here
    defaultViewport: { width: WIDTH, height: HEIGHT },
    env: { ...process.env, LIBGL_ALWAYS_SOFTWARE: "1" },
    extraPrefsFirefox: { "webgl.force-enabled": true, "webgl.disable-fail-if-major-performance-caveat": true },
  });
  const page = (await browser.pages())[0] ?? await browser.newPage();
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
  page.on("pageerror", (e) => errors.push(`uncaught: ${e.message ?? e}`));
  return {
    name: `Firefox ESR ${(await browser.version()).replace(/^\D*/, "")}`,
    open: (url) => page.goto(url, { waitUntil: "load" }),
    async evaluate(fn, arg) {
      // The page reloads itself once for its service worker: a context may vanish under us.
      for (let i = 0; ; i++) {
        try { return await page.evaluate(fn, arg); } catch (e) {
          if (i >= 20 || !/context|navigat|destroyed|Target closed|discarded/i.test(String(e))) throw e;
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    },
    screenshot: () => page.screenshot(),
    click: (x, y) => page.mouse.click(x, y),
    move: (x, y) => page.mouse.move(x, y),
    press: (key) => page.keyboard.press(key),
    driverErrors: () => errors.splice(0),
    close: () => browser.close(),
  };
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

async function webkit({ sharedArrayBuffer = true } = {}) {
  const { Builder, Key, Origin } = await import("selenium-webdriver");
  const port = await freePort();
  // The web process inherits the driver's environment: JavaScriptCore reads JSC_* options from it.
  const env = { ...process.env };
  if (sharedArrayBuffer) env.JSC_useSharedArrayBuffer = "1";
  const wd = spawn(WEBKIT_DRIVER, [`--port=${port}`], { stdio: "ignore", env });
  let driver;
  try {
    for (let i = 0; ; i++) {  // until the driver listens
      try {
        driver = await new Builder().usingServer(`http://127.0.0.1:${port}`).withCapabilities({
          browserName: "MiniBrowser", "webkitgtk:browserOptions": { binary: MINIBROWSER, args: ["--automation"] },
        }).build();
        break;
      } catch (e) {
        if (i >= 40) throw e;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  } catch (e) {
    wd.kill();
    throw e;
  }
  await driver.manage().window().setRect({ width: WIDTH, height: HEIGHT });
  const keys = { ArrowRight: Key.ARROW_RIGHT, ArrowLeft: Key.ARROW_LEFT, Escape: Key.ESCAPE, Enter: Key.ENTER };
  const version = await driver.getCapabilities().then((c) => c.get("browserVersion") ?? "");
  return {
    name: `WebKitGTK ${version}`,
    open: (url) => driver.get(url),
    async evaluate(fn, arg) {
      for (let i = 0; ; i++) {
        try { return await driver.executeScript(`return (${fn.toString()})(arguments[0]);`, arg === undefined ? null : arg); } catch (e) {
          if (i >= 20 || !/navigat|context|unload|null is not an object \(evaluating 'window.attnlab/i.test(String(e))) throw e;
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    },
    screenshot: async () => Buffer.from(await driver.takeScreenshot(), "base64"),
    click: (x, y) => driver.actions().move({ x: Math.round(x), y: Math.round(y), origin: Origin.VIEWPORT }).press().release().perform(),
    move: (x, y) => driver.actions().move({ x: Math.round(x), y: Math.round(y), origin: Origin.VIEWPORT }).perform(),
    press: (key) => driver.actions().sendKeys(keys[key] ?? key).perform(),
    driverErrors: () => [],  // WebKitWebDriver gives no console: the page's recorder has it all
    async close() { try { await driver.quit(); } finally { wd.kill(); } },
  };
}

// --- the smoke test, the same in both ----------------------------------------------------------
async function poll(d, fn, arg, timeout = 30000) {
  const t0 = Date.now();
  for (;;) {
    try { if (await d.evaluate(fn, arg)) return true; } catch { /* navigating */ }
    if (Date.now() - t0 > timeout) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}
const status = (d) => d.evaluate(() => window.attnlab.status());
const state = (d) => d.evaluate(() => window.attnlab.state());
// In the page: a model is loaded (from `source`, when given) and the pass over the text is done.
const forwardDone = (source) => {
  const st = window.attnlab && window.attnlab.status();
  return !!(st && st.ready && st.model.loaded && st.tokens > 0 && st.forward_tokens === st.tokens && (!source || st.model.source === source));
};

// Errors on the page so far (the recorder's and the driver's), emptied; a trap's wasm frames named
// from the symbol map of the build the page runs.
let siteDir = "dist";
async function pageErrors(d) {
  const recorded = await d.evaluate(() => (window.__attnlabErrors || []).splice(0)).catch(() => []);
  const errors = [...recorded, ...d.driverErrors()];
  if (!errors.some((e) => e.includes("wasm-function["))) return errors;
  const build = await d.evaluate(() => performance.getEntriesByType("resource").map((e) => e.name.split("/").pop())
    .find((n) => /^attnlab(-mt)?(-relaxed)?\.js$/.test(n))).catch(() => null);
  return build ? errors.map((e) => nameWasmFrames(e, path.join(siteDir, `${build}.symbols`))) : errors;
}

// Which build runs, and with how many threads: the threaded one wherever the page is isolated
// and the browser has SharedArrayBuffer, except in WebKit (web/index.html asks all three).
async function checkThreads(d, where) {
  const webkit = d.name.startsWith("WebKit");
  const info = await d.evaluate(() => ({
    isolated: window.crossOriginIsolated === true,
    sab: typeof SharedArrayBuffer === "function",
    cores: navigator.hardwareConcurrency,
    threads: window.attnlab.status().threads,
    note: window.attnlab.status().threads_note,
    scripts: performance.getEntriesByType("resource").map((e) => e.name.split("/").pop()).filter((n) => /^attnlab(-mt)?(-relaxed)?\.js$/.test(n)),
  }));
  const said = `${JSON.stringify(info.scripts)}, isolated ${info.isolated}, SharedArrayBuffer ${info.sab}, ${info.threads} threads, ` +
               `hardwareConcurrency ${info.cores}`;
  // The relaxed-SIMD builds (attnlab[-mt]-relaxed.js) are the same builds, loaded where the browser has relaxed SIMD.
  const threaded = info.scripts.some((n) => n.startsWith("attnlab-mt")), single = info.scripts.some((n) => !n.startsWith("attnlab-mt"));
  if (info.isolated && info.sab && !webkit) {
    check(threaded && !single && info.threads === Math.min(info.cores, 8),
          `${where}: isolated, so the threaded build runs with one thread per core (at most 8)`, said);
  } else {
    const because = !info.isolated ? "not isolated" : !info.sab ? "isolated but without SharedArrayBuffer" : "WebKit";
    check(single && !threaded && info.threads === 1, `${where}: ${because}, so the single-threaded build runs`, said);
  }
  // The page tells the reader why it has one thread (About, status().threads_note), and says nothing when it has more.
  const why = !info.isolated ? "not cross-origin isolated" : !info.sab ? "no SharedArrayBuffer" : webkit ? "?threads=on" : "";
  check(why === "" ? info.note === "" : typeof info.note === "string" && info.note.includes(why),
        `${where}: status().threads_note ${why ? `says "${why}"` : "is empty"}`, JSON.stringify(info.note));
  return info;
}

// The threaded build's workers all exist before the app's first frame: Emscripten makes one
// more whenever the app runs more threads than its pool holds, and that one loads attnlab-mt.js
// while the app runs. Leaving the page then cuts the load off (Firefox logs NS_BINDING_ABORTED
// on the next page), and a UI thread that waits for such a thread would wait for the event loop
// it blocks.
async function checkWorkersUpFront(d, where) {
  const info = await d.evaluate(() => {
    const first = performance.getEntriesByName("attnlab-first-frame")[0];
    const all = window.__attnlabWorkers || [];
    const threaded = performance.getEntriesByType("resource").some((e) => /\/attnlab-mt(-relaxed)?\.js$/.test(e.name));
    return { threaded, first: first ? first.startTime : null,
             made: all.length, late: all.filter((w) => /^attnlab-mt/.test(w.url) && (!first || w.at > first.startTime)) };
  });
  if (!info.threaded) return;
  check(info.first !== null && info.late.length === 0,
        `${where}: every pthread worker was made before the first frame (none later, while the app runs)`, JSON.stringify(info));
}

// WebKitGTK as Debian ships it, isolated but without SharedArrayBuffer: the page must see that,
// run the single-threaded build (the threaded one cannot start without it) and say why. Both as a
// server with COOP/COEP sends it and as a new reader gets it from a static host, through the
// service worker, on the first page and on a ?model= page after it: the same either way, so the
// service worker is not why WebKitGTK runs one thread (WebKit bug 317847 is).
async function withoutSharedArrayBuffer(d, { server, isolatedServer, tag }) {
  const small = `${server.origin}/models/small/model.safetensors`;
  const pages = [[`${isolatedServer.origin}/`, "served with COOP/COEP"], [`${server.origin}/`, "through the service worker, the first page"],
                 [`${server.origin}/?model=${encodeURIComponent(small)}`, "through the service worker, a ?model= page after it"]];
  for (const [url, how] of pages) {
    await d.open(url);
    const ready = await poll(d, () => window.attnlab && window.attnlab.status().ready, undefined, 60000);
    const info = ready && await checkThreads(d, `${tag} without JSC_useSharedArrayBuffer, ${how}`);
    console.log(`        without the option, ${how}: ${JSON.stringify(info)}`);
    check(info && info.isolated && !info.sab, `${tag} without JSC_useSharedArrayBuffer, ${how}: isolated, and no SharedArrayBuffer (WebKit bug 317847)`,
          JSON.stringify(info));
    const errors = await pageErrors(d);
    check(errors.length === 0, `${tag} without JSC_useSharedArrayBuffer, ${how}: no console error`, errors.join(" | "));
  }
}

async function smoke(d, { server, out, tag, hub, cli }) {
  const small = `${server.origin}/models/small/model.safetensors`;
  // 1. The plain page: the service worker's one reload, then the built-in model.
  const t0 = Date.now();
  await d.open(`${server.origin}/`);
  const loaded = await poll(d, forwardDone, undefined, 90000);
  let st = await status(d).catch(() => null);
  if (!check(loaded && st?.model?.builtin === true, `${tag}: the plain page opens on the built-in model and analyses its text`,
             `${((Date.now() - t0) / 1000).toFixed(1)} s; ${JSON.stringify({ model: st?.model, error: st?.error, ready: st?.ready })}`)) {
    await writeFile(path.join(out, `${tag}-not-loaded.png`), await d.screenshot());
    return;
  }
  console.log(`        first view with the built-in model analysed after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  check(st.error === "", `${tag}: no message in the banner`, st.error);
  await checkThreads(d, `${tag}, the plain page`);

  // 2. Every panel draws: each screenshot has a picture, and differs from the one before. First the
  // first view settles: it moves to the Attention map once the head grid is ready.
  await poll(d, () => window.attnlab.status().attention.thumbnails_ready && window.attnlab.state().panel === "attention", undefined, 30000);
  const failures = [];
  let before = null;
  for (const panel of PANELS) {
    const frames = (await status(d)).frames;
    const set = await d.evaluate((p) => window.attnlab.setState({ panel: p }), panel);
    // Shown, and two frames drawn since (the picture, not only the view state, has changed).
    const shown = await poll(d, ([p, f]) => window.attnlab.status().panel === p && window.attnlab.status().frames >= f + 2, [panel, frames], 10000);
    await poll(d, () => !window.attnlab.status().busy, undefined, 5000);  // the summaries, if they are quick
    await d.move(WIDTH - 3, HEIGHT - 3);  // no hover on a widget
    await new Promise((r) => setTimeout(r, 400));
    const shot = await d.screenshot();
    await writeFile(path.join(out, `${tag}-panel-${panel}.png`), shot);
    const png = decodePng(shot), stats = pictureStats(png);
    const changed = before ? pictureDifference(before, png) : 1;
    if (!shown) failures.push(`${panel}: not shown (setState: ${JSON.stringify(set)}, status().panel ${(await status(d)).panel}, ` +
                              `frames ${frames} -> ${(await status(d)).frames})`);
    else if (stats.colours < 30 || stats.inked < 0.03) failures.push(`${panel}: looks blank (${stats.colours} colours)`);
    else if (changed < 0.02) failures.push(`${panel}: the same picture as the panel before (${(changed * 100).toFixed(1)}% differs)`);
    before = png;
  }
  check(failures.length === 0, `${tag}: every panel draws (${PANELS.length} screenshots ${tag}-panel-*.png)`, failures.join("; "));

  // 3. The built-in tour, two steps: the second by the Right arrow, as a reader would.
  await d.evaluate(() => window.attnlab.startTour());
  const stepShown = (k) => poll(d, (k) => {
    const t = window.attnlab.status().tour;
    return t.playing && t.step === k && t.caption !== "" && !t.caption.includes("\u2026") && !window.attnlab.status().busy;
  }, k, 60000);
  const tour = await d.evaluate(() => window.attnlab.tour());
  const first = await stepShown(0);
  await d.move(WIDTH - 3, HEIGHT - 3);
  await d.press("ArrowRight");
  const second = first && await stepShown(1);
  st = await status(d);
  const view = await state(d);
  check(first && second && view.panel === tour.steps[1].view.panel && view.T === tour.steps[1].view.T,
        `${tag}: the built-in tour plays step 1, and the Right arrow shows step 2 with its view`,
        JSON.stringify({ step: st.tour.step, panel: view.panel, want: tour.steps[1].view.panel, caption: st.tour.caption.slice(0, 60) }));
  await writeFile(path.join(out, `${tag}-tour-step2.png`), await d.screenshot());
  let errors = await pageErrors(d);
  check(errors.length === 0, `${tag}: no console error on the plain page`, errors.join(" | "));

  // 4. ?model= loads a small random checkpoint.
  await d.open(`${server.origin}/?model=${encodeURIComponent(small)}`);
  const withModel = await poll(d, forwardDone, small, 60000);
  st = await status(d).catch(() => null);
  check(withModel && st.model.n_layer === 2 && st.model.n_head === 4 && st.model.n_embd === 64,
        `${tag}: ?model= loads the small random checkpoint (2 layers, 4 heads, 64 dims)`, JSON.stringify(st?.model ?? st));
  const threads = withModel && await checkThreads(d, `${tag}, the ?model= page`);
  const isolated = threads && threads.isolated && threads.sab;

  // 5. A share link made there reopens the same view, with the same model.
  const shared = { text: "Alice met Bob. Bob thanked Alice.", layer: 1, head: 3, query: 4, T: 0.5, N: 3, panel: "distance" };
  const applied = await d.evaluate((v) => window.attnlab.setState(v), shared);
  const link = await d.evaluate(() => window.attnlab.shareLink());
  await checkWorkersUpFront(d, `${tag}, the ?model= page, when it is left`);
  errors = await pageErrors(d);
  check(errors.length === 0, `${tag}: no console error on the ?model= page`, errors.join(" | "));
  await d.open(link);
  const reopened = await poll(d, forwardDone, small, 60000);
  const after = reopened ? await state(d) : null;
  const diffs = Object.entries(shared).filter(([k, v]) => after?.[k] !== v).map(([k, v]) => `${k}: ${JSON.stringify(after?.[k])} != ${JSON.stringify(v)}`);
  check(applied?.ok !== false && reopened && diffs.length === 0 && after.model === small && (await status(d)).panel === shared.panel,
        `${tag}: a share link reopens the same view and model`, `${String(link).slice(0, 60)}…; ${diffs.join("; ")}`);
  await writeFile(path.join(out, `${tag}-shared.png`), await d.screenshot());
  const threads2 = reopened && await checkThreads(d, `${tag}, the shared link's page`);
  const again = threads2 && threads2.isolated && threads2.sab;
  check(isolated && again, `${tag}: with its service worker the page is cross-origin isolated, with SharedArrayBuffer (the pages after the first)`,
        `?model= page ${JSON.stringify(threads)}, shared link's page ${JSON.stringify(threads2)}`);
  errors = await pageErrors(d);
  check(errors.length === 0, `${tag}: no console error on the shared link's page`, errors.join(" | "));
  await poll(d, () => window.attnlab.status().attention.thumbnails_ready && !window.attnlab.status().busy, undefined, 30000);
  await checkWorkersUpFront(d, `${tag}, the shared link's page, once idle`);

  // 6. A modern family by its Hugging Face name, from the stand-in hub: a Qwen3 reading the text
  // with its own tokenizer.json (the CLI's ids).
  const id = "test/qwen3-f16";
  await d.open(`${server.origin}/?hub=${encodeURIComponent(hub.origin)}&model=${id}`);
  const want = JSON.parse(cliRun(cli, ["tokenize", "--json", "--model", hub.repos[id]], TEXT));
  const modern = await poll(d, forwardDone, id, 60000);
  if (modern) await d.evaluate((t) => window.attnlab.setState({ text: t }), TEXT);
  const read = modern && await poll(d, (n) => { const s = window.attnlab.status(); return s.tokens === n && s.forward_tokens === n; },
                                    want.length, 30000);
  st = await status(d).catch(() => null);
  check(read && st.model.model_type === "qwen3" && st.model.dtype === "F16" && JSON.stringify(st.text.ids) === JSON.stringify(want),
        `${tag}: ?model=${id} opens a Qwen3 from a Hugging Face-style hub and reads the text with its tokenizer.json`,
        JSON.stringify({ model: st?.model, error: st?.error, ids: st?.text?.ids?.slice(0, 8), want: want.slice(0, 8) }));
  errors = await pageErrors(d);
  check(errors.length === 0, `${tag}: no console error on the Hugging Face model's page`, errors.join(" | "));
}

// The threaded build in WebKit, loaded many times in a row (--stress N): each load grows the
// shared memory while the worker pool runs, a ?model= checkpoint with a 1024-position context and
// then a long text over it. Once, an out-of-bounds access was seen here (issue 36); each load must
// analyse its text with more than one thread and log no error.
async function stress(d, { server, tag, loads }) {
  const long = `${server.origin}/models/long/model.safetensors`;
  const text = Array.from({ length: 700 }, (_, i) => ["In", "the", "beginning", "God", "created", "heaven", "and", "earth."][i % 8]).join(" ");
  await d.open(`${server.origin}/`);  // the service worker's one reload
  await poll(d, () => window.attnlab && window.attnlab.status().ready, undefined, 60000);
  const bad = [];
  let ms = 0;
  for (let k = 0; k < loads; ++k) {
    const t0 = Date.now();
    await d.open(`${server.origin}/?model=${encodeURIComponent(long)}&threads=on&load=${k}`);
    let ok = await poll(d, forwardDone, long, 90000);
    const threads = ok ? (await status(d)).threads : 0;
    if (ok) {
      await d.evaluate((t) => window.attnlab.setState({ text: t }), text);
      ok = await poll(d, () => { const st = window.attnlab.status(); return st.tokens > 500 && st.forward_tokens === st.tokens; }, undefined, 90000);
    }
    ms += Date.now() - t0;
    const errors = await pageErrors(d);
    if (!ok || threads < 2 || errors.length) bad.push(`load ${k + 1}: ${ok ? "analysed" : "not analysed"}, ${threads} threads; ${errors.join(" | ")}`);
  }
  console.log(`        ${loads} loads, ${(ms / loads / 1000).toFixed(1)} s each on average`);
  check(bad.length === 0, `${tag}: ${loads} loads of the ?model= page in a row, each analysed with threads and no error`, bad.join("; "));
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const site = path.resolve(args.site ?? "dist"), out = path.resolve(args.out ?? "build/e2e-engines");
  const cli = path.resolve(args.cli ?? "build/native/attnlab"), only = args.only ?? "all";
  siteDir = site;
  const t0 = Date.now();
  await mkdir(out, { recursive: true });
  await writeFile(path.join(out, "result.txt"), "0 passed, 1 failed\n");  // until the run ends
  if (!existsSync(path.join(site, "index.html"))) { console.error(`engines: no site at ${site}`); process.exit(2); }
  if (!process.env.DISPLAY) { console.error("engines: no display (run under xvfb-run)"); process.exit(2); }
  const loads = Number(args.stress ?? 0);  // --stress N: only the threaded WebKit page, loaded N times
  const fixtures = await makeFixtures(cli, { only: loads ? ["long"] : ["small"] });
  const server = await serve({ site, models: fixtures.dir, inject: RECORDER });
  const isolatedServer = await serve({ site, models: fixtures.dir, inject: RECORDER, isolated: true });
  const repos = await makeRepos(cli);
  const hub = await serveHub({ repos: repos.repos });
  hub.repos = repos.repos;
  const engines = [
    ["webkit", () => webkit({ sharedArrayBuffer: false }), MINIBROWSER, withoutSharedArrayBuffer],
    ["firefox", firefox, FIREFOX, smoke],
    ["webkit", webkit, MINIBROWSER, smoke],
  ].filter(([n]) => only === "all" || only === n);
  if (loads) engines.splice(0, engines.length, ["webkit", webkit, MINIBROWSER, stress]);
  for (const [tag, launch, binary, run] of engines) {
    const t1 = Date.now();
    console.log(`${tag}:`);
    if (!check(existsSync(binary), `${tag}: the browser is installed (${binary})`)) continue;
    let d = null;
    try {
      d = await launch();
      console.log(`        ${d.name}`);
      await run(d, { server, isolatedServer, out, tag, loads, hub, cli });
    } catch (e) {
      check(false, `${tag}: the smoke test ran to the end`, String(e?.stack ?? e).split("\n").slice(0, 3).join(" "));
    } finally {
      await d?.close().catch(() => {});
    }
    console.log(`  (${tag}: ${((Date.now() - t1) / 1000).toFixed(1)} s)`);
  }
  server.close();
  isolatedServer.close();
  hub.close();
  await fixtures.remove();
  await repos.remove();
  await writeFile(path.join(out, "result.txt"), `${tally.passed} passed, ${tally.failed} failed\n`);
  console.log(`Firefox and WebKit: ${tally.passed} passed, ${tally.failed} failed (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
  if (tally.failed) console.log(`failed:\n${tally.failures.map((f) => `  - ${f}`).join("\n")}`);
  process.exit(tally.failed === 0 ? 0 : 1);
}

main().catch((e) => { console.error("engines: crashed:", e); process.exit(1); });
