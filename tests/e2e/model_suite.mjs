// The model half of the browser test: small random checkpoints served from 127.0.0.1, driven
// through the UI (clicks, drags, typing) and checked through window.attnlab. It checks wiring,
// not math (the math is tested in src/analysis):
//   loading by ?model=, typing text, opening a head, the temperature slider, CSV and JSON
//   export, the share-link round trip (model from the cache), malformed hashes, broken
//   checkpoints, cancelling a download, the threaded page and the sliced one, and a
//   screenshot of every panel.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { deflateRawSync } from "node:zlib";
import { check, earlyDownloadTimes, waitFor, waitReady, waitForward, waitNotBusy, status, findWidget, widget, openTab, openPage, watchErrors,
         decodePng, pictureStats } from "./lib.mjs";
import { tokenize } from "./fixtures.mjs";

// The built-in model (AttnLab tiny), which the page loads when neither ?model= nor a link names one.
const BUILTIN_ROUTE = "/assets/tiny/model.safetensors";

export const PANELS = ["text", "attention", "fading", "distance", "separability", "gradient", "playground", "help"];

// Text typed into the text box, key by key (short: each key is a frame, slow in SwiftShader).
const TYPED = "The cat sat. It ran.";

// A long text (~1000 tokens) for watching the page during a forward pass.
export const LONG = Array.from({ length: 115 }, (_, i) => `Sentence ${i} says the cat ${i % 2 ? "sat" : "ran"} again.`).join(" ");

// Console noise that is not a failure: the browser logs every non-2xx response it was asked
// to fetch (the broken checkpoints return 404 on purpose).
const expectedConsole = [/Failed to load resource/];
const realErrors = (errors) => errors.filter((e) => !expectedConsole.some((re) => re.test(e)));

const hasApi = (page, name) => page.evaluate((n) => typeof window.attnlab?.[n] === "function", name);
async function state(page) {
  return (await hasApi(page, "state")) ? page.evaluate(() => window.attnlab.state()) : null;
}

// Drags a horizontal slider from its centre to `fraction` of its width, in steps.
async function dragSlider(page, w, fraction, steps = 10) {
  await page.mouse.move(w.cx, w.cy);
  await page.mouse.down();
  for (let i = 1; i <= steps; i++) await page.mouse.move(w.cx + (w.x + w.w * fraction - w.cx) * (i / steps), w.cy);
  await page.mouse.up();
}

// Pastes a URL into the model bar (typing it key by key takes seconds in SwiftShader) and
// presses Enter; clicks "Download" when asked.
async function loadByPasting(page, url) {
  const field = await widget(page, "model.url");
  await page.evaluate((u) => navigator.clipboard.writeText(u), url);
  await page.mouse.click(field.cx, field.cy);
  await page.keyboard.press("Control+A");
  await page.keyboard.press("Control+V");
  await page.keyboard.press("Enter");
  await waitFor(page, (u) => {
    const f = window.attnlab.status().model_fetch;
    return f.url === u && f.phase !== "probing";
  }, url, 10000);
  const f = (await status(page)).model_fetch;
  if (f.phase === "confirm") {
    await page.waitForTimeout(100);  // let a frame lay out the confirm row
    const ok = await widget(page, "model.confirm");
    await page.mouse.click(ok.cx, ok.cy);
  }
}

// A link's download starts as the page loads (web/model_fetch.js, prefetch), not once the app is
// up: its worker starts before the page even asks for the app's script, and the app reads that
// download (it takes it over: no second request). This is what the reader gains, whatever the order
// of the worker's request and the app's first frame, which two busy cores do not fix.
async function linkRequestedEarly(page, server, route, what, getsBefore) {
  const t = await earlyDownloadTimes(page);
  const gets = server.downloads(route) - getsBefore;
  check(t.early < t.app && t.taken > t.early && gets === 1,
        `${what} starts downloading before the app's script is requested, and the app takes that download over`,
        `early download at ${t.early?.toFixed(0)} ms, app script at ${t.app?.toFixed(0)} ms, taken over at ${t.taken?.toFixed(0)} ms; ${gets} GETs`);
}

// The playground still answers: drag its temperature slider, T must follow.
async function playgroundResponds(page) {
  if (!(await openTab(page, "playground"))) return false;
  const before = (await status(page)).playground.T;
  const s = await findWidget(page, "playground.temperature");
  if (!s) return false;
  await dragSlider(page, s, before < 1 ? 0.9 : 0.1);
  const moved = await waitFor(page, (t) => {
    const r = window.attnlab.status().playground.T / t;
    return r > 1.25 || r < 0.8;
  }, before, 5000);
  await page.mouse.move(5, 5);
  return moved;
}

function parseCsv(text) {
  const lines = text.trim().split(/\r?\n/);
  const header = lines[0].split(",");
  return { header, rows: lines.slice(1).map((l) => Object.fromEntries(l.split(",").map((v, i) => [header[i], v]))) };
}

