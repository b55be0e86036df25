// How fast the page loads a GPT-2-small-sized checkpoint from 127.0.0.1, beside curl and beside a
// bare fetch() loop in the same browser, in one run (issue 13, point 3). A benchmark, not a test.
//
//   node bench/page_load.mjs --site dist --checkpoint build/bench_onnx/ckpt [--isolated] [--repo] [--forward N] [--network MBPS | --pace MBPS]
//
// --repo: the link names the model by a repository id (?model=ORG/NAME, as the menu and share links
// do), served in Hugging Face's URL layout by the browser tests' stand-in hub, instead of by the
// file's address; the blank page's fetch() then reads the same file from the hub.
//
// The checkpoint folder (model.safetensors + config.json) is what `attnlab random-checkpoint` writes.
// Every browser run gets a fresh profile, so Cache Storage starts empty (the app's, one on disk).
// Reported: curl's time; a fetch() that reads the body in a page of the same origin and throws it
// away; the same into one ArrayBuffer; the app's ?model= from navigation until status().model.loaded,
// with the page's clock at each step and until the copy in Cache Storage is complete; and a reload
// then, from that copy.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdtemp, rm, symlink } from "node:fs/promises";
import { existsSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "../tests/e2e/node_modules/playwright-core/index.mjs";
import { chromiumArgs, chromiumPath, parseArgs, waitFor } from "../tests/e2e/lib.mjs";
import { serve } from "../tests/e2e/server.mjs";
import { serveHub } from "../tests/e2e/hub_server.mjs";
import { selfTimes, topFunctions, totalMs } from "./chrome_profile.mjs";

const args = parseArgs(process.argv.slice(2));
const site = path.resolve(args.site ?? "dist");
const checkpoint = path.resolve(args.checkpoint ?? "build/bench_onnx/ckpt");
const isolated = "isolated" in args;
const forward = Number(args.forward ?? 512);  // tokens of the timed forward pass (0: none)
// --network MBPS: the app's run gets a network of that many MB/s (Chromium's own throttling, for
// the whole page: its scripts, the wasm and the model), as a visitor has, instead of loopback speed.
const network = Number(args.network ?? 0);
// --pace MBPS: the server itself sends every response over one shared link of that many MB/s, so that
// curl and the browser (the page, its wasm and the model) meet the same network, and the ratio to curl
// says what the page adds at a visitor's speed rather than at loopback's.
const pace = Number(args.pace ?? 0);
if (pace > 0 && network > 0) throw new Error("page_load.mjs: --pace and --network are two ways to slow the network; give one");
const mb = (bytes) => bytes / 1e6;
// --profile: Chrome's sampling profiler on the app's page during its load, summarised by phase
// (the page's clock marks) and by the functions that took the main thread's time.
const profiling = "profile" in args;
// --quick: no wait for the copy in Cache Storage, and no reload from it.
const quick = "quick" in args;
const REPO = "bench/page-load";
const byName = "repo" in args;

// A forward pass in the page over about `n` tokens of text, once the page is quiet: the page's own
// pass (sliced between frames in the single-threaded page, on the worker pool in the threaded one).
async function timeForward(page, n) {
  await waitFor(page, () => !window.attnlab.status().busy, undefined, 600000);
  const words = Array.from({ length: Math.round(n * 8 / 9) }, (_, i) => ["the", "cat", "sat", "on", "a", "mat", "and", "then", "ran"][i * 7 % 9]);
  const text = words.join(" ").replace(/(\S+ \S+ \S+ \S+ \S+ \S+ \S+ \S+)/g, "$1.");
  const r = await page.evaluate(async (text) => {
    const before = window.attnlab.status().tokens;
    const t0 = performance.now();
    window.attnlab.setState({ text });
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      const s = window.attnlab.status();
      if (s.tokens !== before && s.forward_tokens === s.tokens) return { ms: performance.now() - t0, tokens: s.tokens, threads: s.threads };
      if (performance.now() - t0 > 600000) return { ms: NaN, tokens: s.tokens, threads: s.threads };
    }
  }, text);
  console.log(`a forward pass in the page over ${r.tokens} tokens, ${r.threads} thread${r.threads === 1 ? "" : "s"}: ${(r.ms / 1000).toFixed(2)} s`);
}

// The main thread's samples between consecutive marks, by what ran: the functions (and wasm
// functions) with the most self time in each phase, and the idle share.
function summariseProfile(p, marks, timeOrigin, profiledAt) {
  // Profile times count from the profile's start; the profiler started (wall clock `profiledAt`)
  // just before the navigation whose time origin is the page clock's zero.
  const offset = timeOrigin - profiledAt;
  const cut = Object.entries(marks).sort((a, b) => a[1] - b[1]);
  const phases = [["before the first mark", -Infinity], ...cut.map(([k, v]) => [`after ${k}`, v])];
  const self = selfTimes(p, (ms) => {
    let ph = 0;
    while (ph + 1 < phases.length && phases[ph + 1][1] <= ms - offset) ph++;
    return ph;
  });
  phases.forEach(([label], i) => {
    if (!self[i] || totalMs(self[i]) < 1) return;
    console.log(`  profile, ${label} (${totalMs(self[i]).toFixed(0)} ms sampled): ${topFunctions(self[i], 12)}`);
  });
}

