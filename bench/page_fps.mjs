// Frames per second of the page while the temperature slider is dragged, with a GPT-2-small-
// shaped checkpoint (random weights, 124 M parameters) and a 256-token text, in headless
// Chromium. The target is at least 30 fps. A benchmark, not a test: nothing is asserted.
//
//   node bench/page_fps.mjs --site dist [--cli build/native/attnlab] [--checkpoint DIR]
//                           [--tokens 256] [--seconds 5] [--isolated]
//
// Without --checkpoint, the CLI writes the checkpoint (500 MB) into a temporary folder and it
// is removed afterwards. --isolated serves COOP/COEP headers (the threaded page, attnlab-mt.js).
//
// Two rates are reported: the app's own (status().frames over wall time: ImGui frames drawn)
// and the browser's (requestAnimationFrame callbacks of a separate counter in the page: how
// often the main thread got to a frame at all), with the frame-interval percentiles of the latter.
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "../tests/e2e/node_modules/playwright-core/index.mjs";
import { chromiumArgs, chromiumPath, parseArgs, waitFor, waitReady, waitForward, findWidget } from "../tests/e2e/lib.mjs";
import { serve } from "../tests/e2e/server.mjs";

const args = parseArgs(process.argv.slice(2));
const site = path.resolve(args.site ?? "dist");
const cli = path.resolve(args.cli ?? "build/native/attnlab");
const wantTokens = Number(args.tokens ?? 256);
const seconds = Number(args.seconds ?? 5);
const log = (...a) => console.error("page_fps:", ...a);

// A text of exactly `n` GPT-2 tokens: whole words, trimmed by the CLI's tokenizer.
function textOfTokens(n) {
  const words = [];
  for (let i = 0; words.length < n * 2; i++)
    words.push(...`The ${["quick", "tired", "old", "young"][i % 4]} fox ${["ran", "sat", "slept", "looked"][(i >> 2) % 4]} near the river bank, and then it went home again.`.split(" "));
  const count = (k) => JSON.parse(execFileSync(cli, ["tokenize", "--json"], { input: words.slice(0, k).join(" ") })).length;
  let lo = 1, hi = words.length;  // largest k with count(k) <= n
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (count(mid) <= n) lo = mid; else hi = mid - 1; }
  return { text: words.slice(0, lo).join(" "), tokens: count(lo) };
}

function percentile(sorted, p) { return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN; }

// Drags a slider back and forth for `seconds` and counts frames: the app's (status().frames)
// and the browser's (a requestAnimationFrame counter of its own in the page).
async function measureDrag(page, name) {
  const slider = await findWidget(page, name);
  if (!slider) throw new Error(`no ${name} widget`);
  await page.evaluate(() => {
    window.__fps = { times: [], on: true };
    const tick = (ts) => { if (!window.__fps.on) return; window.__fps.times.push(ts); requestAnimationFrame(tick); };
    requestAnimationFrame(tick);
  });
  const before = await page.evaluate(() => ({ frames: window.attnlab.status().frames, t: performance.now() }));
  await page.mouse.move(slider.x + slider.w / 2, slider.y + slider.h / 2);
  await page.mouse.down();
  const end = Date.now() + seconds * 1000;
  let moves = 0;
  for (let phase = 0; Date.now() < end; phase++) {
    const f = 0.5 + 0.3 * Math.sin(phase / 4);  // back and forth across the middle of the slider
    await page.mouse.move(slider.x + slider.w * f, slider.y + slider.h / 2);
    moves++;
  }
  await page.mouse.up();
  const after = await page.evaluate(() => {
    window.__fps.on = false;
    return { frames: window.attnlab.status().frames, t: performance.now(), times: window.__fps.times,
             reshape_ms: window.attnlab.status().attention?.reshape_ms };
  });
  const wall = (after.t - before.t) / 1000;
  const intervals = after.times.slice(1).map((x, i) => x - after.times[i]).sort((a, b) => a - b);
  return {
    app_fps: (after.frames - before.frames) / wall,
    raf_fps: (after.times.length - 1) / ((after.times.at(-1) - after.times[0]) / 1000),
    frame_ms_p50: percentile(intervals, 0.5), frame_ms_p95: percentile(intervals, 0.95), frame_ms_max: intervals.at(-1),
    mouse_moves: moves, drag_seconds: wall, last_reshape_ms: after.reshape_ms,
  };
}