// --- 1-6, 11: one visitor with the small model --------------------------------------------
export async function visitorWithModel({ browser, server, cli, out }) {
  console.log("a visitor with a model (?model=, text, head, temperature, export, share link, panels):");
  const modelRoute = "/models/small/model.safetensors";
  const modelUrl = server.origin + modelRoute;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
  const getsBefore = server.downloads(modelRoute);  // other suites of the run load it too (the twin suite)
  try {
    const { page, errors, ready } = await openPage(context, `${server.origin}/?model=${encodeURIComponent(modelUrl)}`);
    if (!check(ready, "the page with ?model= starts")) return;

    // 1. ?model=URL loads the checkpoint.
    const loaded = await waitFor(page, () => window.attnlab.status().model.loaded, undefined, 30000);
    let st = await status(page);
    check(loaded && st.model.n_layer === 2 && st.model.n_head === 4 && st.model.n_embd === 64,
          "?model=URL loads the checkpoint with its shape (2 layers, 4 heads, 64 dims)", JSON.stringify(st.model));
    check(st.model.source === modelUrl, "status().model.source names the URL", st.model.source);
    check(server.downloads(modelRoute) - getsBefore === 1, "the checkpoint was downloaded once",
          `${server.downloads(modelRoute) - getsBefore} GETs`);
    await linkRequestedEarly(page, server, modelRoute, "the link's checkpoint", getsBefore);
    check((await state(page))?.model === modelUrl, "state().model is the model's URL", JSON.stringify((await state(page))?.model));

    // 2. Typing text: the token count is the tokenizer's, and a forward pass runs.
    const expected = tokenize(cli, TYPED).length;
    await openTab(page, "text");
    const input = await findWidget(page, "text.input");
    if (check(input, "the text panel shows its text box (text.input)")) {
      await page.mouse.click(input.x + input.w * 0.5, input.y + Math.min(20, input.h / 2));
      await page.keyboard.press("Control+A");
      await page.keyboard.press("Delete");
      await page.keyboard.type(TYPED, { delay: 5 });
      const counted = await waitFor(page, (n) => window.attnlab.status().tokens === n, expected, 10000);
      check(counted, "typing text gives the tokenizer's token count", `${(await status(page)).tokens} tokens, CLI says ${expected}`);
      check((await state(page))?.text === TYPED, "state().text is the typed text", JSON.stringify((await state(page))?.text));
      check(await waitForward(page, 30000), "a forward pass over the typed text completes",
            JSON.stringify(await page.evaluate(() => { const s = window.attnlab.status(); return [s.tokens, s.forward_tokens]; })));
      // Without any input the page must go on drawing until the work is done.
      await page.mouse.move(5, 5);
      check(await waitNotBusy(page, 30000), "with no input, the page finishes its work (busy false)",
            JSON.stringify(await page.evaluate(() => { const s = window.attnlab.status(); return { busy: s.busy, idle: s.idle, frames: s.frames }; })));
      // Then, with the text box let go (a click beside the model line), it stops drawing.
      await page.mouse.click(1275, 38);
      check(await waitFor(page, () => window.attnlab.status().idle, undefined, 5000), "once the work is done and nothing is held, the page stops drawing",
            JSON.stringify(await page.evaluate(() => { const s = window.attnlab.status(); return { busy: s.busy, idle: s.idle, frames: s.frames }; })));
    }

    // 3. Opening a head: click the thumbnail of layer 1, head 2.
    await openTab(page, "attention");
    await waitFor(page, () => window.attnlab.status().attention?.thumbnails_ready, undefined, 20000);
    st = await status(page);
    const grid = await findWidget(page, "attention.grid");
    if (check(grid && st.attention, "the attention panel shows the head grid (attention.grid)")) {
      const { n_layer: rows, n_head: cols } = st.model;
      await page.mouse.click(grid.x + grid.w * (2.5 / cols), grid.y + grid.h * (1.5 / rows));
      const opened = await waitFor(page, () => { const v = window.attnlab.state?.(); return v && v.layer === 1 && v.head === 2; });
      const v = await state(page);
      check(opened, "clicking the thumbnail at layer 1, head 2 opens that head", `state() layer ${v?.layer}, head ${v?.head}`);
      st = await status(page);
      check(st.attention.layer === 1 && st.attention.head === 2, "the attention panel shows layer 1, head 2",
            `status().attention ${st.attention.layer}/${st.attention.head}`);
    }

    // 4. The temperature slider re-shapes the open head.
    st = await status(page);
    const before = { T: (await state(page))?.T, row: st.attention?.row };
    const slider = await findWidget(page, "attention.temperature");
    if (check(slider && before.row, "the open head has a temperature slider (attention.temperature) and a weight row")) {
      await dragSlider(page, slider, 0.15);
      const moved = await waitFor(page, (t) => window.attnlab.state().T < t * 0.5, before.T, 5000);
      st = await status(page);
      const after = { T: (await state(page)).T, row: st.attention.row };
      check(moved, "dragging the temperature slider lowers state().T", `T ${before.T} -> ${after.T}`);
      check(Math.abs(st.attention.T - after.T) < 1e-9, "status().attention.T follows state().T", `${st.attention.T}`);
      const changed = after.row.length === before.row.length && after.row.some((w, i) => Math.abs(w - before.row[i]) > 1e-6);
      check(changed, "the chosen query's weights change with T",
            `before ${before.row.slice(0, 4).map((x) => x.toFixed(4))}, after ${after.row.slice(0, 4).map((x) => x.toFixed(4))}`);
      const sum = after.row.reduce((a, b) => a + b, 0);
      check(Math.abs(sum - 1) < 1e-4, "the re-shaped weights still sum to 1", `sum ${sum}`);
      check(after.row.length === st.tokens, "the row covers every key of the last query", `${after.row.length} weights, ${st.tokens} tokens`);
      await page.mouse.move(5, 5);
    }

    // 5. Exporting the weights plot's CSV (its corner button, then "Export CSV").
    await exportCsv(page, out);
    await exportJson(page, out, modelUrl);

    // 6. The share-link round trip, with the model from the cache.
    const view = { text: "Alice met Bob. Alice gave Bob a book, and Bob thanked Alice.", layer: 1, head: 3, query: 5, N: 3,
                   T: 0.5, normalizer: "sparsemax", panel: "distance", eps: 0.1 };
    if (check(await hasApi(page, "setState") && await hasApi(page, "shareLink"), "window.attnlab has setState() and shareLink()")) {
      const r = await page.evaluate((v) => window.attnlab.setState(v), view);
      check(r && r.ok !== false, "setState() accepts a full view", JSON.stringify(r));
      await waitFor(page, (p) => window.attnlab.status().panel === p, view.panel, 5000);
      const link = await page.evaluate(() => window.attnlab.shareLink());
      check(typeof link === "string" && link.startsWith(server.origin) && /#s=[A-Za-z0-9_-]+$/.test(link),
            "shareLink() gives this page's URL with a #s= hash", String(link).slice(0, 100));
      const downloadsBefore = server.downloads(modelRoute);
      const builtinBefore = server.downloads(BUILTIN_ROUTE);
      await page.close();
      const second = await openPage(context, link);
      check(second.ready, "the shared link opens");
      const reloaded = await waitFor(second.page, () => window.attnlab.status().model.loaded, undefined, 30000);
      check(reloaded && (await status(second.page)).model.source === modelUrl, "the shared link reloads the model");
      check(server.downloads(modelRoute) === downloadsBefore, "the model comes from the browser's cache, not a second download",
            `${server.downloads(modelRoute) - downloadsBefore} new GETs of ${modelRoute}`);
      // The link names a model: the built-in one (the plain page's default) is not fetched as well.
      await second.page.waitForTimeout(300);
      check(server.downloads(BUILTIN_ROUTE) === builtinBefore && (await status(second.page)).model.builtin === false,
            "a link naming another model does not load the built-in one too",
            `${server.downloads(BUILTIN_ROUTE) - builtinBefore} GETs of ${BUILTIN_ROUTE}`);
      const restored = await state(second.page);
      const diffs = Object.entries(view).filter(([k, v]) => restored?.[k] !== v).map(([k, v]) => `${k}: ${JSON.stringify(restored?.[k])} != ${JSON.stringify(v)}`);
      check(diffs.length === 0, "state() after the link equals the shared view", diffs.join("; "));
      check(restored?.model === modelUrl, "state().model after the link is the model's URL", restored?.model);
      const shown = await waitFor(second.page, (p) => window.attnlab.status().panel === p, view.panel, 5000);
      check(shown, "the shared panel is the one shown", (await status(second.page)).panel);
      check(await waitForward(second.page, 30000), "the shared text is run through the model",
            `tokens ${(await status(second.page)).tokens}`);
      // 11. Every panel, with a model loaded and a non-default view.
      await screenshotPanels(second.page, out);
      check(realErrors(second.errors).length === 0, "no errors on the shared page", realErrors(second.errors).join(" | "));
      await second.page.close();
    }
    check(realErrors(errors).length === 0, "no errors on the first page", realErrors(errors).join(" | "));
  } finally {
    await context.close();
  }
}

