// Every plot's PNG and CSV export, through the plots' own export menus, for comparing two builds
// pixel for pixel (a refactor of the plot kit must not move a pixel it did not mean to move).
//
//   node tests/e2e/plot_snapshots.mjs --site dist --out DIR [--views start,other]   # export every plot into DIR
//   node tests/e2e/plot_snapshots.mjs --compare DIR_BEFORE DIR_AFTER   # compare two such folders
//
// The page opens on the built-in model (headless Chromium, 1400 x 1400 CSS px so that each panel's
// plots are all on screen), then goes through a few views (setState) and every panel of each, and
// saves each plot's export as DIR/<view>/<panel>/<plot>.{png,csv}. --compare prints, per file,
// "same" or how many pixels (or CSV lines) differ, writes a side-by-side PNG of each differing
// picture (before | after | difference in red) into DIR_AFTER/diff/, and exits 1 when anything differs.
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { deflateSync } from "node:zlib";
import path from "node:path";
import { chromium } from "playwright-core";
import { chromiumArgs, chromiumPath, decodePng, parseArgs, waitFor } from "./lib.mjs";
import { serve } from "./server.mjs";

const PANELS = ["text", "attention", "distance", "separability", "gradient", "playground"];
// The start view, then views that draw other kinds of series (another head and query, other N, T,
// normalizer and eps).
const VIEWS = {
  start: null,
  other: { layer: 1, head: 2, query: 40, N: 12, T: 0.5, normalizer: "sparsemax", eps: 0.1 },
  late: { layer: 3, head: 0, query: -1, N: 2, T: 2, normalizer: "ssmax", eps: 10 },
};

const settle = (page) => waitFor(page, () => {
  const st = window.attnlab?.status();
  return st?.ready && st.model?.loaded && st.forward_tokens === st.tokens && !st.busy && st.idle;
}, undefined, 120000);

async function openTab(page, panel) {
  await page.evaluate((p) => window.attnlab.setState({ panel: p }), panel);
  await waitFor(page, (p) => window.attnlab.status().panel === p, panel, 5000);
  await page.mouse.move(2, 2);
  await settle(page);
  await page.waitForTimeout(150);
}

// Right-click the plot next to its export button, then choose the item; the download is the export,
// saved in `dir` under the name the app gives it (the plot's own name). status().widgets keeps the
// places of plots drawn on other panels too: a click there opens no menu (null), or another plot's
// (saved under that plot's name).
async function exportPlot(page, button, item, dir) {
  const b = (await page.evaluate(() => window.attnlab.status().widgets))[button];
  if (!b) return false;
  await page.mouse.move(b.x - b.w * 2, b.y + b.h * 2);
  await page.mouse.click(b.x - b.w * 2, b.y + b.h * 2, { button: "right" });
  const open = await waitFor(page, (name) => {
    const r = window.attnlab.status().widgets[name];
    return r && r.w > 0;
  }, item, 3000);
  if (!open) { await page.keyboard.press("Escape"); return null; }
  await page.waitForTimeout(100);
  const r = (await page.evaluate(() => window.attnlab.status().widgets))[item];
  const downloadP = page.waitForEvent("download", { timeout: 8000 }).catch(() => null);
  await page.mouse.click(r.x + r.w / 2, r.y + r.h / 2);
  const download = await downloadP;
  if (!download) return null;
  const name = download.suggestedFilename();
  await download.saveAs(path.join(dir, name));
  await page.mouse.move(2, 2);
  await settle(page);
  return name;
}

async function snapshot(site, out, only) {
  const server = await serve({ site, models: out });
  const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  let saved = 0;
  try {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1400 }, deviceScaleFactor: 1,
                                               serviceWorkers: "block", acceptDownloads: true });
    const page = await context.newPage();
    await page.goto(`${server.origin}/`);
    if (!(await settle(page))) throw new Error("the page did not load the built-in model and settle");
    for (const [view, state] of Object.entries(VIEWS).filter(([name]) => !only || only.includes(name))) {
      if (state) await page.evaluate((s) => window.attnlab.setState(s), state);
      for (const panel of PANELS) {
        await openTab(page, panel);
        const dir = path.join(out, view, panel);
        await mkdir(dir, { recursive: true });
        const buttons = Object.keys(await page.evaluate(() => window.attnlab.status().widgets))
          .filter((k) => /^plot\..+\.export$/.test(k)).sort();
        const files = new Set();
        for (const button of buttons) {
          for (const item of ["plot.export_png", "plot.export_csv"]) {
            const name = await exportPlot(page, button, item, dir);
            if (name) files.add(name);
          }
        }
        saved += files.size;
        console.log(`${view}/${panel}: ${files.size} files: ${[...files].sort().join(" ")}`);
      }
    }
    await context.close();
  } finally {
    await browser.close();
    server.close();
  }
  console.log(`plot snapshots: ${saved} files saved in ${out}`);
  return saved > 0;
}

