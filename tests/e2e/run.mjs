// Browser end-to-end test of the static site: headless Debian Chromium driven by playwright-core.
//
//   node tests/e2e/run.mjs --site dist --out build/e2e [--cli build/native/attnlab] [--only playground|model|tiny|twin|tour|plan|phone|hub|map|long]
//
// Serves the site on a free loopback port. First the plain page (which loads the built-in model,
// AttnLab tiny, by itself), at devicePixelRatio 1 and 2: the first frame arrives, nothing is logged as an error, the picture is not blank, the
// canvas is sharp (backing store = CSS size x DPR), the page goes idle, a drag on the playground's
// temperature slider changes the plotted values, keyboard and clipboard work, a resize is
// followed, and a browser without WebGL2 gets a readable message. Then, with small random
// checkpoints the native CLI writes into a temporary folder (model_suite.mjs): loading, typing,
// heads, temperature, export, share links, broken links and checkpoints, cancel, threads. Then
// the built-in model itself (tiny_suite.mjs): loaded with no click, a link made with it, a
// previous-token head marked in the grid, and "Load GPT-2 small" in one click. Its SSMax twin
// (twin_suite.mjs): the model menu, a link, one head against the CLI, the comparison. Then tours
// (tour_suite.mjs): the built-in tour played, a tour recorded and opened from its link, bad links.
// Then phones and tablets in mobile emulation (phone_suite.mjs): touch, the on-screen keyboard's
// text element, a pinch, small memory, and every panel's picture with nothing cut off. Then models
// opened by their Hugging Face name from a stand-in hub (hub_suite.mjs): sharded BF16 Llama, F16
// Qwen3, Qwen2 and GPT-2 checkpoints the CLI makes, their own tokenizers, progress, Cancel, errors, the cache.
// Firefox and WebKit have their own runner, engines.mjs.
// Screenshots and exported files stay in --out; result.txt gets "N passed, N failed".
import { mkdir, writeFile } from "node:fs/promises";
import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { chromium } from "playwright-core";
import { chromiumArgs, chromiumPath, check, tally, parseArgs, waitFor, widget, openTab, decodePng, pictureStats } from "./lib.mjs";
import { serve } from "./server.mjs";
import { makeFixtures } from "./fixtures.mjs";
import { visitorWithModel, malformedHashes, brokenModels, threadedAndSliced, serviceWorker } from "./model_suite.mjs";
import { labelSuite } from "./label_suite.mjs";
import { tinyModel } from "./tiny_suite.mjs";
import { twinSuite } from "./twin_suite.mjs";
import { tours } from "./tour_suite.mjs";
import { planSuite } from "./plan_suite.mjs";
import { phones } from "./phone_suite.mjs";
import { hubSuite } from "./hub_suite.mjs";
import { mapSuite } from "./map_suite.mjs";
import { longViews } from "./long_suite.mjs";

const args = parseArgs(process.argv.slice(2));
const site = path.resolve(args.site ?? "dist");
const out = path.resolve(args.out ?? "build/e2e");
const cli = path.resolve(args.cli ?? "build/native/attnlab");
const only = args.only ?? "all";

// --- one visit at a given pixel ratio --------------------------------------------------
const playground = (page) => page.evaluate(() => window.attnlab.status().playground);