async function exportCsv(page, out) {
  const st = await status(page);
  const row = st.attention?.row;
  const widgets = Object.keys(st.widgets);
  // The bars plot of the chosen query's weights; its name is the plot's title, slugged.
  const button = widgets.find((k) => /^plot\..*weight.*\.export$/.test(k) && !/map|heat/.test(k)) ??
                 widgets.find((k) => /^plot\..*\.export$/.test(k));
  if (!check(button && row, "the weights plot has an export button", `plot widgets: ${widgets.filter((k) => k.startsWith("plot.")).join(", ")}`)) return;
  if (!check(await openExportMenu(page, button), "the export button opens a menu with 'Export CSV'")) return;
  const saved = await clickAndSave(page, "plot.export_csv", out);
  if (!check(saved, "'Export CSV' downloads a file")) return;
  const { name } = saved, text = saved.bytes.toString("utf8");
  check(/\.csv$/.test(name), "the download is a .csv file", name);
  const csv = parseCsv(text);
  check(["series", "kind", "x", "y"].every((h) => csv.header.includes(h)), "the CSV has a header (series, kind, x, y)", csv.header.join(","));
  // Bars are the weights, one per key position (the top-N may be their own series).
  const bars = new Map(csv.rows.filter((r) => r.kind === "bars").map((r) => [Number(r.x), Number(r.y)]));
  const mismatches = row.map((w, i) => [i, w, bars.get(i)]).filter(([, w, y]) => y === undefined || Math.abs(w - y) > 1e-6 * Math.max(1, w));
  check(bars.size === row.length && mismatches.length === 0, "the CSV's bars are the weights status() reports",
        `${bars.size} bars for ${row.length} weights; first mismatches ${JSON.stringify(mismatches.slice(0, 3))}`);
  const last = await page.evaluate(() => window.attnlab.status().last_export);
  check(last && last.name === name && last.bytes === Buffer.byteLength(text), "status().last_export names the file and its size",
        JSON.stringify(last));
  if (await hasApi(page, "lastExport")) {
    const le = await page.evaluate(() => window.attnlab.lastExport());
    check(le?.text === text && /csv/.test(le?.mime ?? ""), "window.attnlab.lastExport() holds the same CSV", `${le?.name} ${le?.mime}`);
  }
  await page.keyboard.press("Escape");
  await page.mouse.move(5, 5);
  await exportPng(page, out, button);
}