async function main() {
  for (const need of [path.join(site, "index.html"), path.join(checkpoint, "model.safetensors")])
    if (!existsSync(need)) throw new Error(`page_load.mjs: ${need} is missing`);
  const size = statSync(path.join(checkpoint, "model.safetensors")).size;
  const models = await mkdtemp(path.join(os.tmpdir(), "attnlab-load-"));
  await symlink(checkpoint, path.join(models, "big"));
  const server = await serve({ site, models, isolated, paceBytesPerSecond: pace * 1e6 });
  const hub = byName ? await serveHub({ repos: { [REPO]: checkpoint } }) : null;
  const url = byName ? `${hub.origin}/${REPO}/resolve/main/model.safetensors` : `${server.origin}/models/big/model.safetensors`;
  const fileGets = () => (byName ? hub.gets(REPO, "model.safetensors") : server.downloads("/models/big/model.safetensors"));
  // sw=0: the page as the server sends it. Without it, a plain page whose service worker the browser
  // blocks (as here) waits 3 s for it before starting; a visitor's browser instead registers it and
  // reloads once into the threaded page (--isolated measures that one).
  const appUrl = byName ? `${server.origin}/?sw=0&hub=${encodeURIComponent(hub.origin)}&model=${REPO}`
                       : `${server.origin}/?sw=0&model=${encodeURIComponent(url)}`;
  console.log(`# page load, ${new Date().toISOString()}: ${mb(size).toFixed(1)} MB from ${url}${byName ? ` (the link names ${REPO})` : ""}` +
              `${isolated ? ", COOP/COEP (threaded page)" : ""}` +
              (pace > 0 ? `, every response over one ${pace} MB/s link (the model alone: ${(mb(size) / pace).toFixed(1)} s at that rate)` : ""));
  console.log(`machine: ${os.cpus()[0].model}, ${os.cpus().length} cores; load average before: ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`);

  // Asynchronously: the server runs in this process's event loop.
  const curl = Number((await promisify(execFile)("curl", ["-s", "-o", "/dev/null", "-w", "%{time_total}", url])).stdout);
  console.log(`curl: ${curl.toFixed(2)} s (${(mb(size) / curl).toFixed(0)} MB/s)`);

  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
  try {
    // The same fetch() loop in a page of its own, and in the app's page with its frame loop running
    // (no model asked for): the difference is what the frames cost a download on the main thread.
    const bareFetch = (page, keep) => page.evaluate(async ({ url, keep }) => {
      const t0 = performance.now();
      const response = await fetch(url);
      const reader = response.body.getReader();
      const total = Number(response.headers.get("content-length"));
      const into = keep ? new Uint8Array(total) : null;
      let done = 0, chunks = 0;
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        if (into) into.set(value, done);
        done += value.length;
        chunks++;
      }
      return { seconds: (performance.now() - t0) / 1000, bytes: done, chunks };
    }, { url, keep });
    const report = (what, r) => console.log(`${what}: ${r.seconds.toFixed(2)} s (${(mb(r.bytes) / r.seconds).toFixed(0)} MB/s, ` +
                                             `${r.chunks} chunks of ${(r.bytes / r.chunks / 1024).toFixed(0)} KB on average)`);
    let ceiling = NaN;  // the blank page's fetch(), bytes thrown away: issue 38's yardstick
    for (const keep of [false, true]) {
      const context = await browser.newContext({ serviceWorkers: "block" });
      const page = await context.newPage();
      await page.goto(`${server.origin}/models/big/config.json`);
      const r = await bareFetch(page, keep);
      if (!keep) ceiling = r.seconds;
      report(`fetch() in a blank page, ${keep ? "copied into one ArrayBuffer" : "bytes thrown away"}`, r);
      await context.close();
    }
    {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
      const page = await context.newPage();
      await page.goto(`${server.origin}/?sw=0`);
      await waitFor(page, () => window.attnlab?.status?.().ready, undefined, 60000);
      const before = await page.evaluate(() => window.attnlab.status().frames);
      const r = await bareFetch(page, false);
      const frames = (await page.evaluate(() => window.attnlab.status().frames)) - before;
      report(`fetch() in the app's page while it draws (${frames} frames meanwhile), bytes thrown away`, r);
      await context.close();
    }

    // The app in a profile of its own on disk, as a visitor's browser is: an incognito context's
    // Cache Storage refuses a model of this size, so the copy for the next visit would fail there.
    const profile = await mkdtemp(path.join(os.tmpdir(), "attnlab-profile-"));
    const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, args: chromiumArgs, headless: true,
                                                                      viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
    const page = context.pages()[0] ?? await context.newPage();
    // Where the time goes: the page's own clock (ms since navigation) at each step of the load.
    await page.addInitScript(() => {
      const marks = window.__loadMarks = {};
      const mark = (k) => { if (!(k in marks)) marks[k] = performance.now(); };
      const poll = setInterval(() => {
        const s = window.attnlab?.status?.();
        if (!s) return;
        if (s.ready) mark("first frame");
        const f = s.model_fetch;
        if (f?.phase === "downloading") mark("download started");
        if (f?.phase === "downloading" && f.total_bytes > 0 && f.done_bytes >= f.total_bytes) mark("all bytes in the heap");
        if (s.model?.loaded && !s.model.builtin) mark("model loaded");
        if (f?.cache_copy === "kept") { mark("copy kept in Cache Storage"); clearInterval(poll); }
      }, 25);  // status() walks the heap (mallinfo): polled every 5 ms, it took 10% of the main thread
    });
    if (network > 0) {
      const cdp = await context.newCDPSession(page);
      await cdp.send("Network.enable");
      await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 20, downloadThroughput: network * 1e6,
                                                           uploadThroughput: network * 1e6 });
      console.log(`the app's run: a ${network} MB/s network with 20 ms latency (the model alone: ` +
                  `${(mb(size) / network).toFixed(1)} s at that rate)`);
    }
    let cpu = null, profiledAt = 0;
    if (profiling) {
      cpu = await context.newCDPSession(page);
      await cpu.send("Profiler.enable");
      await cpu.send("Profiler.setSamplingInterval", { interval: 500 });
      await cpu.send("Profiler.start");
      profiledAt = Date.now();
    }
    const t0 = Date.now();
    await page.goto(appUrl);
    // The checkpoint asked for, or a failure: a page that could not load it falls back to its
    // built-in model (which once passed here for a 2.47 GB file that had failed).
    const loaded = await waitFor(page, () => {
      const s = window.attnlab?.status?.();
      return (s?.model?.loaded && !s.model.builtin) || (s?.error && s?.model?.builtin);
    }, undefined, 600000);
    const seconds = (Date.now() - t0) / 1000;
    const status = await page.evaluate(() => window.attnlab.status());
    if (status.model.builtin) throw new Error(`page_load.mjs: the page did not load the checkpoint: ${status.error}`);
    if (status.error) console.log(`the page says: ${status.error}`);
    console.log(`the app, ?model=, navigation to model.loaded: ${loaded ? seconds.toFixed(1) + " s" : "not loaded in 600 s"} ` +
                `(${(mb(size) / seconds).toFixed(1)} MB/s; page load included); frames drawn: ${status.frames}; ` +
                `model_fetch: ${JSON.stringify(status.model_fetch)}`);
    if (!quick) await waitFor(page, () => window.attnlab.status().model_fetch.cache_copy !== "saving", undefined, 600000);
    // The model's request (when it reached the server: the page reads it in a worker, which the
    // page's resource timing does not list) and the app's first frame (its mark): with the early
    // start (web/model_fetch.js), the request comes first.
    const { marks, timeOrigin } = await page.evaluate(() => {
      const m = { ...window.__loadMarks };
      const frame = performance.getEntriesByName("attnlab-first-frame", "mark")[0];
      if (frame) m["first frame drawn (mark)"] = frame.startTime;
      for (const e of performance.getEntriesByType("mark")) if (e.name.startsWith("attnlab-") && e.name !== "attnlab-first-frame") m[e.name] = e.startTime;
      return { marks: m, timeOrigin: performance.timeOrigin };
    });
    if (!byName) marks["model request at the server"] = server.lastDownloadAt("/models/big/model.safetensors") - timeOrigin;
    console.log("the page's clock: " + Object.entries(marks).sort((a, b) => a[1] - b[1])
      .map(([k, v]) => `${k} ${(v / 1000).toFixed(2)} s`).join(", "));
    console.log(`ratio to curl: ${(seconds / curl).toFixed(1)}x (issue 13's target: within 1.5x); ` +
                `to the blank page's fetch(): ${(seconds / ceiling).toFixed(2)}x (issue 38's target: within 2x)`);
    if (cpu) summariseProfile((await cpu.send("Profiler.stop")).profile, marks, timeOrigin, profiledAt);
    if (quick) { await context.close(); await rm(profile, { recursive: true, force: true }); return; }
    // A reload once the copy is kept: the model comes from Cache Storage.
    const gets = fileGets();
    const t1 = Date.now();
    await page.goto(appUrl);
    const again = await waitFor(page, () => window.attnlab?.status?.().model?.loaded, undefined, 600000);
    const fetched = await page.evaluate(() => window.attnlab.status().model_fetch);
    console.log(`a reload once the copy is kept: ${again ? ((Date.now() - t1) / 1000).toFixed(1) + " s" : "not loaded in 600 s"}, ` +
                `${fileGets() - gets} new downloads, cached: ${fetched.cached}`);
    if (forward > 0) await timeForward(page, forward);
    await context.close();
    await rm(profile, { recursive: true, force: true });
  } finally {
    await browser.close();
    server.close();
    if (hub) hub.close();
    await rm(models, { recursive: true, force: true });
  }
  console.log(`load average after: ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
}

main().catch((e) => { console.error(e); process.exit(1); });
