// AttnLab tiny-SSMax, the built-in model's twin trained with SSMax (issue 29): the model menu loads
// it from the page's own site on first use (not in the page's start-up download), names it as its
// config.json does, and runs it as trained (the model changes: none); a link made with it reopens
// with it. One head's weights on the page equal the native CLI's on the same files and tokens
// (`attnlab attention`, an independent run of the engine). "Compare with the twin" then loads
// AttnLab tiny beside it, and the fading series of the open head, both models, are each query's
// largest weight of the CLI's maps.
//
//   node tests/e2e/run.mjs --site dist --out build/e2e --cli build/native/attnlab --only twin
import path from "node:path";
import { readFileSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { check, waitFor, status, state, findWidget, openPage as openPageIn, decodePng, pictureStats } from "./lib.mjs";

const TWIN_ROUTE = "/assets/tiny-ssmax/model.safetensors";
const TINY_ROUTE = "/assets/tiny/model.safetensors";
const asset = (rel) => fileURLToPath(new URL(`../../assets/${rel}`, import.meta.url));
const readConfig = (folder) => JSON.parse(readFileSync(asset(`${folder}/config.json`), "utf8"));
// fp32 weights from passes cut into different chunks (the page) and one call (the CLI).
const TOLERANCE = 2e-5;

const openPage = (context, url) => openPageIn(context, url, { ignoreRequests: [/huggingface\.co/] });

// The model whose label is `label` loaded, and the pass over the text done.
const loadedAs = (page, label, timeout = 60000) => waitFor(page, (label) => {
  const st = window.attnlab.status();
  return st.model.loaded && st.model.builtin_name === label && st.tokens > 0 && st.forward_tokens === st.tokens &&
         st.model_changes.forward_current;
}, label, timeout);

// One head's T x T weights from the native CLI, on the repository's copy of the files.
export function cliWeights(cli, folder, ids, layer, head, plan = "") {
  const out = execFileSync(cli, ["attention", "--model", asset(`${folder}/model.safetensors`), "--ids", ids.join(","),
                                 "--layer", String(layer), "--head", String(head), "--json", ...(plan ? ["--attention", plan] : [])],
                           { maxBuffer: 64 << 20 });
  return JSON.parse(out.toString()).weights;
}

const worst = (a, b) => Math.max(...a.map((x, i) => Math.abs(x - b[i])));

async function click(page, name) {
  const w = await findWidget(page, name);
  if (!w || w.w <= 0) return false;
  await page.mouse.click(w.cx, w.cy);
  return true;
}

// The model menu: open it, then the entry (drawn only while the menu is open).
async function chooseFromMenu(page, entry) {
  if (!await click(page, "model.builtin")) return false;
  await page.waitForTimeout(300);
  return click(page, entry);
}

export async function twinSuite({ browser, server, cli, out, hasFixtures }) {
  console.log("the SSMax twin (AttnLab tiny-SSMax): the model menu, a link, the CLI's weights, the comparison:");
  let TWIN_CONFIG, TINY_CONFIG;
  try {
    TWIN_CONFIG = readConfig("tiny-ssmax");
    TINY_CONFIG = readConfig("tiny");
  } catch (e) {
    check(false, "assets/tiny-ssmax/config.json and assets/tiny/config.json are in the repository", String(e.message ?? e));
    return;
  }
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
  try {
    const twinGets = server.downloads(TWIN_ROUTE), tinyGets = server.downloads(TINY_ROUTE);
    const { page, errors, ready } = await openPage(context, `${server.origin}/`);
    if (!check(ready && await loadedAs(page, "AttnLab tiny"), "the plain page opens on AttnLab tiny")) return;
    check(server.downloads(TWIN_ROUTE) === twinGets, "the twin is not part of the page's start-up download",
          `${server.downloads(TWIN_ROUTE) - twinGets} GETs of ${TWIN_ROUTE}`);

    // 1. The model menu loads the twin from the site, named as its config.json says.
    const chosen = await chooseFromMenu(page, "model.builtin.tiny-ssmax");
    const loaded = chosen && await loadedAs(page, "AttnLab tiny-SSMax");
    let st = await status(page);
    if (!check(loaded, "the model menu (model.builtin) offers AttnLab tiny-SSMax, and choosing it loads it",
               JSON.stringify({ chosen, model: st.model, fetch: st.model_fetch, error: st.error }))) {
      await page.screenshot({ path: path.join(out, "twin-not-loaded.png") });
      return;
    }
    check(server.downloads(TWIN_ROUTE) - twinGets === 1, `it came from the page's own site (a GET of ${TWIN_ROUTE})`,
          `${server.downloads(TWIN_ROUTE) - twinGets} GETs`);
    check(st.model.name === TWIN_CONFIG.attnlab_name && /tiny-SSMax/.test(st.model.name) && /not GPT-2/.test(st.model.name),
          "its label is config.json's attnlab_name: \"AttnLab tiny-SSMax (…), not GPT-2\"", st.model.name);
    check(st.model.n_layer === TWIN_CONFIG.n_layer && st.model.n_head === TWIN_CONFIG.n_head && st.model.n_embd === TWIN_CONFIG.n_embd,
          "it has its config.json's shape", JSON.stringify(st.model));
    check(st.model_changes.changed_heads === 0 && st.model_changes.effective === "" && st.model_changes.words === "",
          "its SSMax plan is its trained plan: the model changes are none", JSON.stringify(st.model_changes).slice(0, 200));
    const view = await state(page);
    check(view.model === "assets/tiny-ssmax/model.safetensors", "state().model names the twin by its relative address",
          JSON.stringify(view.model));
    check(/^ssmax:/.test(view.normalizer), "the view shows its heads as trained (the normalizer follows: SSMax)", view.normalizer);

    // 2. One head's weights for a query equal the CLI's on the same files and tokens.
    const ids = st.text.ids, layer = view.layer, head = view.head, query = st.attention.query;
    const cliTwin = cliWeights(cli, "tiny-ssmax", ids, layer, head);
    const row = st.attention.row, want = cliTwin[query].slice(0, query + 1);
    check(row && row.length === query + 1 && worst(row, want) < TOLERANCE,
          `layer ${layer}, head ${head}, query ${query}: the page's weights are the CLI's (attnlab attention) within ${TOLERANCE}`,
          row ? `worst difference ${worst(row, want).toExponential(2)}` : "no row");

    // 3. A link made with it reopens with it.
    const link = await page.evaluate(() => window.attnlab.shareLink());
    const second = await openPage(context, link);
    const reopened = second.ready && await loadedAs(second.page, "AttnLab tiny-SSMax");
    check(reopened && server.downloads(TWIN_ROUTE) - twinGets === 2, "a link made with the twin reopens with the twin",
          `${server.downloads(TWIN_ROUTE) - twinGets} GETs; ${JSON.stringify((await status(second.page)).model)}`);
    check(second.errors.length === 0, "no errors on the linked page", second.errors.join(" | "));
    await second.page.close();

    // 4. Compare with the twin: AttnLab tiny beside it, the same head, both fading series.
    await page.evaluate(() => window.attnlab.setState({ panel: "attention" }));
    await waitFor(page, () => window.attnlab.status().panel === "attention" && !window.attnlab.status().busy, undefined, 30000);
    await page.waitForTimeout(300);  // the panel drawn a few frames: its widgets' places are current
    const toggled = await click(page, "attention.compare_twin");
    const compared = toggled && await waitFor(page, () => window.attnlab.status().twin.phase === "ready", undefined, 60000);
    st = await status(page);
    const tw = st.twin;
    if (!check(compared && (await state(page)).compare === true, "the toggle (attention.compare_twin) turns the comparison on, and it gets ready",
               JSON.stringify({ toggled, phase: tw.phase, error: tw.error, reason: tw.reason }))) return;
    check(server.downloads(TINY_ROUTE) - tinyGets === 2, "the twin, AttnLab tiny, came from the site beside the model",
          `${server.downloads(TINY_ROUTE) - tinyGets} GETs of ${TINY_ROUTE} in all (1 at start-up)`);
    check(st.model.builtin_name === "AttnLab tiny-SSMax", "the model stays AttnLab tiny-SSMax", st.model.builtin_name);
    check(tw.model.label === "AttnLab tiny-SSMax" && tw.twin.label === "AttnLab tiny" && tw.model.name === TWIN_CONFIG.attnlab_name &&
          tw.twin.name === TINY_CONFIG.attnlab_name, "both models are named", `${tw.model.name} | ${tw.twin.name}`);
    const cliTiny = cliWeights(cli, "tiny", ids, tw.layer, tw.head);
    const cliTwinHead = tw.layer === layer && tw.head === head ? cliTwin : cliWeights(cli, "tiny-ssmax", ids, tw.layer, tw.head);
    const largest = (w) => w.map((r, i) => Math.max(...r.slice(0, i + 1)));
    const keysOk = tw.fading.keys.length === ids.length && tw.fading.keys.every((L, i) => L === i + 1);
    check(keysOk, "the fading plot has a point per query, at L = position + 1", `${tw.fading.keys.length} points for ${ids.length} tokens`);
    const dModel = worst(tw.fading.model, largest(cliTwinHead)), dTwin = worst(tw.fading.twin, largest(cliTiny));
    check(dModel < TOLERANCE && dTwin < TOLERANCE,
          `layer ${tw.layer}, head ${tw.head}: each query's largest weight, both models, is the CLI's within ${TOLERANCE}`,
          `worst differences ${dModel.toExponential(2)} (tiny-SSMax), ${dTwin.toExponential(2)} (tiny)`);
    await page.mouse.move(5, 5);
    await page.waitForTimeout(200);
    const shot = await page.screenshot({ path: path.join(out, "twin-compare.png") });
    const stats = pictureStats(decodePng(shot));
    check(stats.colours > 50 && stats.inked > 0.05 && (await findWidget(page, "twin.map.twin"))?.w > 0,
          "both maps and the fading plot are drawn (twin-compare.png)", `${stats.colours} colours`);

    // 5. The menu's choice of the model held beside it swaps the two, with no download.
    const gets = [server.downloads(TWIN_ROUTE), server.downloads(TINY_ROUTE)];
    const swapped = await chooseFromMenu(page, "model.builtin.tiny") && await loadedAs(page, "AttnLab tiny") &&
                    await waitFor(page, () => window.attnlab.status().twin.phase === "ready", undefined, 30000);
    const sw = (await status(page)).twin;
    check(swapped && sw.model.label === "AttnLab tiny" && sw.twin.label === "AttnLab tiny-SSMax" &&
          server.downloads(TWIN_ROUTE) === gets[0] && server.downloads(TINY_ROUTE) === gets[1] &&
          worst(sw.fading.model, largest(cliTiny)) < TOLERANCE && worst(sw.fading.twin, largest(cliTwinHead)) < TOLERANCE,
          "choosing AttnLab tiny, held for the comparison, swaps the two models without a download",
          JSON.stringify({ swapped, model: sw.model?.label, twin: sw.twin?.label, gets: [server.downloads(TWIN_ROUTE) - gets[0], server.downloads(TINY_ROUTE) - gets[1]] }));

    // 5b. Model changes apply to both: each runs under the same plan (the CLI's --attention is the
    // reference), and the panel says so beside the maps (issue 36).
    const PLAN = "all=sparsemax";
    await page.evaluate((p) => window.attnlab.setState({ plan: p }), PLAN);
    const planned = await waitFor(page, (p) => {
      const t = window.attnlab.status().twin;
      return t.phase === "ready" && t.plan === p && t.model?.normalizer === "sparsemax";
    }, PLAN, 30000);
    const pt = (await status(page)).twin;
    const cliTinyPlan = cliWeights(cli, "tiny", ids, pt.layer, pt.head, PLAN);
    const cliTwinPlan = cliWeights(cli, "tiny-ssmax", ids, pt.layer, pt.head, PLAN);
    check(planned && pt.model.normalizer === "sparsemax" && pt.twin.normalizer === "sparsemax" && pt.model.changed && pt.twin.changed,
          `with the model changes "${PLAN}", both models run sparsemax in the open head, each marked changed`,
          JSON.stringify({ phase: pt.phase, plan: pt.plan, model: pt.model?.normalizer, twin: pt.twin?.normalizer }));
    const dTinyPlan = worst(pt.fading.model, largest(cliTinyPlan)), dTwinPlan = worst(pt.fading.twin, largest(cliTwinPlan));
    check(planned && dTinyPlan < TOLERANCE && dTwinPlan < TOLERANCE,
          `under "${PLAN}", each query's largest weight, both models, is the CLI's with --attention ${PLAN} within ${TOLERANCE}`,
          `worst differences ${dTinyPlan.toExponential(2)} (tiny), ${dTwinPlan.toExponential(2)} (tiny-SSMax)`);
    await page.evaluate(() => window.attnlab.setState({ plan: "" }));
    const unplanned = await waitFor(page, (was) => {
      const t = window.attnlab.status().twin;
      return t.phase === "ready" && t.plan === "" && t.model?.normalizer === was.model && t.twin?.normalizer === was.twin &&
             !t.model.changed && !t.twin.changed;
    }, { model: sw.model.normalizer, twin: sw.twin.normalizer }, 30000);
    check(unplanned, "with the changes reset, both run as trained again (as in step 5)", JSON.stringify((await status(page)).twin.twin));

    // 6. A model with no twin (a random checkpoint the CLI made): the comparison is unavailable, and says why.
    if (hasFixtures) {
      const small = `${server.origin}/models/small/model.safetensors`;
      await page.evaluate((m) => window.attnlab.setState({ model: m }), small);
      const other = await waitFor(page, (m) => {
        const s2 = window.attnlab.status();
        return s2.model.source === m && s2.forward_tokens === s2.tokens;
      }, small, 30000);
      const un = (await status(page)).twin;
      const toggle = await findWidget(page, "attention.compare_twin");
      check(other && un.phase === "unavailable" && !un.on && /built-in/.test(un.reason) && un.fading === null && toggle?.drawn &&
            !(await findWidget(page, "twin.map.twin"))?.drawn,
            "with a model that has no twin the toggle stays, the comparison is off, and status().twin.reason says why",
            JSON.stringify({ other, phase: un.phase, on: un.on, reason: un.reason }));
    }
    check(errors.length === 0, "no errors on the page", errors.join(" | "));
  } finally {
    await context.close();
  }
}