// Clicks the menu item `name` and keeps the download it starts in `out` as export-<file name>:
// {name, bytes}, or null when nothing is downloaded within 5 s.
async function clickAndSave(page, name, out) {
  const item = await widget(page, name);
  const downloadP = page.waitForEvent("download", { timeout: 5000 }).catch(() => null);
  await page.mouse.click(item.cx, item.cy);
  const download = await downloadP;
  if (!download) return null;
  const file = path.join(out, `export-${download.suggestedFilename()}`);
  await download.saveAs(file);
  return { name: download.suggestedFilename(), bytes: await readFile(file) };
}

// A plot's corner button shows while the plot is hovered: move onto the plot, then onto the button.
async function openExportMenu(page, button) {
  const b = await widget(page, button);
  await page.mouse.move(b.cx - b.w * 3, b.cy + b.h * 3);
  await page.mouse.move(b.cx, b.cy);
  await page.waitForTimeout(100);
  await page.mouse.click(b.cx, b.cy);
  const open = await waitFor(page, () => {
    const r = window.attnlab.status().widgets["plot.export_csv"];
    return r && r.w > 0;
  }, undefined, 3000);
  if (open) await page.waitForTimeout(100);
  return open;
}

// "Export PNG": the plot's pixels, read back from the frame after the click, as a PNG download.
async function exportPng(page, out, button) {
  if (!check(await openExportMenu(page, button), "the export menu opens again, with 'Export PNG'")) return;
  const saved = await clickAndSave(page, "plot.export_png", out);
  if (!check(saved, "'Export PNG' downloads a file")) return;
  const { name, bytes } = saved;
  let picture = null;
  try { picture = decodePng(bytes); } catch { picture = null; }
  check(/\.png$/.test(name) && picture !== null, "the download is a PNG that decodes", `${name}, ${bytes.length} bytes`);
  if (picture) {
    const stats = pictureStats(picture);
    // A plot's rectangle: smaller than the 1280 x 800 page, larger than its corner button, and drawn.
    const canvas = await page.evaluate(() => { const c = document.getElementById("canvas"); return { w: c.width, h: c.height }; });
    const sizeOk = picture.width >= 100 && picture.height >= 60 && picture.width < canvas.w && picture.height < canvas.h;
    check(sizeOk && stats.colours > 5 && stats.inked > 0.01, "the PNG is a plot's rectangle, drawn",
          `${picture.width}x${picture.height} of a ${canvas.w}x${canvas.h} canvas, ${stats.colours} colours`);
  }
  const reported = await waitFor(page, (n) => window.attnlab.status().last_export?.name === n, name, 5000);
  const last = await page.evaluate(() => window.attnlab.status().last_export);
  check(reported && last.mime === "image/png" && last.bytes === bytes.length, "status().last_export reports the PNG and its size",
        JSON.stringify(last));
  await page.mouse.move(5, 5);
}

// "Export analysis (JSON)" from the menu bar.
async function exportJson(page, out, modelUrl) {
  let item = await findWidget(page, "menu.export_json");
  if (!item || item.w === 0) {
    // It may sit in a menu: open the one the status names, if any.
    const menu = Object.keys((await status(page)).widgets).find((k) => /^menu\.(file|export|share)$/.test(k));
    if (menu) { const m = await widget(page, menu); await page.mouse.click(m.cx, m.cy); await page.waitForTimeout(150); }
    item = await findWidget(page, "menu.export_json");
  }
  if (!check(item, "the menu offers 'Export analysis (JSON)' (menu.export_json)")) return;
  const downloadP = page.waitForEvent("download", { timeout: 5000 }).catch(() => null);
  await page.mouse.click(item.cx, item.cy);
  const download = await downloadP;
  if (!check(download, "'Export analysis (JSON)' downloads a file")) return;
  const file = path.join(out, `export-${download.suggestedFilename()}`);
  await download.saveAs(file);
  let doc = null;
  try { doc = JSON.parse(await readFile(file, "utf8")); } catch { /* checked below */ }
  const st = await status(page), v = await state(page);
  check(doc && typeof doc === "object", "the analysis export is JSON", download.suggestedFilename());
  const text = JSON.stringify(doc ?? {});
  check(text.includes(modelUrl) && text.includes(JSON.stringify(v?.text ?? "").slice(1, -1)),
        "the JSON names the model and holds the text", text.slice(0, 120));
  const tokenLists = [];
  (function find(o) {
    if (Array.isArray(o) && o.length === st.tokens && o.every(Number.isInteger)) tokenLists.push(o);
    else if (o && typeof o === "object") Object.values(o).forEach(find);
  })(doc);
  check(tokenLists.length > 0, "the JSON holds the token ids (as many as status().tokens)", `${st.tokens} tokens`);
  await page.keyboard.press("Escape");
}

