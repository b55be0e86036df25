// The labels say what is computed (issue 35, section 3), read through status() under each built-in
// model (AttnLab tiny, AttnLab tiny-SSMax), as trained and under a plan: the model line and the
// address field name the loaded model (never GPT-2's address, never "No model loaded" or GPT-2's
// "/ 1024 tokens" while the model downloads); the token counter gives the model's own context from
// its config.json; the normalizer selector shows what the open head runs (after a plan, after
// Reset, and under a plan from a link); every "ssmax:S" printed is the shortest decimal that gives
// back the same number (JavaScript's own Number -> String is that reference); the distance
// footnote names the plan's normalizer; the head grid's marks each have a colour of their own; and
// setState({model: ""}) with the twin loaded is refused rather than answered ok.
//
//   node tests/e2e/run.mjs --site dist --out build/e2e --only tiny
import { readFileSync } from "node:fs";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { check, waitFor, status, state, openPage as openPageIn } from "./lib.mjs";

const GPT2_URL = "https://huggingface.co/openai-community/gpt2/resolve/main/model.safetensors";
const TWIN_LINK = "assets/tiny-ssmax/model.safetensors";
const config = (folder) => JSON.parse(readFileSync(new URL(`../../assets/${folder}/config.json`, import.meta.url), "utf8"));
const linkFor = (obj) => `#s=${deflateRawSync(JSON.stringify(obj)).toString("base64url")}`;

// The model bar's line and the token counter, sampled every 20 ms from the first script on, while
// no model is loaded (the first download).
function recordLabelsBeforeModel() {
  window.__before = new Set();
  const timer = setInterval(() => {
    try {
      const st = window.attnlab && window.attnlab.status && window.attnlab.status();
      if (!st) return;
      if (st.model.loaded) { clearInterval(timer); return; }
      window.__before.add(`${st.model_fetch.phase} | ${st.model_bar.line} | ${st.text.counter}`);
    } catch (e) { /* not started yet */ }
  }, 20);
}

const openPage = (context, url, initScript) => openPageIn(context, url, { ignoreRequests: [/huggingface\.co/], initScript });

// `label` loaded, the plan `spec` applied and its pass, thumbnails and summaries done.
const settled = (page, label, spec, timeout = 60000) => waitFor(page, ([label, spec]) => {
  const st = window.attnlab.status();
  return st.model.loaded && st.model.builtin_name === label && st.tokens > 0 && st.forward_tokens === st.tokens &&
         st.model_changes.spec === spec && st.model_changes.forward_current && st.attention.thumbnails_ready &&
         st.distance.summaries_ready && !st.busy;
}, [label, spec], timeout);

// Every "ssmax:S" in `text`, and those whose S is not the shortest form of its number.
function noisyScales(text) {
  const all = [...text.matchAll(/ssmax:([-+0-9.eE]+)/g)].map((m) => m[1]);
  return { all, noisy: all.filter((s) => String(Number(s)) !== s) };
}

// What the open head runs as trained, from config.json's plan: softmax without one; else the
// open head's item (per-head items "L.H=ssmax:S" as the trainer writes them).
function trainedSetting(cfg, layer, head) {
  const spec = cfg.attnlab_attention ?? "";
  let setting = "softmax";
  for (const item of spec.split(",").filter(Boolean)) {
    const [heads, rhs] = item.split("=");
    if (heads === "all" || heads === `${layer}.*` || heads === `${layer}.${head}`) setting = rhs;
  }
  return setting.replace(/:([-+0-9.eE]+)/, (_, s) => `:${String(Number(s))}`);
}

async function checkModel(page, label, cfg, where) {
  const st = await status(page), view = await state(page);
  check(st.model_bar.line === `Model: ${cfg.attnlab_name}`, `${where}: the model line names ${label} as its config.json does`,
        st.model_bar.line);
  check(st.model_bar.url !== GPT2_URL && st.model_bar.url === view.model,
        `${where}: the address field names the loaded model (state().model), not GPT-2's address`, JSON.stringify(st.model_bar.url));
  check(st.text.counter === `${st.tokens} / ${cfg.n_positions} tokens`,
        `${where}: the counter gives the model's own context (${cfg.n_positions}, config.json)`, st.text.counter);
  const link = await page.evaluate(() => window.attnlab.shareLink());
  let decoded = "";
  try { decoded = inflateRawSync(Buffer.from(new URL(link).hash.slice(3), "base64url")).toString(); } catch { /* below */ }
  const scales = noisyScales(JSON.stringify(st) + JSON.stringify(view) + decoded);
  check(scales.noisy.length === 0, `${where}: every ssmax:S in status(), state() and the share link is the shortest decimal of S`,
        `${scales.all.length} found; noisy: ${scales.noisy.slice(0, 3).join(", ")}`);
  return { st, view };
}

