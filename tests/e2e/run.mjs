// Browser end-to-end test of the static site: headless Debian Chromium driven by playwright-core.
//
//   node tests/e2e/run.mjs --site dist --out build/e2e
//
// Serves the site on a free loopback port, opens it at devicePixelRatio 1 and 2, and checks
// what a visitor would see: the first frame arrives, nothing is logged as an error, the
// picture is not blank, the canvas is sharp (backing store = CSS size x DPR), the page goes
// idle, a drag on the temperature slider changes the plotted values, a resize is followed,
// and a browser without WebGL2 gets a readable message. Screenshots stay in --out.
import { createServer } from "node:http";
import { readFile, mkdir, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { inflateSync } from "node:zlib";
import { chromium } from "playwright-core";

const args = Object.fromEntries(
  process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const site = path.resolve(args.site ?? "dist");
const out = path.resolve(args.out ?? "build/e2e");
const chromiumPath = process.env.CHROMIUM ?? "/usr/bin/chromium";

// Flags that work as root in this sandbox: SwiftShader for WebGL2, and no background
// networking (the network is closed, so those connections only produce noise).
const chromiumArgs = [
  "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--disable-quic",
  "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

let passed = 0, failed = 0;
function check(ok, what, detail = "") {
  if (ok) { passed++; console.log(`  ok    ${what}`); }
  else { failed++; console.log(`  FAIL  ${what}${detail ? `: ${detail}` : ""}`); }
  return ok;
}

// --- a static server for the site ------------------------------------------------------
const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".wasm": "application/wasm",
                ".json": "application/json", ".png": "image/png", ".txt": "text/plain", ".data": "application/octet-stream" };
function serve(root) {
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, "http://localhost");
    let file = path.join(root, decodeURIComponent(url.pathname));
    if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
    if (url.pathname.endsWith("/")) file = path.join(file, "index.html");
    try {
      const body = await readFile(file);
      res.writeHead(200, { "content-type": types[path.extname(file)] ?? "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(404).end("not found");
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

// --- just enough PNG decoding to look at a screenshot's pixels ----------------------------
function decodePng(buf) {
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
function pictureStats(png) {
  const counts = new Map();
  for (let i = 0; i < png.px.length; i += png.channels * 3) {  // every third pixel is plenty
    const key = (png.px[i] << 16) | (png.px[i + 1] << 8) | png.px[i + 2];
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const top = Math.max(...counts.values());
  return { colours: counts.size, inked: 1 - top / total };
}

async function waitFor(page, fn, arg, timeout = 10000) {
  try { await page.waitForFunction(fn, arg, { timeout, polling: 50 }); return true; } catch { return false; }
}

// --- one visit at a given pixel ratio --------------------------------------------------
// Centre of a widget the app reports in status().widgets (CSS pixels).
async function widget(page, name) {
  const r = (await page.evaluate(() => window.attnlab.status().widgets))[name];
  if (!r) throw new Error(`status().widgets has no '${name}'`);
  return { ...r, cx: r.x + r.w / 2, cy: r.y + r.h / 2 };
}

const playground = (page) => page.evaluate(() => window.attnlab.status().playground);

async function visit(browser, url, dpr) {
  console.log(`devicePixelRatio ${dpr}:`);
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: dpr });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: url });
  const page = await context.newPage();
  const errors = [];
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("requestfailed", (r) => errors.push(`request failed: ${r.url()}`));

  // Hold the wasm back a moment, so the loading indicator can be seen doing its job.
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await page.route("**/attnlab.wasm", async (route) => { await held; await route.continue(); });
  await page.goto(url);
  check(await page.isVisible("#loading"), "a loading indicator shows until the first frame");
  release();
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

  // Idle: with no input the page stops drawing.
  await page.waitForTimeout(500);
  const f0 = (await page.evaluate(() => window.attnlab.status())).frames;
  await page.waitForTimeout(1000);
  const idle = await page.evaluate(() => window.attnlab.status());
  check(idle.idle === true && idle.frames === f0, "no frames are drawn while idle", `frames ${f0} -> ${idle.frames}, idle ${idle.idle}`);

  // Drag the temperature slider to the left: T falls, the plotted values follow.
  const before = idle.playground;
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

  check(errors.length === 0, "no console errors", errors.join(" | "));
  await context.close();
}

async function main() {
  if (!existsSync(path.join(site, "index.html"))) {
    console.error(`e2e: no site at ${site} (run ./build_wasm.sh build first)`);
    process.exit(2);
  }
  if (!existsSync(chromiumPath)) {
    console.error(`e2e: Chromium not found at ${chromiumPath} (apt-get install chromium)`);
    process.exit(2);
  }
  await mkdir(out, { recursive: true });
  const server = await serve(site);
  const url = `http://127.0.0.1:${server.address().port}/`;
  console.log(`e2e: serving ${site} at ${url}`);

  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  try {
    await visit(browser, url, 1);
    await visit(browser, url, 2);
  } finally {
    await browser.close();
  }

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
  server.close();

  await writeFile(path.join(out, "result.txt"), `${passed} passed, ${failed} failed\n`);
  console.log(`browser e2e: ${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

main().catch((e) => { console.error("e2e: crashed:", e); process.exit(1); });
