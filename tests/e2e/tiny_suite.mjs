// The built-in model (assets/tiny: "AttnLab tiny (trained on the King James Bible and repeated random words),
// not GPT-2"), the page's instant default. With no ?model= and no link, the plain page must load it
// from its own site, analyse the start text with no click and no question, and open the Attention
// map on the head that stands out most from uniform attention; a link made with it must reopen with
// it (and name no model); it must have a previous-token head (above 0.5 on the start text, issue 12)
// that the grid marks; the grid's previous-token and induction scores, their uniform levels and
// their marks must agree with each other, on the start text and on a repeated run of random corpus
// words, where an induction head above 0.3 must be marked (issue 12), as on the "Repeated names"
// sample, one click away; and GPT-2 small must stay one click away.
//
//   node tests/e2e/run.mjs --site dist --out build/e2e --only tiny
import path from "node:path";
import { readFileSync } from "node:fs";
import { inflateRawSync } from "node:zlib";
import { check, waitFor, status, state, widget, findWidget, openPage as openPageIn, decodePng, pictureStats } from "./lib.mjs";

const BUILTIN_ROUTE = "/assets/tiny/model.safetensors";
const GPT2_URL = "https://huggingface.co/openai-community/gpt2/resolve/main/model.safetensors";
const PREVIOUS_TOKEN_THRESHOLD = 0.5;
const INDUCTION_THRESHOLD = 0.3;
const readJson = (rel) => JSON.parse(readFileSync(new URL(rel, import.meta.url), "utf8"));
// The shipped model's shape, and the induction probe its trainer wrote: 40 random word tokens of
// the corpus twice over, with the text that tokenizes to exactly them (tools/train_tiny).
const TINY_CONFIG = readJson("../../assets/tiny/config.json");
const HEADS_FIXTURE = readJson("../fixtures/tiny_heads.json");

// What uniform causal attention (A(i, j) = 1/(i+1)) scores on these token ids, computed here on
// its own: previous_token is the mean over queries 1..L-1, induction the mean over the queries
// whose token occurred before (each looks after its first occurrence).
function uniformScores(ids) {
  let prev = 0, ind = 0, n = 0;
  const seen = new Set();
  ids.forEach((id, i) => {
    if (i > 0) prev += 1 / (i + 1);
    if (seen.has(id)) { ind += 1 / (i + 1); n++; }
    seen.add(id);
  });
  return { previous_token: prev / (ids.length - 1), induction: n ? ind / n : NaN };
}
// A head has learned a pattern at this many times uniform attention's score (kLearnedOverUniform).
const LEARNED_OVER_UNIFORM = 4;

// One pattern's report in status().attention (previous_token or induction): every head's score,
// the best one, uniform attention's level, and the grid's marks are exactly the heads above the
// threshold. Returns the best, with its ratio to uniform.
function checkPattern(st, key, threshold, where) {
  const pt = st.attention?.[key];
  if (!check(pt && Array.isArray(pt.weights), `${where}: status().attention.${key} is reported`, JSON.stringify(pt)?.slice(0, 120)))
    return null;
  const flat = pt.weights.flat();
  check(pt.threshold === threshold, `${where}: its threshold is ${threshold}`, String(pt.threshold));
  check(pt.weights.length === st.model.n_layer && pt.weights.every((r) => r.length === st.model.n_head),
        `${where}: it has a ${key} score for every layer × head`, `${pt.weights.length} × ${pt.weights[0]?.length}`);
  check(flat.every((w) => typeof w === "number" && w >= 0 && w <= 1), `${where}: every ${key} score is in [0, 1]`,
        flat.map((w) => (typeof w === "number" ? w.toFixed(3) : String(w))).join(" "));
  const best = pt.best;
  check(best && best.weight === Math.max(...flat) && pt.weights[best.layer]?.[best.head] === best.weight,
        `${where}: "best" is the head with the largest ${key} score`, JSON.stringify(best));
  const uniform = uniformScores(st.text.ids)[key];
  check(Math.abs(pt.uniform - uniform) < 1e-9, `${where}: its uniform level is uniform attention's (${uniform.toFixed(4)})`,
        String(pt.uniform));
  const above = flat.filter((w) => w > threshold);
  const marked = pt.marked ?? [];
  check(marked.length === above.length && marked.every((m) => m.weight > threshold && pt.weights[m.layer]?.[m.head] === m.weight),
        `${where}: the grid marks exactly the heads above ${threshold}`, `${above.length} above, ${marked.length} marked`);
  return best ? { ...best, ratio: best.weight / uniform, uniform } : null;
}