// 11. A screenshot of each tab, clicked like a visitor would; none blank.
async function screenshotPanels(page, out) {
  const failures = [];
  for (const panel of PANELS) {
    if (!(await openTab(page, panel))) { failures.push(`${panel}: tab not shown`); continue; }
    await page.mouse.move(5, 5);
    // The analysis panels show the all-heads summaries once the background work is done.
    if (["distance", "separability", "gradient"].includes(panel)) await waitNotBusy(page, 8000);
    await page.waitForTimeout(150);
    const shot = await page.screenshot({ path: path.join(out, `panel-${panel}.png`) });
    const stats = pictureStats(decodePng(shot));
    if (stats.colours < 30 || stats.inked < 0.03) failures.push(`${panel}: looks blank (${stats.colours} colours)`);
  }
  check(failures.length === 0, `every panel opens and is drawn (${PANELS.length} screenshots panel-*.png)`, failures.join("; "));
}

// --- 7: malformed hashes -------------------------------------------------------------------
export async function malformedHashes({ browser, server }) {
  console.log("malformed share links:");
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
  try {
    // A well-formed link (deflate-raw, base64url, as share_state.js writes them) whose T is invalid.
    const badT = `#s=${deflateRawSync(JSON.stringify({ v: 1, text: "hi", layer: 1, T: -1 })).toString("base64url")}`;
    const cases = [["#s=garbage!!not-base64", /link|hash|address|base64/i], ["#foo", /link|hash|address/i], [badT, /\bT\b/]];
    for (const [i, [hash, expect]] of cases.entries()) {
      const { page, errors, ready } = await openPage(context, `${server.origin}/?visit=${i}${hash}`);
      if (!check(ready, `the page with a malformed link starts (${i + 1} of ${cases.length})`)) continue;
      const said = await waitFor(page, () => window.attnlab.status().error !== "", undefined, 5000);
      const st = await status(page);
      const name = hash.length > 24 ? `${hash.slice(0, 12)}… (T = -1)` : hash;
      check(said && expect.test(st.error), `${name}: a message about the link in status().error`, st.error);
      const v = await state(page);
      check(v && v.layer === 0 && v.head === 0 && v.query === -1 && v.T === 1 && v.normalizer === "softmax" && v.panel === "text",
            `${name}: the view falls back to the defaults`, JSON.stringify(v));
      const builtin = await waitFor(page, () => window.attnlab.status().model.builtin === true, undefined, 30000);
      check(builtin, `${name}: the default model (the built-in one) loads as without a link`, JSON.stringify((await status(page)).model));
      check(realErrors(errors).length === 0, `${name}: no exception or console error`, realErrors(errors).join(" | "));
      await page.close();
    }
  } finally {
    await context.close();
  }
}