export async function labelSuite({ browser, server }) {
  console.log("labels under each built-in model, as trained and under a plan:");
  const TINY = config("tiny"), TWIN = config("tiny-ssmax");
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
  try {
    const { page, errors, ready } = await openPage(context, `${server.origin}/`, recordLabelsBeforeModel);
    if (!check(ready && await settled(page, "AttnLab tiny", ""), "the plain page opens on AttnLab tiny, its summaries done")) return;
    const before = await page.evaluate(() => [...window.__before]);
    check(before.length > 0 && before.every((s) => !/No model loaded/.test(s) && !/\/ 1024 tokens/.test(s)),
          "while the model downloads: no \"No model loaded\" and no GPT-2 \"/ 1024 tokens\"", before.slice(0, 4).join(" ; "));

    for (const [label, cfg, address] of [["AttnLab tiny", TINY, ""], ["AttnLab tiny-SSMax", TWIN, TWIN_LINK]]) {
      if (address) {
        const r = await page.evaluate((m) => window.attnlab.setState({ model: m }), address);
        if (!check(r.ok && await settled(page, label, ""), `setState({model}) loads ${label}`, JSON.stringify(r))) return;
      }
      const { view } = await checkModel(page, label, cfg, `${label} as trained`);
      const trained = trainedSetting(cfg, view.layer, view.head);
      check(view.normalizer === trained, `${label} as trained: the selector shows the open head's trained normalizer (${trained})`,
            view.normalizer);
      let st = await status(page);
      check(new RegExp(`${trained.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}.*as trained`).test(st.distance.summary_footnote ?? ""),
            `${label} as trained: the distance footnote names ${trained} and the model as trained`, st.distance.summary_footnote);

      // Under a plan: the selector, the footnote and the marks follow it.
      await page.evaluate(() => window.attnlab.setState({ plan: "all=sparsemax" }));
      if (!check(await settled(page, label, "all=sparsemax"), `${label}: the plan all=sparsemax runs`)) return;
      st = await status(page);
      check((await state(page)).normalizer === "sparsemax", `${label} under all=sparsemax: the selector shows sparsemax`,
            (await state(page)).normalizer);
      check(/sparsemax.*plan changes/.test(st.distance.summary_footnote ?? ""),
            `${label} under all=sparsemax: the distance footnote names sparsemax and the plan`, st.distance.summary_footnote);
      const colours = Object.values(st.attention.mark_colours ?? {});
      check(colours.length >= 4 && new Set(colours).size === colours.length,
            `${label}: the grid's marks (changed, induction, previous-token, chosen) each have their own colour`,
            JSON.stringify(st.attention.mark_colours));
      await checkModel(page, label, cfg, `${label} under all=sparsemax`);

      // Reset: the selector goes back to what the head runs as trained.
      await page.evaluate(() => window.attnlab.setState({ plan: "" }));
      check(await settled(page, label, "") && (await state(page)).normalizer === trained,
            `${label} after Reset: the selector shows ${trained} again`, (await state(page)).normalizer);
    }

    // setState({model: ""}) with the twin loaded: refused, and the twin stays named.
    const r = await page.evaluate(() => window.attnlab.setState({ model: "" }));
    const after = await state(page);
    check(!r.ok && /model/.test(r.error) && after.model === TWIN_LINK,
          "setState({model: \"\"}) with the twin loaded is refused with a reason (the page cannot unload it)",
          `${JSON.stringify(r)}; state().model ${JSON.stringify(after.model)}`);
    check(errors.length === 0, "no errors on the page", errors.join(" | "));
    await page.close();

    // A plan from a link (no normalizer in it): the selector shows what the open head runs.
    for (const [label, model] of [["AttnLab tiny", undefined], ["AttnLab tiny-SSMax", TWIN_LINK]]) {
      const hash = linkFor({ v: 1, panel: "attention", plan: "all=sparsemax", ...(model ? { model } : {}) });
      const linked = await openPage(context, `${server.origin}/${hash}`);
      const ok = linked.ready && await settled(linked.page, label, "all=sparsemax");
      const view = ok ? await state(linked.page) : {};
      check(ok && view.normalizer === "sparsemax", `${label}, a link with plan all=sparsemax: the selector shows sparsemax`,
            JSON.stringify({ ok, normalizer: view.normalizer }));
      if (ok) await checkModel(linked.page, label, model ? TWIN : TINY, `${label} from a link with a plan`);
      check(linked.errors.length === 0, `${label} from a link: no errors`, linked.errors.join(" | "));
      await linked.page.close();
    }
  } finally {
    await context.close();
  }
}