async function listFiles(dir, prefix = "") {
  const out = [];
  for (const e of await readdir(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = path.join(prefix, e.name);
    if (e.isDirectory()) { if (rel !== "diff") out.push(...await listFiles(dir, rel)); }
    else out.push(rel);
  }
  return out;
}

// --- a PNG writer for the side-by-side pictures (RGBA, no filtering) ------------------------
const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (buf) => { let c = 0xffffffff; for (const b of buf) c = crcTable[(c ^ b) & 255] ^ (c >>> 8); return (c ^ 0xffffffff) >>> 0; };
function chunk(type, data) {
  const head = Buffer.alloc(8); head.writeUInt32BE(data.length, 0); head.write(type, 4, "ascii");
  const crc = Buffer.alloc(4); crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}
function encodePng(width, height, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0); ihdr.writeUInt32BE(height, 4); ihdr[8] = 8; ihdr[9] = 6;
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) rgba.copy(raw, y * (width * 4 + 1) + 1, y * width * 4, (y + 1) * width * 4);
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}

// before | after | the differing pixels in red over a faded "after".
function sideBySide(a, b) {
  const w = Math.max(a.width, b.width), h = Math.max(a.height, b.height), W = 3 * w + 8;
  const rgba = Buffer.alloc(W * h * 4, 255);
  const px = (img, x, y) => {
    if (x >= img.width || y >= img.height) return [255, 255, 255, 255];
    const i = (y * img.width + x) * img.channels;
    return [img.px[i], img.px[i + 1], img.px[i + 2], 255];
  };
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    const pa = px(a, x, y), pb = px(b, x, y);
    const differs = pa.some((v, k) => v !== pb[k]);
    const faded = pb.map((v, k) => (k < 3 ? 255 - ((255 - v) >> 2) : 255));
    for (const [col, p] of [[0, pa], [w + 4, pb], [2 * w + 8, differs ? [220, 0, 0, 255] : faded]]) {
      if (col + x < W) p.forEach((v, k) => { rgba[(y * W + col + x) * 4 + k] = v; });
    }
  }
  return encodePng(W, h, rgba);
}

async function compare(before, after) {
  const a = new Set(await listFiles(before)), b = new Set(await listFiles(after));
  let same = 0, differ = 0;
  const diffDir = path.join(after, "diff");
  for (const f of [...new Set([...a, ...b])].sort()) {
    if (!a.has(f) || !b.has(f)) { differ++; console.log(`${f}: only in ${a.has(f) ? "before" : "after"}`); continue; }
    const [x, y] = [await readFile(path.join(before, f)), await readFile(path.join(after, f))];
    if (f.endsWith(".png")) {
      const [p, q] = [decodePng(x), decodePng(y)];
      let n = 0;
      if (p.width === q.width && p.height === q.height && p.channels === q.channels) {
        for (let i = 0; i < p.px.length; i += p.channels) {
          for (let k = 0; k < p.channels; k++) if (p.px[i + k] !== q.px[i + k]) { n++; break; }
        }
      } else n = -1;
      if (n === 0) { same++; continue; }
      differ++;
      console.log(`${f}: ${n < 0 ? `size ${p.width}x${p.height} -> ${q.width}x${q.height}` : `${n} of ${p.width * p.height} pixels differ`}`);
      await mkdir(diffDir, { recursive: true });
      await writeFile(path.join(diffDir, f.replaceAll("/", "__")), sideBySide(p, q));
    } else if (x.equals(y)) {
      same++;
    } else {
      differ++;
      const [l, m] = [x.toString().split("\n"), y.toString().split("\n")];
      console.log(`${f}: ${l.filter((s, i) => s !== m[i]).length} of ${l.length} lines differ`);
    }
  }
  console.log(`plot snapshots: ${same} files identical, ${differ} differ`);
  return differ === 0;
}

const args = parseArgs(process.argv.slice(2));
const ok = args.compare
  ? await compare(path.resolve(args.compare), path.resolve(process.argv[process.argv.indexOf("--compare") + 2]))
  : await snapshot(path.resolve(args.site ?? "dist"), path.resolve(args.out ?? "build/plot_snapshots"), args.views?.split(","));
process.exit(ok ? 0 : 1);