// Thumbnails ready for the current pass, and a frame or two drawn since ("marked" is what the grid drew).
async function gridReady(page) {
  const ok = await waitFor(page, () => window.attnlab.status().attention?.thumbnails_ready, undefined, 30000);
  await page.waitForTimeout(200);
  return ok;
}

// Everything status() reported about the model fetch, sampled in the page every 20 ms from the
// first script on (a phase that lasts one frame is seen too).
function recordFetchPhases() {
  window.__phases = [];
  const sample = () => {
    try {
      const st = window.attnlab && window.attnlab.status && window.attnlab.status();
      const phase = st && st.model_fetch && st.model_fetch.phase;
      if (phase && window.__phases[window.__phases.length - 1] !== phase) window.__phases.push(phase);
    } catch (e) { /* not started yet */ }
  };
  setInterval(sample, 20);
}

// The network is closed: huggingface.co is answered here (held, never delivered).
const openPage = (context, url) =>
  openPageIn(context, url, { ignoreRequests: [/huggingface\.co/], initScript: recordFetchPhases });

// Loaded, named, and the forward pass over the start text done.
const tinyReady = (page, timeout = 60000) => waitFor(page, () => {
  const st = window.attnlab.status();
  return st.model.loaded && st.model.builtin === true && st.tokens > 0 && st.forward_tokens === st.tokens;
}, undefined, timeout);

function describe(st) {
  return JSON.stringify({ model: st.model, tokens: st.tokens, forward_tokens: st.forward_tokens, fetch: st.model_fetch?.phase,
                          error: st.error });
}