// --- 8, 10: broken checkpoints and a cancelled download -------------------------------------
export async function brokenModels({ browser, server, out }) {
  console.log("broken checkpoints and a cancelled download:");
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.origin });
  try {
    const missing = `${server.origin}/models/missing/model.safetensors`;
    const { page, errors, ready } = await openPage(context, `${server.origin}/?model=${encodeURIComponent(missing)}`);
    if (!check(ready, "the page with a 404 ?model= starts")) return;
    const builtinBefore = server.downloads(BUILTIN_ROUTE);
    const cases = [
      { name: "a 404", url: missing, expect: /404/, pasted: false },
      { name: "a file that is not safetensors", url: `${server.origin}/models/notst/model.safetensors`, expect: /not a safetensors/i, pasted: true },
      { name: "a config.json that disagrees with the tensors", url: `${server.origin}/models/wrongshape/model.safetensors`,
        expect: /shape|n_embd|expect|size|dimension/i, pasted: true },
      { name: "a truncated file", url: `${server.origin}/models/truncated/model.safetensors`,
        expect: /truncat|short|end of|beyond|past|bytes|size/i, pasted: true },
    ];
    for (const c of cases) {
      if (c.pasted) await loadByPasting(page, c.url);
      const failed = await waitFor(page, (u) => {
        const s = window.attnlab.status();
        return s.model_fetch.url === u && (s.model_fetch.phase === "failed" || (s.model_fetch.phase === "idle" && s.error !== ""));
      }, c.url, 15000);
      const st = await status(page);
      const message = [st.error, st.model_fetch.error].filter(Boolean).join(" / ");
      check(failed && c.expect.test(message) && message.length > 20, `${c.name}: a readable error`, message || JSON.stringify(st.model_fetch));
      check(!st.model.loaded, `${c.name}: no model is loaded`);
    }
    check(await playgroundResponds(page), "after the failures the playground still responds");
    check(server.downloads(BUILTIN_ROUTE) === builtinBefore, "with ?model= given (even a broken one), the built-in model is not loaded",
          `${server.downloads(BUILTIN_ROUTE) - builtinBefore} GETs of ${BUILTIN_ROUTE}`);

    // 10. Cancel a slow download half-way.
    const slow = `${server.origin}/slow/model.safetensors`;
    await loadByPasting(page, slow);
    const going = await waitFor(page, () => {
      const f = window.attnlab.status().model_fetch;
      return f.phase === "downloading" && f.done_bytes > 0;
    }, undefined, 10000);
    if (check(going, "a slow download shows progress (done_bytes > 0)")) {
      const total = (await status(page)).model_fetch.total_bytes;
      check(total > 1e6, "the size is known before the body arrives (Content-Length)", `total_bytes ${total}`);
      const cancel = await widget(page, "model.cancel");
      await page.mouse.click(cancel.cx, cancel.cy);
      const stopped = await waitFor(page, () => ["idle", "failed"].includes(window.attnlab.status().model_fetch.phase), undefined, 5000);
      const st = await status(page);
      const said = [st.error, st.model_fetch.error, st.model_fetch.notice].join(" ");
      check(stopped && /cancel/i.test(said), "Cancel stops the download and says so", `${st.model_fetch.phase}: ${said.trim()}`);
      await page.waitForTimeout(500);
      check(!(await status(page)).model.loaded, "no model is loaded after the cancel");
      check(await playgroundResponds(page), "after the cancel the playground still responds");
    }
    check(realErrors(errors).length === 0, "no exception or console error with broken checkpoints", realErrors(errors).join(" | "));
    await page.screenshot({ path: path.join(out, "broken-model.png") });
    await cacheAcrossReloads(page, server, slow);
    await heapAcrossLoads(page, server);
  } finally {
    await context.close();
  }
}

// 10b. The copy kept for the next visit. A page left before the copy was complete (here the slow
// download, half-way) leaves none, and the next load says why it downloads again. Once the model is
// loaded, the page writes the copy and says when it is complete; a reload then reads it.
async function cacheAcrossReloads(page, server, slow) {
  await loadByPasting(page, slow);
  await waitFor(page, () => window.attnlab.status().model_fetch.done_bytes > 0, undefined, 10000);
  await page.goto(`${server.origin}/`);
  await waitReady(page);
  await loadByPasting(page, slow);
  const told = await waitFor(page, () => /did not finish keeping/.test(window.attnlab.status().model_fetch.notice), undefined, 10000);
  let f = (await status(page)).model_fetch;
  check(told && f.phase === "downloading", "after leaving the page mid-download, the next load says why it downloads again",
        `${f.phase}: ${f.notice}`);
  const cancel = await widget(page, "model.cancel");
  await page.mouse.click(cancel.cx, cancel.cy);

  const longRoute = "/models/long/model.safetensors", longUrl = server.origin + longRoute;
  await loadByPasting(page, longUrl);
  await waitFor(page, (u) => window.attnlab.status().model.source === u, longUrl, 30000);
  // The write comes after the model's first pass.
  const kept = await waitFor(page, () => window.attnlab.status().model_fetch.cache_copy === "kept", undefined, 30000);
  f = (await status(page)).model_fetch;
  check(kept && f.cache_saved_bytes === f.total_bytes, "after the load the page says when its copy in the browser is complete (cache_copy \"kept\")",
        `${f.cache_copy}, ${f.cache_saved_bytes} of ${f.total_bytes} bytes`);
  const gets = server.downloads(longRoute);
  await page.goto(`${server.origin}/?model=${encodeURIComponent(longUrl)}`);
  const again = await waitReady(page) && await waitFor(page, () => window.attnlab.status().model.loaded, undefined, 30000);
  f = (await status(page)).model_fetch;
  check(again && server.downloads(longRoute) === gets && f.cached && f.cache_copy === "kept",
        "a reload then reads the model from the browser's cache, with no download",
        `${server.downloads(longRoute) - gets} new GETs; cached ${f.cached}, cache_copy ${f.cache_copy}`);
}

// 10c. Loading a model frees the one before: five loads in a row, two shapes taken in turn (the
// `long` model is loaded already). malloc's bytes in use must come back to the same level for the
// same shape, and the wasm memory, which never shrinks, must stop growing once both have been in.
async function heapAcrossLoads(page, server) {
  const urls = ["small", "long", "small", "long"].map((m) => `${server.origin}/models/${m}/model.safetensors`);
  const heaps = [];
  const settle = async () => { await waitForward(page, 30000); await waitNotBusy(page); heaps.push((await status(page)).heap); };
  await settle();
  for (const url of urls) {
    await page.evaluate((u) => window.attnlab.setState({ model: u }), url);
    if (!(await waitFor(page, (u) => window.attnlab.status().model.source === u, url, 30000))) break;
    await settle();
  }
  const mb = (h) => `${(h.in_use_bytes / 1048576).toFixed(1)}/${(h.memory_bytes / 1048576).toFixed(0)}`;
  const said = `MB in use/memory after each load (long, small, long, small, long): ${heaps.map(mb).join(", ")}`;
  console.log(`        ${said}`);
  if (!check(heaps.length === 5, "five loads of two shapes in a row complete", said)) return;
  // Within 5% (0.9-1.7 MB here; 0.1 MB seen between runs): a model left behind would add its 13-26 MB.
  const level = (a, b) => Math.abs(heaps[a].in_use_bytes - heaps[b].in_use_bytes) <= 0.05 * heaps[b].in_use_bytes;
  check(level(2, 0) && level(4, 0) && level(3, 1), "loading a model frees the one before (the bytes in use return to each shape's level)", said);
  check(heaps[4].memory_bytes === heaps[2].memory_bytes, "the wasm memory does not grow after the first loads of each shape", said);
}