async function visit(browser, url, dpr) {
  console.log(`devicePixelRatio ${dpr}:`);
  // No service worker: its one-time reload (for cross-origin isolation) is tested on its own.
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: dpr,
                                             serviceWorkers: "block" });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: url });
  const page = await context.newPage();
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  const failedRequests = [];  // judged at the end (see modelRequestsThatFailed)
  page.on("requestfailed", (r) => failedRequests.push({ url: r.url(), error: r.failure()?.errorText ?? "" }));

  // Hold the wasm back a moment, so the loading indicator can be seen doing its job.
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await page.route("**/attnlab*.wasm", async (route) => { await held; await route.continue(); });
  await page.goto(url);
  check(await page.isVisible("#loading"), "a loading indicator shows until the first frame");
  release();
  // An intercepted page aborts more of its fetches (below). The wasm may be held right now (the
  // page asks for it within a second or two): its handler lets it go first.
  await page.unrouteAll({ behavior: "wait" });
  const ready = await waitFor(page, () => window.attnlab && window.attnlab.status().ready, undefined, 60000);
  if (!check(ready, "window.attnlab.status().ready becomes true")) {
    await page.screenshot({ path: path.join(out, `not-ready-dpr${dpr}.png`) });
    await context.close();
    return;
  }
  check(await page.isHidden("#loading"), "the loading indicator is gone after the first frame");

  const size = await page.evaluate(() => {
    const c = document.getElementById("canvas"), r = c.getBoundingClientRect();
    return { w: c.width, h: c.height, cssW: r.width, cssH: r.height, dpr: devicePixelRatio, status: window.attnlab.status() };
  });
  check(size.cssW === 1280 && size.cssH === 800, "the canvas fills the window", `${size.cssW}x${size.cssH} CSS px`);
  check(size.w === Math.round(size.cssW * dpr) && size.h === Math.round(size.cssH * dpr),
        `the backing store is CSS size x ${dpr}`, `${size.w}x${size.h}`);
  check(size.status.pixel_ratio === dpr, "the UI is scaled by devicePixelRatio", `pixel_ratio ${size.status.pixel_ratio}`);

  const shot = await page.screenshot({ path: path.join(out, `playground-dpr${dpr}.png`) });
  const stats = pictureStats(decodePng(shot));
  check(stats.colours > 50 && stats.inked > 0.05, "the screenshot is not blank",
        `${stats.colours} colours, ${(stats.inked * 100).toFixed(1)}% of pixels differ from the background`);

  // Idle: with no input the page stops drawing, once the start-up work is done (the built-in
  // model loads by itself and analyses the start text; the head grid and the all-heads summaries
  // follow as separate tasks, so `busy` can read false for a frame between two of them: wait for
  // the main loop itself to pause).
  const settled = await waitFor(page, () => {
    const st = window.attnlab.status();
    return st.model.loaded && st.forward_tokens === st.tokens && !st.busy && st.idle;
  }, undefined, 60000);
  const startup = await page.evaluate(() => window.attnlab.status());
  check(settled && startup.model.builtin === true, "the plain page loads the built-in model and finishes its start-up work",
        JSON.stringify({ model: startup.model, tokens: startup.tokens, busy: startup.busy, error: startup.error }));
  await page.waitForTimeout(500);
  const f0 = (await page.evaluate(() => window.attnlab.status())).frames;
  await page.waitForTimeout(1000);
  const idle = await page.evaluate(() => window.attnlab.status());
  check(idle.idle === true && idle.frames === f0, "no frames are drawn while idle", `frames ${f0} -> ${idle.frames}, idle ${idle.idle}`);

  // Drag the playground's temperature slider to the left: T falls, the plotted values follow.
  check(await openTab(page, "playground"), "clicking the 'Softmax playground' tab opens it");
  await page.mouse.move(5, 5);
  await page.waitForTimeout(200);
  const before = await playground(page);
  const s = await widget(page, "playground.temperature");
  check(s.w > 20 && s.h > 5, "the temperature slider is on screen", JSON.stringify(s));
  await page.mouse.move(s.cx, s.cy);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) await page.mouse.move(s.x + s.w * (0.5 - 0.04 * i), s.cy);
  await page.mouse.up();
  const moved = await waitFor(page, (t) => window.attnlab.status().playground.T < t * 0.5, before.T);
  const after = await playground(page);
  check(moved, "dragging the temperature slider lowers T", `T ${before.T} -> ${after.T}`);
  check(after.jacobian_norm !== before.jacobian_norm && after.max_weight !== before.max_weight,
        "the plotted ||J||_2 and largest weight change with T",
        `||J|| ${before.jacobian_norm} -> ${after.jacobian_norm}, max weight ${before.max_weight} -> ${after.max_weight}`);
  await page.screenshot({ path: path.join(out, `after-drag-dpr${dpr}.png`) });

  // Keyboard: Ctrl+click a slider, type a value, press Enter.
  const len = await widget(page, "playground.length");
  await page.keyboard.down("Control");
  await page.mouse.click(len.cx, len.cy);
  await page.keyboard.up("Control");
  await page.keyboard.press("Control+A");
  await page.keyboard.type("1000");
  await page.keyboard.press("Enter");
  const typed = await waitFor(page, () => window.attnlab.status().playground.L === 1000);
  check(typed, "Ctrl+click on the length slider and typing 1000 sets L = 1000", `L = ${(await playground(page)).L}`);

  // Clipboard: paste a seed from the system clipboard, then copy it back out.
  await page.evaluate(() => navigator.clipboard.writeText("4242"));
  const seed = await widget(page, "playground.seed");
  await page.mouse.click(seed.x + seed.w * 0.2, seed.cy);
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Control+V");
  await page.keyboard.press("Enter");
  const pasted = await waitFor(page, () => window.attnlab.status().playground.seed === 4242);
  check(pasted, "Ctrl+V pastes the system clipboard into the seed field", `seed = ${(await playground(page)).seed}`);
  await page.evaluate(() => navigator.clipboard.writeText(""));
  await page.mouse.click(seed.x + seed.w * 0.2, seed.cy);
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Control+C");
  await page.keyboard.press("Escape");
  let copied = "";
  for (let i = 0; i < 20 && copied !== "4242"; i++) {
    await page.waitForTimeout(50);
    copied = await page.evaluate(() => navigator.clipboard.readText());
  }
  check(copied === "4242", "Ctrl+C copies the seed field to the system clipboard", JSON.stringify(copied));

  // Resize: the canvas and the UI follow.
  await page.setViewportSize({ width: 900, height: 640 });
  const followed = await waitFor(page, (d) => {
    const st = window.attnlab.status();
    return st.width === Math.round(900 * d) && st.height === Math.round(640 * d);
  }, dpr);
  const resized = await page.evaluate(() => window.attnlab.status());
  check(followed, "the UI follows a window resize", `${resized.width}x${resized.height} backing px`);
  await page.waitForTimeout(300);
  await page.screenshot({ path: path.join(out, `resized-dpr${dpr}.png`) });

  const st = await page.evaluate(() => window.attnlab.status());
  for (const f of failedRequests) if (!completedModelFetch(f, st)) errors.push(`request failed: ${f.url} ${f.error}`);
  check(errors.length === 0, "no console errors", errors.join(" | "));
  await context.close();
}