async function main() {
  if (!existsSync(path.join(site, "index.html"))) throw new Error(`no site at ${site}`);
  let dir = args.checkpoint ? path.resolve(args.checkpoint) : null, made = null;
  if (!dir) {
    made = await mkdtemp(path.join(os.tmpdir(), "attnlab-fps-"));
    dir = path.join(made, "gpt2-random");
    execFileSync("mkdir", ["-p", dir]);
    log(`writing a GPT-2-small-shaped random checkpoint into ${dir}`);
    execFileSync(cli, ["random-checkpoint", "--out", dir], { stdio: ["ignore", "ignore", "inherit"] });
  }
  const { text, tokens } = textOfTokens(wantTokens);
  log(`a text of ${tokens} tokens`);
  // The server maps /models/<name>/ to folders under `models`: serve the checkpoint's parent.
  const server = await serve({ site, models: path.dirname(dir), isolated: !!args.isolated });
  const modelUrl = `${server.origin}/models/${path.basename(dir)}/model.safetensors`;
  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  const result = {};
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
    const page = await context.newPage();
    page.on("pageerror", (e) => log("page error:", String(e)));
    // The baseline: the same drag on the playground's slider, before any model (what drawing
    // a frame costs here, whatever the panel).
    await page.goto(`${server.origin}/`);
    if (!(await waitReady(page))) throw new Error("the page did not start");
    await page.evaluate(() => window.attnlab.setState({ panel: "playground" }));
    await page.waitForTimeout(300);
    result.baseline = await measureDrag(page, "playground.temperature");
    let t = Date.now();
    await page.goto(`${server.origin}/?model=${encodeURIComponent(modelUrl)}`);
    if (!(await waitReady(page))) throw new Error("the page did not start");
    if (!(await waitFor(page, () => window.attnlab.status().model.loaded, undefined, 300000)))
      throw new Error(`the model did not load: ${JSON.stringify(await page.evaluate(() => window.attnlab.status().model_fetch))}`);
    result.load_seconds = (Date.now() - t) / 1000;
    log(`model loaded in ${result.load_seconds.toFixed(1)} s`);

    // The text, then the attention panel with a head in the middle of the model.
    t = Date.now();
    await page.evaluate((v) => window.attnlab.setState(v), { text, panel: "attention", layer: 5, head: 3, T: 1 });
    if (!(await waitForward(page, 300000))) throw new Error("the forward pass did not finish");
    result.forward_seconds = (Date.now() - t) / 1000;
    result.tokens = (await page.evaluate(() => window.attnlab.status().tokens));
    // Let the thumbnails and all-heads summaries finish, so the drag is measured alone (keep the
    // page awake with small mouse moves, in case it pauses between frames).
    t = Date.now();
    for (let i = 0; i < 600 && (await page.evaluate(() => window.attnlab.status().busy)); i++) {
      await page.mouse.move(2 + (i % 2), 2);
      await page.waitForTimeout(500);
    }
    result.background_seconds = (Date.now() - t) / 1000;
    log(`forward ${result.forward_seconds.toFixed(1)} s over ${result.tokens} tokens; background work ${result.background_seconds.toFixed(1)} s`);

    Object.assign(result, await measureDrag(page, "attention.temperature"));
    result.isolated = await page.evaluate(() => window.crossOriginIsolated);
    await page.screenshot({ path: path.join(os.tmpdir(), "attnlab-page-fps.png") });
    await context.close();
  } finally {
    result.chromium = browser.version();
    await browser.close();
    server.close();
    if (made) await rm(made, { recursive: true, force: true });
  }
  result.machine = `${os.cpus()[0]?.model ?? "?"}, ${os.cpus().length} cores, load average ${os.loadavg().map((x) => x.toFixed(1)).join(" ")}`;
  const r = (x, d = 1) => (typeof x === "number" ? x.toFixed(d) : String(x));
  console.log(`page_fps: ${r(result.app_fps)} app fps, ${r(result.raf_fps)} rAF fps while dragging T ` +
              `(frame interval p50 ${r(result.frame_ms_p50)} ms, p95 ${r(result.frame_ms_p95)} ms, max ${r(result.frame_ms_max)} ms; ` +
              `re-shape ${r(result.last_reshape_ms, 2)} ms), L = ${result.tokens}, ${result.isolated ? "threaded" : "single-threaded"} page; target >= 30 fps`);
  console.log(`page_fps: baseline, the playground's slider without a model: ${r(result.baseline?.app_fps)} app fps, ` +
              `${r(result.baseline?.raf_fps)} rAF fps (p50 ${r(result.baseline?.frame_ms_p50)} ms)`);
  console.log(JSON.stringify(result));
}

main().catch((e) => { console.error("page_fps: failed:", e); process.exit(1); });