// --- 9: the threaded page and the sliced one ------------------------------------------------
// Runs a long forward pass and watches the page while it runs. The check is about order, not
// time: a frame drawn between two moments at which the pass is running and part-done (0 < progress
// < 1) proves the page drew while the model worked. A pass done in one go on the page's thread can
// never show that: the page cannot answer, let alone draw, until the pass has ended. The longest
// gap between frames is printed, never asserted: in SwiftShader it is the frame's own cost (75-97
// ms a frame here with the cores busy, 224 ms once in CI), whatever the pass does.
// From the page's first script on: every change of the model's cache copy and of whether the
// first pass on the loaded model is done, in order (window.cacheCopySeen).
function watchCacheCopy() {
  const seen = (window.cacheCopySeen = []);
  const timer = setInterval(() => {
    const s = window.attnlab?.status?.();
    if (!s?.model?.loaded || !s.model_fetch?.url) return;
    const now = `${s.model_fetch.cache_copy}, pass ${s.tokens > 0 && s.forward_tokens === s.tokens ? "done" : "running"}`;
    if (seen.at(-1) !== now) seen.push(now);
    if (/^(kept|none)/.test(now) || seen.length > 40) clearInterval(timer);  // the copy's end: no more status() calls
  }, 10);
}

// The copy of a downloaded model for the next visit is written after the first pass on it, not
// beside it (the write took 3.7 s of the browser's CPU from a 4,096-token pass).
async function cacheCopyAfterFirstPass(page) {
  await waitFor(page, () => /kept|none/.test(window.cacheCopySeen.at(-1) ?? ""), undefined, 30000);
  const seen = await page.evaluate(() => window.cacheCopySeen);
  const firstWrite = seen.findIndex((v) => /^(saving|kept)/.test(v));
  check(seen[0] === "waiting, pass running" && firstWrite > 0 && !seen.some((v) => /^(saving|kept), pass running/.test(v)),
        "isolated: the model's copy in the browser waits for the first pass, then is written", seen.join(" -> "));
  console.log(`        isolated: ${seen.join(" -> ")}`);
}

async function watchLongPass(page) {
  await page.evaluate((text) => window.attnlab.setState({ text }), LONG);
  return page.evaluate(async () => {
    const t0 = performance.now();
    let last = window.attnlab.status().frames, lastAt = t0, maxGap = 0, frames = 0;
    let partDoneFrame = -1, framesMidPass = 0;  // the frame count when the pass was last seen part-done
    for (;;) {
      await new Promise((r) => setTimeout(r, 10));
      const s = window.attnlab.status(), now = performance.now();
      if (s.frames !== last) { maxGap = Math.max(maxGap, now - lastAt); frames += s.frames - last; last = s.frames; lastAt = now; }
      const w = s.model_work;
      if (w.label === "Forward pass" && w.progress > 0 && w.progress < 1) {
        if (partDoneFrame >= 0) framesMidPass += s.frames - partDoneFrame;
        partDoneFrame = s.frames;
      } else {
        partDoneFrame = -1;
      }
      // Done when the pass over the long text's tokens has finished (the summaries may go on).
      if (s.tokens > 500 && s.forward_tokens === s.tokens) return { ms: now - t0, frames, framesMidPass, maxGap, tokens: s.tokens };
      if (now - t0 > 30000) return { ms: now - t0, frames, framesMidPass, maxGap, tokens: s.tokens, timeout: true };
    }
  });
}

// A new text while the all-heads summaries of the last one run: they stop at once, rather than
// share the cores with the new text's pass, and do not come back for a pass no longer shown.
async function stalePassWork(page) {
  const running = await waitFor(page, () => window.attnlab.status().background_work.label !== "", undefined, 10000);
  await page.evaluate((text) => window.attnlab.setState({ text }), "Once more. " + LONG);  // past 1,024 tokens: new ones at the start
  const seen = await page.evaluate(async () => {
    const t0 = performance.now(), seen = { passPolls: 0, withSummaries: 0 };
    for (;;) {
      await new Promise((r) => setTimeout(r, 10));
      const s = window.attnlab.status();
      if (s.model_work.label === "Forward pass") {
        seen.passPolls += 1;
        if (s.background_work.label !== "") seen.withSummaries += 1;
      } else if (seen.passPolls > 0 || performance.now() - t0 > 30000) {
        return { ...seen, done: s.forward_tokens === s.tokens };
      }
    }
  });
  check(running && seen.done && seen.passPolls > 0 && seen.withSummaries === 0,
        "isolated: a new text stops the last text's all-heads summaries while its pass runs", JSON.stringify({ running, ...seen }));
}