// Chromium here reports the built-in model's GET as net::ERR_ABORTED in about 2 visits of 5 even
// though every byte arrived and the model loaded (seen at 6353638 too, so not this page's code;
// fewer with the wasm route removed, never gone). Only that case is forgiven: the same URL, that
// error, and the page holding the built-in model with done_bytes equal to the file's size.
function completedModelFetch(f, st) {
  const file = path.join(site, "assets/tiny/model.safetensors");
  return new URL(f.url).pathname === "/assets/tiny/model.safetensors" && f.error === "net::ERR_ABORTED" &&
         st.model?.loaded && st.model?.builtin && st.model_fetch?.done_bytes === statSync(file).size;
}

// Runs one part of the test; a part that throws counts as one failure and the others still run.
async function part(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
  } catch (e) {
    check(false, `${name} ran to the end`, String(e?.stack ?? e).split("\n").slice(0, 3).join(" "));
  }
  console.log(`  (${name}: ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}

async function withoutWebgl2(url) {
  // A browser without WebGL2 gets a message, not a blank canvas.
  console.log("without WebGL2:");
  const plain = await chromium.launch({ executablePath: chromiumPath, args: [...chromiumArgs, "--disable-webgl2"] });
  try {
    const page = await plain.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(url);
    const shown = await waitFor(page, () => !document.getElementById("error").hidden);
    const text = shown ? await page.textContent("#error") : "";
    check(shown && /WebGL 2/.test(text), "a readable message explains that WebGL2 is missing", text.slice(0, 80));
    check(await page.evaluate(() => window.attnlab.status().ready === false), "status() reports not ready");
    check(errors.length === 0, "no script errors without WebGL2", errors.join(" | "));
    await page.screenshot({ path: path.join(out, "no-webgl2.png") });
  } finally {
    await plain.close();
  }
}

async function main() {
  const t0 = Date.now();
  if (!existsSync(path.join(site, "index.html"))) {
    console.error(`e2e: no site at ${site} (run ./build_wasm.sh build first)`);
    process.exit(2);
  }
  if (!existsSync(chromiumPath)) {
    console.error(`e2e: Chromium not found at ${chromiumPath} (apt-get install chromium)`);
    process.exit(2);
  }
  await mkdir(out, { recursive: true });
  await writeFile(path.join(out, "result.txt"), "0 passed, 1 failed\n");  // until the run ends

  let fixtures = null;
  if (only === "all" || only === "model" || only === "phone" || only === "plan" || only === "twin") {
    try {
      // The phone suite needs none; the plan suite's Cancel needs the long one; the twin suite a model with no twin.
      const some = { phone: [], plan: ["long"], twin: ["small"] }[only] ?? null;
      fixtures = await makeFixtures(cli, { only: some, extra: only === "model" || only === "plan" || only === "twin" ? [] : ["big"] });
      console.log(`e2e: checkpoints in ${fixtures.dir} (made by ${cli})`);
    } catch (e) {
      check(false, "the test checkpoints are made by the native CLI", String(e.message ?? e));
    }
  }
  const models = fixtures?.dir ?? out;
  const server = await serve({ site, models });
  const isolatedServer = await serve({ site, models, isolated: true });
  const url = `${server.origin}/`;
  console.log(`e2e: serving ${site} at ${url} (and with COOP/COEP at ${isolatedServer.origin}/)`);

  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  try {
    if (only === "all" || only === "playground") {
      await part("devicePixelRatio 1", () => visit(browser, url, 1));
      await part("devicePixelRatio 2", () => visit(browser, url, 2));
    }
    if (only === "all" || only === "tiny") await part("the built-in model", () => tinyModel({ browser, server, out }));
    if (only === "all" || only === "tiny") await part("labels under each built-in model", () => labelSuite({ browser, server }));
    if (only === "all" || only === "twin") await part("the SSMax twin", () => twinSuite({ browser, server, cli, out, hasFixtures: !!fixtures }));
    if (only === "all" || only === "tour") await part("tours", () => tours({ browser, server, out, cli }));
    if (only === "all" || only === "plan") await part("normalizers inside the model", () => planSuite({ browser, server, out, cli }));
    if ((only === "all" || only === "phone") && fixtures) await part("phones and tablets", () => phones({ browser, server, cli, out }));
    if (only === "all" || only === "hub") await part("models by their Hugging Face name", () => hubSuite({ browser, server, cli }));
    if (only === "all" || only === "hub" || only === "map") await part("a long text's attention map", () => mapSuite({ browser, server, cli }));
    if (only === "all" || only === "long") await part("long views at 8,000 tokens", () => longViews({ browser, server, cli }));
    if (fixtures && (only === "all" || only === "model")) {
      const env = { browser, server, isolatedServer, cli, out, siteHasThreads: existsSync(path.join(site, "attnlab-mt.js")) };
      await part("a visitor with a model", () => visitorWithModel(env));
      await part("malformed share links", () => malformedHashes(env));
      await part("broken checkpoints", () => brokenModels(env));
      await part("threads and slices", () => threadedAndSliced(env));
      if (existsSync(path.join(site, "sw.js"))) await part("service worker", () => serviceWorker(env));
      else check(false, "the site has a service worker (sw.js) for cross-origin isolation on static hosts");
    }
  } finally {
    await browser.close();
  }
  if (only === "all" || only === "playground") await part("without WebGL2", () => withoutWebgl2(url));
  server.close();
  isolatedServer.close();
  await fixtures?.remove();

  const seconds = ((Date.now() - t0) / 1000).toFixed(0);
  await writeFile(path.join(out, "result.txt"), `${tally.passed} passed, ${tally.failed} failed\n`);
  console.log(`browser e2e: ${tally.passed} passed, ${tally.failed} failed (${seconds} s)`);
  if (tally.failed) console.log(`failed:\n${tally.failures.map((f) => `  - ${f}`).join("\n")}`);
  process.exit(tally.failed === 0 ? 0 : 1);
}

main().catch((e) => { console.error("e2e: crashed:", e); process.exit(1); });