export async function tinyModel({ browser, server, out }) {
  console.log("the built-in model (AttnLab tiny), the page's instant default:");
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
  try {
    // 1. The plain page: no query, no hash, no click.
    const t0 = Date.now();
    const gets0 = server.downloads(BUILTIN_ROUTE);  // other parts of the run load it too
    const { page, errors, ready } = await openPage(context, `${server.origin}/`);
    if (!check(ready, "the plain page starts")) return;
    const loaded = await tinyReady(page);
    const seconds = ((Date.now() - t0) / 1000).toFixed(1);
    let st = await status(page);
    if (!check(loaded, "with no ?model= and no link, the built-in model loads and the start text is analysed",
               `${seconds} s; ${describe(st)}`)) {
      await page.screenshot({ path: path.join(out, "tiny-not-loaded.png") });
      return;
    }
    console.log(`        built-in model loaded and the start text analysed ${seconds} s after opening the page`);
    check(/AttnLab tiny/.test(st.model.name) && /not GPT-2/.test(st.model.name),
          "status().model.name says \"AttnLab tiny … not GPT-2\"", st.model.name);
    check(st.model.builtin === true, "status().model.builtin is true", String(st.model.builtin));
    check(st.model.n_layer === TINY_CONFIG.n_layer && st.model.n_head === TINY_CONFIG.n_head && st.model.n_embd === TINY_CONFIG.n_embd,
          `the built-in model has assets/tiny/config.json's shape (${TINY_CONFIG.n_layer} layers × ${TINY_CONFIG.n_head} heads × ` +
          `${TINY_CONFIG.n_embd} dims)`, JSON.stringify(st.model));
    check(server.downloads(BUILTIN_ROUTE) - gets0 === 1, "it came from the page's own site, once",
          `${server.downloads(BUILTIN_ROUTE) - gets0} GETs of ${BUILTIN_ROUTE}`);
    const phases = await page.evaluate(() => window.__phases);
    check(!phases.includes("confirm"), "no question was asked (model_fetch never in \"confirm\")", phases.join(" → "));
    check(st.error === "", "no message in the banner", st.error);
    const view = await state(page);
    check(view.model === "", "state().model is \"\" (a link names no model: the built-in one)", JSON.stringify(view.model));
    check(/^Genesis 1\n/.test(view.text) && st.tokens >= 80 && st.tokens <= 160,
          "the start text is the King James sample (80-160 tokens)", `${st.tokens} tokens: ${JSON.stringify(view.text.slice(0, 40))}…`);

    // 1b. Learned attention on the start text, and the first view: the Attention map on the strongest learned head.
    if (check(await gridReady(page), "the head grid's thumbnails are ready")) {
      st = await status(page);
      const prev = checkPattern(st, "previous_token", PREVIOUS_TOKEN_THRESHOLD, "start text");
      const prevMarked = prev && st.attention.previous_token.marked?.some((m) => m.layer === prev.layer && m.head === prev.head);
      check(prev && prev.weight > PREVIOUS_TOKEN_THRESHOLD && prevMarked,
            `a previous-token head above ${PREVIOUS_TOKEN_THRESHOLD} on the start text, marked in the grid (issue 12)`,
            prev ? `L${prev.layer} H${prev.head}: ${prev.weight.toFixed(3)}, ${prev.ratio.toFixed(1)} x uniform; marked: ${!!prevMarked}` : "none");
      const ind = checkPattern(st, "induction", INDUCTION_THRESHOLD, "start text");
      // The first view (issue 35 section 2): the strongest induction head when it is learned, else the
      // strongest learned head, the best of either pattern by its ratio to uniform attention.
      const strongest = [prev, ind].filter((b) => b && b.ratio >= LEARNED_OVER_UNIFORM).sort((a, b) => b.ratio - a.ratio)[0];
      const opening = ind && ind.ratio >= LEARNED_OVER_UNIFORM ? ind : strongest;
      const first = await state(page);
      check(first.panel === "attention" && opening && first.layer === opening.layer && first.head === opening.head,
            "the page opens the Attention map on the strongest induction head",
            `panel ${first.panel}, L${first.layer} H${first.head}; induction L${ind?.layer} H${ind?.head}, strongest L${strongest?.layer} H${strongest?.head}`);
      // ... where the selection is spread, so that sparsemax, N and T visibly change something: the weights
      // of the chosen query's row, read back from the page, not assumed.
      const row = (await status(page)).attention.row ?? [];
      const spread = row.filter((w) => w > 0.05).length;
      check(spread >= 3 && Math.max(...row) < 0.9,
            "the first view's query spreads its weight (at least 3 keys above 0.05, none above 0.9)",
            `${spread} keys above 0.05, top ${Math.max(...row).toFixed(3)}`);
      await page.mouse.move(5, 5);
      await page.waitForTimeout(150);
      await page.screenshot({ path: path.join(out, "tiny-first-view.png") });
    }

    // 2. A link made with it reopens with it, and shows the attention map (the panel is in the link).
    await page.evaluate(() => window.attnlab.setState({ panel: "attention" }));
    const link = await page.evaluate(() => window.attnlab.shareLink());
    let linked = null;
    try { linked = JSON.parse(inflateRawSync(Buffer.from(new URL(link).hash.slice(3), "base64url")).toString()); } catch { /* below */ }
    check(linked && linked.model === "" && !new URL(link).searchParams.has("model"),
          "the link names no model (not the built-in model's address)", JSON.stringify(linked?.model));
    check(errors.length === 0, "no errors on the plain page", errors.join(" | "));
    await page.close();
    const second = await openPage(context, link);
    if (!check(second.ready, "the link made with the built-in model opens")) return;
    const p2 = second.page;
    const reopened = await tinyReady(p2);
    st = await status(p2);
    check(reopened && st.model.builtin && server.downloads(BUILTIN_ROUTE) - gets0 === 2,
          "the link reopens with the built-in model (one more download of it)",
          `${server.downloads(BUILTIN_ROUTE) - gets0} GETs in all; ${describe(st)}`);
    check(st.panel === "attention", "the link opens the Attention map", st.panel);

    // 3. An induction head: 40 random corpus words, repeated once, typed into the page.
    await p2.evaluate((text) => window.attnlab.setState({ text }), HEADS_FIXTURE.induction_text);
    const expectIds = HEADS_FIXTURE.induction.ids;
    const ran = await waitFor(p2, (n) => {
      const s2 = window.attnlab.status();
      return s2.tokens === n && s2.forward_tokens === n;
    }, expectIds.length, 30000);
    st = await status(p2);
    check(ran && JSON.stringify(st.text.ids) === JSON.stringify(expectIds),
          `the repeated words tokenize to the probe's ${expectIds.length} ids (${HEADS_FIXTURE.induction_period} twice)`,
          `${st.tokens} tokens`);
    if (check(await gridReady(p2), "the head grid's thumbnails are ready for the repeated words")) {
      st = await status(p2);
      const ind = checkPattern(st, "induction", INDUCTION_THRESHOLD, "repeated words");
      const indMarked = ind && st.attention.induction.marked?.some((m) => m.layer === ind.layer && m.head === ind.head);
      check(ind && ind.weight > INDUCTION_THRESHOLD && indMarked,
            `an induction head above ${INDUCTION_THRESHOLD} on 40 random corpus words repeated once, marked in the grid (issue 12)`,
            ind ? `L${ind.layer} H${ind.head}: ${ind.weight.toFixed(3)} (uniform attention: ${ind.uniform.toFixed(3)}); marked: ${!!indMarked}` : "none");
      if (ind) await p2.evaluate((v) => window.attnlab.setState({ layer: v.layer, head: v.head }), ind);
    }
    await p2.mouse.move(5, 5);
    await p2.waitForTimeout(150);
    const shot = await p2.screenshot({ path: path.join(out, "tiny-induction.png") });
    const stats = pictureStats(decodePng(shot));
    check(stats.colours > 50 && stats.inked > 0.05, "the attention map with the built-in model is drawn (tiny-induction.png)",
          `${stats.colours} colours`);

    // 3b. The "Repeated names" sample, one click in the Text panel, shows an induction head too.
    await p2.evaluate(() => window.attnlab.setState({ panel: "text" }));
    await p2.waitForTimeout(200);
    const sample = await findWidget(p2, "text.sample.1");
    if (check(sample && sample.w > 0, "the Text panel has the \"Repeated names\" sample (text.sample.1)")) {
      await p2.mouse.click(sample.cx, sample.cy);
      const shown = await waitFor(p2, () => {
        const s2 = window.attnlab.status();
        return window.attnlab.state().text.startsWith("Mary and John") && s2.tokens > 0 && s2.forward_tokens === s2.tokens;
      }, undefined, 30000);
      await p2.evaluate(() => window.attnlab.setState({ panel: "attention" }));
      if (check(shown && await gridReady(p2), "one click loads the sample and analyses it")) {
        st = await status(p2);
        const ind = checkPattern(st, "induction", INDUCTION_THRESHOLD, "Repeated names");
        const marked = ind && st.attention.induction.marked?.some((m) => m.layer === ind.layer && m.head === ind.head);
        check(ind && ind.weight > INDUCTION_THRESHOLD && marked,
              `the "Repeated names" sample shows an induction head above ${INDUCTION_THRESHOLD}, marked in the grid (issue 12)`,
              ind ? `L${ind.layer} H${ind.head}: ${ind.weight.toFixed(3)} (uniform attention: ${ind.uniform.toFixed(3)}); marked: ${!!marked}` : "none");
        // Issue 35 section 5: the sample shows what induction is for, the repeat's next word, the one
        // that followed "baked" in the text itself (README and Help say so).
        const top = st.attention.top10?.[0];
        check(top && top.token === " bread" && top.p > 0.3,
              "the \"Repeated names\" sample's likeliest next token is \" bread\", the word that followed \"baked\"",
              JSON.stringify(st.attention.top10?.slice(0, 3)));
      }
    }

    // 4. GPT-2 small, one click away: the button names the size and starts the download at once.
    const hf = [];
    await p2.route("https://huggingface.co/**", (route) => { hf.push(route); });  // held: never answered
    const button = await findWidget(p2, "model.load_gpt2");
    if (check(button && button.w > 0, "the model bar has a \"Load GPT-2 small\" button (model.load_gpt2)")) {
      await p2.mouse.click(button.cx, button.cy);
      const started = await waitFor(p2, (u) => {
        const f = window.attnlab.status().model_fetch;
        return f.url === u && f.phase === "downloading";
      }, GPT2_URL, 5000);
      // The phase turns "downloading" before the page's cache lookup ends and fetch() reaches
      // the network, so the request itself is waited for too (slow CI machines lag here).
      for (let t = 0; started && !hf.some((r) => r.request().url() === GPT2_URL) && t < 100; ++t)
        await p2.waitForTimeout(50);
      st = await status(p2);
      check(started && hf.some((r) => r.request().url() === GPT2_URL),
            "one click starts downloading GPT-2 small from huggingface.co",
            `${st.model_fetch.phase} ${st.model_fetch.url}; requests ${hf.map((r) => r.request().method() + " " + r.request().url()).join(", ")}`);
      const phases2 = await p2.evaluate(() => window.__phases);
      check(!phases2.includes("confirm"), "no second question before the download", phases2.join(" → "));
      check((await state(p2)).model === GPT2_URL, "state().model names GPT-2 small while it loads");
      check(st.model.builtin === true, "the built-in model stays loaded meanwhile", describe(st));
      await p2.waitForTimeout(100);
      const cancel = await widget(p2, "model.cancel");
      await p2.mouse.click(cancel.cx, cancel.cy);
      const stopped = await waitFor(p2, () => window.attnlab.status().model_fetch.phase === "idle", undefined, 5000);
      st = await status(p2);
      check(stopped && st.model.builtin === true, "Cancel stops it; the built-in model is still loaded",
            `${st.model_fetch.phase}: ${st.model_fetch.notice}`);
      check((await state(p2)).model === "", "after the cancel, state().model names the built-in model again (\"\")",
            JSON.stringify((await state(p2)).model));
    }
    for (const r of hf) await r.abort().catch(() => {});
    check(second.errors.length === 0, "no errors on the linked page", second.errors.join(" | "));
    await p2.close();

    // 5. The reader's choice wins over the first view's pending move to the strongest head, even a
    // choice that leaves the view as it was (the Text panel it opens on): once the grid is ready,
    // the page must stay where the reader put it (issue 36; WebKit's "every panel draws" met it).
    const third = await openPage(context, `${server.origin}/`);
    if (!check(third.ready, "the plain page starts again")) return;
    const p3 = third.page;
    const chosen = await p3.evaluate(() => {
      const before = window.attnlab.status().attention?.thumbnails_ready;
      window.attnlab.setState({ panel: "text" });
      return { before, view: window.attnlab.state() };
    });
    check(chosen.before === false && chosen.view.panel === "text",
          "the reader chooses the Text panel before the head grid is ready", JSON.stringify({ ready: chosen.before, panel: chosen.view.panel }));
    const settled = await tinyReady(p3) && await gridReady(p3);
    const after = await state(p3);
    check(settled && after.panel === "text" && after.layer === chosen.view.layer && after.head === chosen.view.head,
          "once the head grid is ready, the page stays on the reader's choice (the first view's move gave way)",
          `panel ${after.panel}, L${after.layer} H${after.head}; chosen ${chosen.view.panel} L${chosen.view.layer} H${chosen.view.head}`);
    // And a choice made one frame after another: the tab bar must not apply the first one late
    // (ImGui selects a tab the frame after it is asked to; WebKit's "every panel draws" met it).
    const drawn = await p3.evaluate(async () => {
      window.attnlab.setState({ panel: "attention" });
      const f0 = window.attnlab.status().frames;
      while (window.attnlab.status().frames === f0) await new Promise((r) => requestAnimationFrame(r));
      window.attnlab.setState({ panel: "text" });
      return window.attnlab.status().frames;
    });
    await waitFor(p3, (f) => window.attnlab.status().frames >= f + 3, drawn, 5000);
    const last = { view: (await state(p3)).panel, shown: (await status(p3)).panel };
    check(last.view === "text" && last.shown === "text", "setState({panel}) one frame after another: the later one stays",
          JSON.stringify(last));
    check(third.errors.length === 0, "no errors on the third page", third.errors.join(" | "));
    await p3.close();
  } finally {
    await context.close();
  }
}