export async function threadedAndSliced({ browser, server, isolatedServer, siteHasThreads }) {
  console.log("the threaded page (COOP/COEP) and the single-threaded one:");
  const modelRoute = "/models/long/model.safetensors";
  for (const [label, srv] of [["isolated", isolatedServer], ["plain", server]]) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
    try {
      const modelUrl = srv.origin + modelRoute;
      // The plain page opens a share link naming the model, the isolated one ?model=: both start
      // the download as the page loads (checked below).
      const link = label === "plain" ? `/#s=${deflateRawSync(JSON.stringify({ v: 1, model: modelUrl })).toString("base64url")}`
                                     : `/?model=${encodeURIComponent(modelUrl)}`;
      const gets0 = srv.downloads(modelRoute);
      if (label === "isolated") await context.addInitScript(watchCacheCopy);
      const { page, errors, ready } = await openPage(context, srv.origin + link);
      if (!check(ready, `${label}: the page starts`)) continue;
      const info = await page.evaluate(() => ({
        isolated: window.crossOriginIsolated,
        cores: navigator.hardwareConcurrency,
        threads: window.attnlab.status().threads,
        scripts: performance.getEntriesByType("resource").map((e) => e.name.split("/").pop()).filter((n) => /^attnlab/.test(n)),
      }));
      if (label === "isolated") {
        check(info.isolated === true, "with COOP/COEP headers the page is cross-origin isolated");
        // Chromium has relaxed SIMD, so index.html picks the relaxed-SIMD build of each.
        check(siteHasThreads && info.scripts.includes("attnlab-mt-relaxed.js") && !info.scripts.some((n) => /^attnlab(-relaxed)?\.js$/.test(n)),
              "the isolated page runs the threaded build with relaxed SIMD (attnlab-mt-relaxed.js)", info.scripts.join(", ") || "none");
        check(info.threads === Math.min(info.cores, 8), "the threaded page's model uses one thread per core, at most 8",
              `${info.threads} threads, ${info.cores} cores`);
      } else {
        check(info.isolated === false, "without the headers the page is not isolated");
        check(info.scripts.includes("attnlab-relaxed.js") && !info.scripts.some((n) => n.startsWith("attnlab-mt")),
              "the plain page runs the single-threaded build with relaxed SIMD (attnlab-relaxed.js)", info.scripts.join(", "));
        check(info.threads === 1, "the plain page's model uses one thread", `${info.threads}`);
      }
      const loaded = await waitFor(page, () => window.attnlab.status().model.loaded, undefined, 30000);
      if (!check(loaded, `${label}: the 1024-position model loads`, JSON.stringify((await status(page)).model_fetch))) continue;
      await linkRequestedEarly(page, srv, modelRoute, `${label}: the ${label === "plain" ? "share link's" : "?model= link's"} checkpoint`,
                               gets0);
      if (label === "isolated") await cacheCopyAfterFirstPass(page);
      await waitNotBusy(page);  // the pass over the start text and its summaries: the watched pass runs alone
      const run = await watchLongPass(page);
      check(!run.timeout && run.tokens > 500, `${label}: a forward pass over ${run.tokens} tokens completes`,
            `${run.ms.toFixed(0)} ms`);
      const said = `${run.tokens} tokens in ${run.ms.toFixed(0)} ms, ${run.frames} frames (${run.framesMidPass} while the pass ` +
                   `was part-done), longest gap ${run.maxGap.toFixed(0)} ms`;
      check(run.framesMidPass >= 1, `${label}: the page draws frames while the pass is part-done`, said);
      console.log(`        ${label}: ${said}`);
      if (label === "isolated") {
        // Frames take the cores the workers compute on (app_frame_pace): while only they work, the
        // page draws a frame when the progress shown moves, at most 5 a second.
        check(run.framesMidPass <= run.ms / 200 + 1, "isolated: while a worker runs the pass, at most 5 frames a second", said);
        await stalePassWork(page);
      }
      check(realErrors(errors).length === 0, `${label}: no errors`, realErrors(errors).join(" | "));
    } finally {
      await context.close();
    }
  }
}

// The service worker (web/sw.js) makes a plain static host cross-origin isolated after one reload.
export async function serviceWorker({ browser, server }) {
  console.log("the service worker on a plain host:");
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    const errors = watchErrors(page);
    await page.goto(`${server.origin}/`);
    const isolated = await waitFor(page, () => window.crossOriginIsolated === true && window.attnlab?.status().ready, undefined, 30000);
    check(isolated, "sw.js makes the page cross-origin isolated (after at most one reload)");
    const scripts = await page.evaluate(() => performance.getEntriesByType("resource").map((e) => e.name.split("/").pop()));
    check(scripts.includes("attnlab-mt-relaxed.js"), "with the service worker the threaded build runs", scripts.filter((n) => /attnlab/.test(n)).join(", "));
    check(realErrors(errors).length === 0, "no errors with the service worker", realErrors(errors).join(" | "));
  } finally {
    await context.close();
  }
}
