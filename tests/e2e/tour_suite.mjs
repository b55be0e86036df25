// Tours (issue 14): the built-in tour played step by step on the built-in model, with the keys,
// the buttons and a slider dragged on the way; a three-step tour recorded in the editor, opened
// from its #t= link in a fresh page and stepped through; the UI scale travelling in that link;
// and tour links that are malformed, foreign, or name a model that fails.
//
//   node tests/e2e/run.mjs --site dist --out build/e2e --only tour
import fs from "node:fs";
import path from "node:path";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { check, waitFor, waitNotBusy, status, state, widget, settledWidget, openPage as openPageIn } from "./lib.mjs";
import { cliWeights } from "./twin_suite.mjs";


// The panels of the built-in tour, in the paper's order (src/app/tour/builtin_tour.cpp).
const BUILTIN_PANELS = ["attention", "playground", "distance", "distance", "separability", "gradient", "gradient", "playground", "attention",
                        "attention"];
const ELLIPSIS = "\u2026";
// A token as the tables and chips show it (text_panel.h chip_label): "·" a space, "↵" a newline, "⇥" a tab.
const chip = (s) => s.replace(/ /g, "\u00B7").replace(/\n/g, "\u21B5").replace(/\t/g, "\u21E5");
// %.3g as the captions print numbers (whole numbers in full).
const g3 = (x) => (Number.isInteger(x) ? String(x) : String(Number(x.toPrecision(3))));
// As the captions print any number (tour.cpp shown_value): whole, or at least 1000, in full.
const shown3 = (x) => (Number.isInteger(x) || Math.abs(x) >= 1000 ? x.toFixed(0) : g3(x));

// huggingface.co is never reached (the network is closed); /missing/ is a 404 on purpose.
const openPage = (context, url) => openPageIn(context, url, { ignoreRequests: [/huggingface\.co/, /\/missing\//] });

const forwardDone = (page, timeout = 60000) => waitFor(page, () => {
  const st = window.attnlab.status();
  return st.model.loaded && st.tokens > 0 && st.forward_tokens === st.tokens && st.attention.thumbnails_ready;
}, undefined, timeout);

// The strongest learned head as the analysis reports it: the best of either pattern by its
// ratio to uniform attention, at least 4 times (kLearnedOverUniform).
function strongestHead(st) {
  const best = ["previous_token", "induction"].map((k) => {
    const p = st.attention[k];
    return p && p.best ? { ...p.best, ratio: p.best.weight / p.uniform } : null;
  }).filter((b) => b && b.ratio >= 4).sort((a, b) => b.ratio - a.ratio);
  return best[0] ?? null;
}

// Waits until step k shows: the tour says so, its caption has every live value filled in, and
// the view is the step's (or, where the step asks for it, on the strongest head).
async function stepShown(page, k) {
  const ok = await waitFor(page, ([k, e]) => {
    const t = window.attnlab.status().tour;
    return t.playing && t.step === k && t.caption !== "" && !t.caption.includes(e);
  }, [k, ELLIPSIS], 90000);
  return { ok, st: await status(page), view: await state(page) };
}

async function pressKey(page, key) {
  await page.mouse.move(5, 5);
  await page.keyboard.press(key);
}

async function builtinTour(page, out, cli) {
  const started = await page.evaluate(() => window.attnlab.startTour());
  check(started.ok, "startTour() plays the built-in tour", JSON.stringify(started));
  const tour = await page.evaluate(() => window.attnlab.tour());
  check(tour && tour.title === "What softmax can and cannot select" && tour.steps.length === BUILTIN_PANELS.length,
        `tour() returns it: "What softmax can and cannot select", ${BUILTIN_PANELS.length} steps`,
        JSON.stringify({ title: tour?.title, steps: tour?.steps?.length }));
  // The README's count of the built-in tour's steps is the tour's own (issue 35: it had drifted).
  const readme = fs.readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const told = readme.match(/walks through the paper in (\d+)\s+live steps/);
  check(told && Number(told[1]) === tour?.steps?.length, "README.md gives the built-in tour's step count",
        `README ${told?.[1]}, tour ${tour?.steps?.length}`);
  check(tour && tour.steps.every((s, i) => s.view.panel === BUILTIN_PANELS[i] && typeof s.view.text === "string" && s.caption.includes("Try:")),
        "its steps run in the paper's order, each a whole view with a caption that gives something to try",
        tour?.steps?.map((s) => s.view.panel).join(" → "));
  let strongest = null;
  for (let k = 0; k < BUILTIN_PANELS.length; k++) {
    // Steps 2-4 by the keyboard and the Next button; the rest through tourStep().
    if (k === 1) await pressKey(page, "ArrowRight");
    else if (k === 2) { const next = await widget(page, "tour.next"); await page.mouse.click(next.cx, next.cy); }
    else await page.evaluate((k) => window.attnlab.tourStep(k), k);
    const { ok, st, view } = await stepShown(page, k);
    const want = tour.steps[k];
    if (k === 0) strongest = strongestHead(st);
    const how = k === 1 ? " (Right arrow)" : k === 2 ? " (Next button)" : "";
    check(ok && view.panel === want.view.panel && view.N === want.view.N && view.T === want.view.T,
          `step ${k + 1}${how}: "${want.title}" shows its view, with every number in its caption filled in`,
          `${st.tour.step} ${view.panel} N=${view.N} T=${view.T}: ${st.tour.caption.slice(0, 100)}`);
    if (want.strongest_head)
      check(strongest && view.layer === strongest.layer && view.head === strongest.head,
            `step ${k + 1}: on the model's strongest learned head (L${strongest?.layer} H${strongest?.head})`,
            `L${view.layer} H${view.head}`);
    if (want.highlight)
      check(st.tour.highlight === want.highlight && st.tour.highlight_drawn && st.widgets[want.highlight],
            `step ${k + 1}: the widget ${want.highlight} is outlined`, JSON.stringify(st.tour));
    // The captions' numbers are the live ones, checked against values computed here or read from the panel.
    const c = st.tour.caption;
    if (k === 0) {
      const w = st.attention.previous_token.weights[view.layer][view.head];
      check(c.includes(`Layer ${view.layer}, head ${view.head}`) && c.includes(g3(w)) && c.includes(g3(st.attention.previous_token.uniform)),
            "step 1's caption names the head, its previous-token weight and uniform attention's", c);
      await page.screenshot({ path: path.join(out, "tour-step1.png") });
    } else if (k === 5) {
      check(c.includes(`T = ${g3(view.T)}`) && c.includes(g3(1 / (2 * view.T))) && c.includes(g3(Math.min(1 / (4 * view.T), Math.SQRT2))) &&
            c.includes(g3(st.gradient.jacobian_norm)),
            "step 6's caption gives the exact norm and both bounds at T (1/(2T), min{1/(4T), sqrt 2})", c);
      // Live: the reader drags T, the caption follows; Next still goes to step 7's view.
      await page.evaluate(() => window.attnlab.setState({ T: 0.5 }));
      const followed = await waitFor(page, (x) => window.attnlab.status().tour.caption.includes(x),
                                     `At T = 0.5 the exact`, 10000) &&
                       (await status(page)).tour.caption.includes(`tight bound 1/(2T) gives ${g3(1 / (2 * 0.5))}.`);
      check(followed, "with T changed mid-step, the caption follows it (tight bound 1)", (await status(page)).tour.caption);
    } else if (k === 8) {
      const mc = st.model_changes, m = st.model;
      check(view.plan === "all=sparsemax" && mc.changed_heads === m.n_layer * m.n_head && mc.forward_current &&
            c.includes(chip(st.attention.top10[0].token)) && c.includes(chip(st.attention.baseline_top10[0].token)) && !/[\n\t]/.test(c) &&
            c.includes(shown3(mc.perplexity_before.perplexity)) && c.includes(shown3(mc.perplexity_after.perplexity)),
            "step 9 runs every head on sparsemax; its caption gives the next token and the perplexity before and after",
            `${view.plan} ${mc.changed_heads}: ${c}`);
    } else if (k === 9) {
      // The remedy: the model beside its SSMax twin, fetched from the site; the caption's largest
      // weights are the comparison's own, each the largest entry of the head's last row.
      // The caption quotes the retrieval numbers (per layer, each model's best head's weight on the
      // key after the last token's first occurrence), and they are the CLI's on the same ids.
      const tw = st.twin, r = tw?.retrieval;
      check(view.compare && view.plan === "" && tw?.phase === "ready" && /tiny-SSMax/.test(tw.twin.label) && r?.layers?.length > 2 &&
            [1, 2].every((l) => c.includes(g3(r.layers[l].model.weight)) && c.includes(g3(r.layers[l].twin.weight))) &&
            c.includes(g3(1 / tw.last.L)) && /head h of one is not head h of the other/.test(c),
            "step 10 compares the model with its SSMax twin by layer; its caption gives layers 1 and 2's retrieval weights and 1/L",
            `${tw?.phase} ${tw?.twin?.label}: ${c}`);
      const ids = st.text.ids, last = ids.length - 1, first = ids.indexOf(ids[last]);
      const target = first < last ? first + 1 : -1;
      check(r?.target === target && target > 0, "the retrieval target is the key after the last token's first occurrence",
            `${r?.target} vs ${target}`);
      if (cli && target > 0) {
        const folder = (label) => (/tiny-SSMax/.test(label) ? "tiny-ssmax" : "tiny");
        const best = (label, layer) => Math.max(...[0, 1, 2, 3].slice(0, st.model.n_head).map((h) =>
          cliWeights(cli, folder(label), ids, layer, h)[last][target]));
        const gaps = r.layers.map((x, l) => Math.max(Math.abs(x.model.weight - best(tw.model.label, l)),
                                                     Math.abs(x.twin.weight - best(tw.twin.label, l))));
        check(Math.max(...gaps) < 2e-5, "each layer's retrieval weight, both models, is the native CLI's", gaps.map((g) => g.toExponential(1)).join(" "));
        check(r.layers[2].twin.weight > 4 * r.layers[2].model.weight,
              "the step shows the effect where it exists (docs/science.md §14): layer 2's best head holds the far token in the SSMax twin",
              `${r.layers[2].model.weight} vs ${r.layers[2].twin.weight}`);
      }
    } else if (k === 3) {
      const reading = st.distance.N_star > 0 ? `N* = ${st.distance.N_star} ` : "no N* up to N = ";
      check(c.includes(reading), "step 4's caption gives the critical N of the all-heads summary", `${st.distance.N_star}: ${c}`);
    }
  }
  await pressKey(page, "ArrowLeft");
  await waitFor(page, (k) => window.attnlab.status().tour.step === k, BUILTIN_PANELS.length - 2, 5000);
  let t = (await status(page)).tour;
  check(t.step === BUILTIN_PANELS.length - 2 && (await state(page)).T === tour.steps[BUILTIN_PANELS.length - 2].view.T,
        "the Left arrow goes back a step, to its view", JSON.stringify({ step: t.step, T: (await state(page)).T }));
  await page.evaluate(() => window.attnlab.setState({ N: 7 }));
  const before = await state(page);
  await pressKey(page, "Escape");
  await waitFor(page, () => !window.attnlab.status().tour.playing, undefined, 5000);
  t = (await status(page)).tour;
  check(!t.playing && JSON.stringify(await state(page)) === JSON.stringify(before), "Esc leaves the tour and keeps the current view",
        JSON.stringify(t));
}

// Types into an ImGui field named in status().widgets, replacing what it held, and waits until
// the tour's last step holds it (`key`: title or caption).
async function typeInto(page, name, text, key) {
  const w = await widget(page, name);
  await page.mouse.click(w.cx, w.cy);
  await page.keyboard.press("Control+A");
  await page.keyboard.type(text);
  return waitFor(page, ([key, text]) => {
    const t = window.attnlab.tour();
    return t && t.steps[t.steps.length - 1][key] === text;
  }, [key, text], 10000);
}

const RECORDED = [
  { title: "The text", caption: "Tokens of the passage. Try: click one.", view: { panel: "text" } },
  { title: "A sharp head", caption: "Layer {attention.layer}, head {attention.head}.", view: { panel: "attention", layer: 0, head: 1, T: 0.25 } },
  { title: "Gradients", caption: "Tight bound {gradient.bound_tight}.", view: { panel: "gradient", T: 0.2, N: 3 } },
];

async function recordTour(page, out) {
  const menu = await widget(page, "menu.tour");
  await page.mouse.click(menu.cx, menu.cy);
  await page.waitForTimeout(200);
  const item = await widget(page, "menu.tour.editor");
  await page.mouse.click(item.cx, item.cy);
  if (!check(await waitFor(page, () => window.attnlab.status().tour.editor_open, undefined, 5000), "Tour → Record opens the tour editor"))
    return null;
  await page.waitForTimeout(200);
  const fresh = await widget(page, "tour_editor.new");  // the editor holds the tour just played
  await page.mouse.click(fresh.cx, fresh.cy);
  await waitFor(page, () => window.attnlab.tour() === null, undefined, 5000);
  for (const [i, r] of RECORDED.entries()) {
    await page.evaluate((v) => window.attnlab.setState(v), r.view);
    await waitNotBusy(page);  // the view's panel has done its work
    const add = await widget(page, "tour_editor.add");
    await page.mouse.click(add.cx, add.cy);
    const added = await waitFor(page, (n) => window.attnlab.tour()?.steps.length === n, i + 1, 5000);
    if (!check(added, `step ${i + 1}: Add this view as a step adds it`, JSON.stringify((await status(page)).tour))) return null;
    await typeInto(page, "tour_editor.step_title", r.title, "title");
    await typeInto(page, "tour_editor.step_caption", r.caption, "caption");
  }
  // Reorder and delete: a fourth step, moved up past the third, then deleted.
  const titles = async () => (await page.evaluate(() => window.attnlab.tour())).steps.map((s) => s.title);
  await page.evaluate(() => window.attnlab.setState({ panel: "separability" }));
  await waitNotBusy(page);
  const add = await widget(page, "tour_editor.add");
  await page.mouse.click(add.cx, add.cy);
  await waitFor(page, () => window.attnlab.tour().steps.length === 4, undefined, 5000);
  await typeInto(page, "tour_editor.step_title", "Extra", "title");
  const up = await widget(page, "tour_editor.up.3");
  await page.mouse.click(up.cx, up.cy);
  await waitFor(page, () => window.attnlab.tour().steps[2].title === "Extra", undefined, 5000);
  const moved = await titles();
  const del = await widget(page, "tour_editor.delete.2");
  await page.mouse.click(del.cx, del.cy);
  await waitFor(page, () => window.attnlab.tour().steps.length === 3, undefined, 5000);
  const kept = await titles();
  check(moved.join("|") === "The text|A sharp head|Extra|Gradients" && kept.join("|") === RECORDED.map((r) => r.title).join("|"),
        "the editor moves a step up and deletes it", `${moved.join(", ")} → ${kept.join(", ")}`);
  // Export JSON, then Import JSON of that file: the same tour. The buttons sit below the steps'
  // list, which the delete just shortened: their places are read once the layout has settled.
  const exp = await settledWidget(page, "tour_editor.export");
  await page.mouse.click(exp.cx, exp.cy);
  const exported = await waitFor(page, () => window.attnlab.lastExport()?.name === "attnlab-tour.json", undefined, 5000) &&
                   await page.evaluate(() => window.attnlab.lastExport().text);
  if (!check(exported, "Export JSON writes the tour (attnlab-tour.json)")) return null;
  const before = JSON.stringify(await page.evaluate(() => window.attnlab.tour().steps));
  const imp = await settledWidget(page, "tour_editor.import");
  const [chooser] = await Promise.all([page.waitForEvent("filechooser", { timeout: 5000 }), page.mouse.click(imp.cx, imp.cy)]);
  await page.evaluate(() => window.attnlab.setTour(null));
  await chooser.setFiles({ name: "attnlab-tour.json", mimeType: "application/json", buffer: Buffer.from(exported || "") });
  const imported = await waitFor(page, (b) => JSON.stringify(window.attnlab.tour()?.steps) === b &&
                                              window.attnlab.status().tour.step === 0, before, 5000);
  check(imported, "Import JSON of the exported file plays the same tour from step 1",
        `${(exported || "").length} bytes`);
  const importBad = await Promise.all([page.waitForEvent("filechooser", { timeout: 5000 }), page.mouse.click(imp.cx, imp.cy)]);
  await importBad[0].setFiles({ name: "notes.json", mimeType: "application/json", buffer: Buffer.from('{"v":1,"kind":"attnlab-tour"}') });
  const refused = await waitFor(page, () => /tour file .notes\.json. could not be opened: the tour: steps must be/.test(window.attnlab.status().error),
                                undefined, 5000);
  check(refused, "a malformed tour file is refused with a message naming the file and the key", (await status(page)).error);
  await page.evaluate(() => window.attnlab.tourStep(0));

  // The scale the teacher uses travels in the link.
  const tab100 = (await status(page)).widgets["tab.text"];
  const view = await widget(page, "menu.view");
  await page.mouse.click(view.cx, view.cy);
  await page.waitForTimeout(200);
  const scale = await widget(page, "menu.scale.150");
  await page.mouse.click(scale.cx, scale.cy);
  await waitFor(page, () => window.attnlab.status().ui_scale === 1.5, undefined, 5000);
  await page.mouse.move(5, 795);
  await page.waitForTimeout(300);
  const tab150 = (await status(page)).widgets["tab.text"];
  const grown = tab150.h / tab100.h;
  check((await status(page)).ui_scale === 1.5 && grown > 1.3 && grown < 1.7,
        "View → UI scale 150% sets the scale, and the UI grows with it", `a tab ${tab100.h} → ${tab150.h} px high (${grown.toFixed(2)}x)`);
  await page.screenshot({ path: path.join(out, "tour-editor.png") });
  const copy = await widget(page, "tour_editor.copy_link");
  await page.mouse.click(copy.cx, copy.cy);
  const linked = await waitFor(page, () => window.attnlab.status().share.tour && window.attnlab.status().share.link.includes("#t="),
                               undefined, 10000);
  const st = await status(page);
  const tour = await page.evaluate(() => window.attnlab.tour());
  const clipboard = await page.evaluate(() => navigator.clipboard.readText()).catch(() => "");
  check(linked && tour && tour.steps.length === 3 && tour.steps.every((s, i) => s.title === RECORDED[i].title && s.caption === RECORDED[i].caption),
        "three steps recorded in the editor, with the titles and captions typed, and Copy tour link made a #t= link",
        JSON.stringify({ steps: tour?.steps?.map((s) => [s.title, s.caption]), share: st.share, error: st.error }));
  check(tour && tour.steps.every((s, i) => Object.entries(RECORDED[i].view).every(([key, v]) => s.view[key] === v)),
        "each recorded step holds the view it was added from", JSON.stringify(tour?.steps?.map((s) => s.view.panel)));
  if (!linked) return null;
  check(clipboard === st.share.link && st.share.copied, "the tour's link is on the clipboard", clipboard.slice(0, 60));
  check(await page.evaluate(() => window.attnlab.tourLink()) === st.share.link, "tourLink() gives the same link");
  const packed = JSON.parse(inflateRawSync(Buffer.from(new URL(st.share.link).hash.slice(3), "base64url")).toString());
  check(packed.scale === 1.5 && packed.steps.length === 3, "the link carries the tour and its UI scale (150%)", JSON.stringify({ scale: packed.scale }));
  return { link: st.share.link, tour };
}

async function playRecorded(context, link, recorded) {
  const { page, errors, ready } = await openPage(context, link);
  if (!check(ready, "the tour link opens in a fresh page")) return;
  const first = await stepShown(page, 0);
  check(first.ok && first.st.tour.caption === RECORDED[0].caption && first.view.panel === "text",
        "it starts the tour at step 1, with its caption and view", JSON.stringify(first.st.tour));
  check(first.st.ui_scale === 1.5, "at the tour's UI scale (150%)", String(first.st.ui_scale));
  await waitFor(page, () => window.attnlab.status().model.loaded, undefined, 60000);
  for (let k = 1; k < 3; k++) {
    await pressKey(page, "ArrowRight");
    const { ok, st, view } = await stepShown(page, k);
    const want = recorded.steps[k].view;
    check(ok && view.panel === want.panel && view.layer === want.layer && view.head === want.head && view.T === want.T && view.N === want.N &&
          view.text === want.text, `step ${k + 1} by the Right arrow: its recorded view`, JSON.stringify({ ...view, text: view.text.length }));
    const expected = k === 1 ? `Layer ${want.layer}, head ${want.head}.` : `Tight bound ${g3(1 / (2 * want.T))}.`;
    check(st.tour.caption === expected, `step ${k + 1}'s caption, with its live values`, `${st.tour.caption} (want ${expected})`);
  }
  check(errors.length === 0, "no errors on the tour's page", errors.join(" | "));
  await page.close();
}

async function badTourLinks(context, origin) {
  const hashFor = (obj) => "#t=" + deflateRawSync(Buffer.from(JSON.stringify(obj))).toString("base64url");
  const cases = [
    { hash: "#t=not*base64", want: /tour link could not be opened.*not base64url/, what: "a tour link whose data is not base64url" },
    { hash: hashFor({ v: 1, kind: "something-else", steps: [] }), want: /tour link could not be opened.*not an AttnLab tour/,
      what: "a foreign tour (kind is not attnlab-tour)" },
    { hash: hashFor({ v: 1, kind: "attnlab-tour", steps: [{ title: "x", caption: "{broken", view: {} }] }),
      want: /tour link could not be opened.*step 1: caption/, what: "a tour with a malformed caption" },
  ];
  for (const c of cases) {
    const { page, errors, ready } = await openPage(context, `${origin}/${c.hash}`);
    const shown = ready && await waitFor(page, () => window.attnlab.status().error !== "", undefined, 10000);
    const loaded = await waitFor(page, () => window.attnlab.status().model.loaded, undefined, 60000);
    const st = await status(page);
    check(shown && c.want.test(st.error) && !st.tour.playing && loaded && st.model.builtin,
          `${c.what}: a readable message, no tour, and the normal page with the built-in model`, st.error);
    check(errors.length === 0, `${c.what}: no exception`, errors.join(" | "));
    await page.close();
  }
  // A tour whose step names a model that is not there: the model bar says so, the tour still plays.
  const missing = `${origin}/missing/model.safetensors`;
  const hash = hashFor({ v: 1, kind: "attnlab-tour", title: "t", steps: [{ title: "One", caption: "c", view: { model: missing } },
                                                                         { title: "Two", caption: "d", view: { panel: "gradient" } }] });
  const { page, errors, ready } = await openPage(context, `${origin}/${hash}`);
  const failed = ready && await waitFor(page, () => window.attnlab.status().model_fetch.phase === "failed", undefined, 20000);
  const st = await status(page);
  check(failed && st.tour.playing && st.tour.step === 0, "a tour naming a model URL that fails: the failure is reported, the tour plays",
        JSON.stringify({ phase: st.model_fetch.phase, notice: st.model_fetch.notice, error: st.error, tour: st.tour.step }));
  await pressKey(page, "ArrowRight");
  check(await waitFor(page, () => window.attnlab.status().tour.step === 1, undefined, 5000), "and Next still goes on");
  // Chromium logs the 404 itself as a console error; what must not happen is an exception.
  const thrown = errors.filter((e) => e.startsWith("uncaught"));
  check(thrown.length === 0, "no exception on that page", thrown.join(" | "));
  await page.close();
}


// The card at the sizes a class meets (issue 35): at each, every step's card and its three
// buttons lie inside the viewport, and the card does not cover the widget the step outlines. A
// screenshot of each step at each size goes to `out` (tour-WxH-step-K.png).
const CARD_SIZES = [[1440, 900], [1280, 800], [820, 1180], [390, 844]];
async function cardOnScreen(browser, origin, out) {
  for (const [width, height] of CARD_SIZES) {
    const context = await browser.newContext({ viewport: { width, height }, serviceWorkers: "block" });
    try {
      const { page, errors, ready } = await openPage(context, `${origin}/`);
      if (!check(ready && await forwardDone(page), `${width}x${height}: the page starts with the built-in model`)) continue;
      const started = await page.evaluate(() => window.attnlab.startTour());
      const steps = started.ok ? (await page.evaluate(() => window.attnlab.tour())).steps : [];
      for (let k = 0; k < steps.length; k++) {
        await page.evaluate((k) => window.attnlab.tourStep(k), k);
        const { ok } = await stepShown(page, k);
        if (steps[k].view.compare) await waitFor(page, () => window.attnlab.status().twin?.phase === "ready", undefined, 60000);
        // The card follows the layout frame by frame: wait (briefly) for a frame where it fits.
        const fits = ([w, h, name]) => {
          const st = window.attnlab.status(), ws = st.widgets;
          const inside = (r) => r && r.x >= 0 && r.y >= 0 && r.x + r.w <= w + 0.5 && r.y + r.h <= h + 0.5;
          const card = ws["tour.card"], hl = name ? ws[name] : null;
          const apart = !hl || !st.tour.highlight_drawn || card.x >= hl.x + hl.w || hl.x >= card.x + card.w || card.y >= hl.y + hl.h ||
                        hl.y >= card.y + card.h;
          return inside(card) && ["tour.back", "tour.next", "tour.leave"].every((b) => inside(ws[b])) && apart;
        };
        const good = ok && await waitFor(page, fits, [width, height, steps[k].highlight], 5000);
        const st = await status(page);
        const r = (n) => { const x = st.widgets[n]; return x ? `${n} ${Math.round(x.x)},${Math.round(x.y)} ${Math.round(x.w)}x${Math.round(x.h)}` : `${n} none`; };
        check(good, `${width}x${height} step ${k + 1}: the card and its buttons are on screen, clear of ${steps[k].highlight || "(no widget)"}`,
              [r("tour.card"), r("tour.next"), steps[k].highlight ? r(steps[k].highlight) : ""].join("; "));
        await page.screenshot({ path: path.join(out, `tour-${width}x${height}-step-${k + 1}.png`) });
      }
      check(steps.length > 0 && errors.length === 0, `${width}x${height}: the tour played, no errors`, errors.join(" | "));
      await page.close();
    } finally {
      await context.close();
    }
  }
}

export async function tours({ browser, server, out, cli }) {
  console.log("tours:");
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: "block" });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.origin });
  try {
    const { page, errors, ready } = await openPage(context, `${server.origin}/`);
    if (!check(ready && await forwardDone(page), "the plain page starts with the built-in model")) return;
    await builtinTour(page, out, cli);
    const recorded = await recordTour(page, out);
    check(errors.length === 0, "no errors while playing and recording", errors.join(" | "));
    await page.close();
    if (recorded) await playRecorded(context, recorded.link, recorded.tour);
    await badTourLinks(context, server.origin);
  } finally {
    await context.close();
  }
  await cardOnScreen(browser, server.origin, out);
}
