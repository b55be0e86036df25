// Phones and tablets, in Chromium's mobile emulation (touch; devicePixelRatio 3, the tablet 2), at 390 x 844 and
// 844 x 390 (a phone either way round) and 768 x 1024 (a tablet): issue 27. Touches are sent as
// a finger sends them (CDP Input.dispatchTouchEvent: touch events only, no mouse), and typing goes
// through the page's DOM text element, as an on-screen keyboard's does. At each size:
//   the canvas is sharp (backing store = CSS size x 3) and the page names its size class;
//   a touch drag on the playground's temperature slider moves it (T changes);
//   a tap on a head thumbnail opens that head;
//   (not held sideways) swiped up, the header (model bar, tabs, controls) scrolls away and the
//   content gets at least 85% of the screen; the heatmap takes 70% of the width or more; a swipe
//   that starts on it scrolls the page and selects nothing, a tap on it selects the row tapped; two
//   fingers spread over it zoom it about them (not the UI scale), and closing them zooms out;
//   a swipe over the tokens pane scrolls it, and clicks no token;
//   a tap on the text box focuses the DOM text element; typed text, an IME's composition, a
//   Backspace, Enter and a paste reach the text box, the token count follows, and closing the
//   keyboard (blur) ends the edit with the text kept;
//   the page starts at the UI scale that suits the screen (status().device.default_ui_scale);
//   a screenshot of every panel (phone-<size>-<panel>.png), and nothing in it cut off: no window
//   past the viewport's edge, none holding more than it shows unless it scrolls, and every widget
//   drawn either inside the viewport or in a window that scrolls it into view (the small-screen
//   layout: src/app/panels/pane_layout.h).
// At 390 x 844 also: while the model works and when it ends, the tabs and the panel's controls stay
// where they are, frame by frame (the progress is in the menu bar); a long press shows a token's tooltip and clicks nothing; a pinch sets the UI
// scale, which the page then keeps, and leaves the canvas sharp; and memory: on a device that reports 256 MB and stops the wasm
// memory from growing, a large checkpoint is announced as maybe too large before its download,
// its failure is reported, and the page stays usable on the built-in model.
//
// First, desktops (no touch): a window 560 px tall starts at 100%, not at the touch screens' 125%;
// at 1280 x 800 and 1440 x 900 the model bar keeps one line with either built-in model's name.
//
//   node tests/e2e/run.mjs --site dist --out build/e2e --cli build/native/attnlab --only phone
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { check, waitFor, status, state, findWidget, openPage, decodePng, pictureStats } from "./lib.mjs";
import { tokenize } from "./fixtures.mjs";
import { PANELS } from "./model_suite.mjs";

export const SIZES = [
  { name: "390x844", width: 390, height: 844, size_class: "phone", dpr: 3 },
  { name: "844x390", width: 844, height: 390, size_class: "phone", dpr: 3 },
  // iPads draw at 2 device pixels a CSS pixel. At 3 this size's software-drawn frames (SwiftShader,
  // 7 megapixels) made it the slowest part of CI's browser suite (135 s of the phones' 333 s).
  { name: "768x1024", width: 768, height: 1024, size_class: "tablet", dpr: 2 },
];
// A text long enough to overflow the tokens pane at every size, tablets included: chips flow
// across line breaks, so its 256 tokens (the built-in model's limit) are long words, one token
// each in GPT-2's vocabulary, a handful to a row even on a tablet.
const LONG = Array.from({ length: 60 }, (_, i) => `Line ${i}: information development international government environment understanding.`).join("\n");

// --- fingers ---------------------------------------------------------------------------------------
const pause = (page, ms) => page.waitForTimeout(ms);
function fingers(cdp) {
  const send = (type, points) => cdp.send("Input.dispatchTouchEvent", {
    type, touchPoints: points.map(([x, y], id) => ({ x: Math.round(x), y: Math.round(y), id })),
  });
  return {
    // A finger rests a moment (a frame sees the press), then moves in steps, then lifts. Each
    // step is at least 15 CSS px, past the 10 px a tap may wander: here each event takes a few
    // hundred ms to deliver (SwiftShader at devicePixelRatio 3), and a finger that stays within
    // those 10 px for half a second is a long press.
    async drag(page, [x0, y0], [x1, y1], steps = 8) {
      steps = Math.max(1, Math.min(steps, Math.floor(Math.hypot(x1 - x0, y1 - y0) / 15)));
      await send("touchStart", [[x0, y0]]);
      await pause(page, 100);
      for (let i = 1; i <= steps; i++) { await send("touchMove", [[x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps]]); await pause(page, 40); }
      await pause(page, 100);
      await send("touchEnd", []);
    },
    // A quick tap does not wait for the page to take the touch's start before it lifts: a delivery
    // here takes a few hundred ms, and a finger held half a second is a long press.
    async tap(page, x, y, hold = 120) {
      const start = send("touchStart", [[x, y]]);
      if (hold >= 500) await start;
      await pause(page, hold);
      await Promise.all([start, send("touchEnd", [])]);
    },
    async pinch(page, [cx, cy], from, to, steps = 6) {
      await send("touchStart", [[cx - from / 2, cy], [cx + from / 2, cy]]);
      await pause(page, 100);
      for (let i = 1; i <= steps; i++) {
        const d = from + (to - from) * i / steps;
        await send("touchMove", [[cx - d / 2, cy], [cx + d / 2, cy]]);
        await pause(page, 60);
      }
      await pause(page, 200);
      await send("touchEnd", []);
    },
  };
}

// The part of a widget inside the viewport (null when none of it is).
function visiblePart(w, size) {
  if (!w) return null;
  const x0 = Math.max(0, w.x), y0 = Math.max(0, w.y), x1 = Math.min(size.width, w.x + w.w), y1 = Math.min(size.height, w.y + w.h);
  return x1 - x0 > 4 && y1 - y0 > 4 ? { x: x0, y: y0, w: x1 - x0, h: y1 - y0, cx: (x0 + x1) / 2, cy: (y0 + y1) / 2 } : null;
}

// Scrolls the panel until widget `name` is wholly shown (a phone held sideways shows little of a
// stacked panel at once): the mouse wheel over the panel's scrollbar, at its right edge, where no
// widget is. (The finger's own swipes are checked on the tokens pane.) The widget, or null.
async function reveal(page, size, name) {
  for (let i = 0; i < 12; i++) {
    const r = await findWidget(page, name);
    if (!r) return null;
    const v = r.visible;
    if (v.h >= r.h - 1 && v.y >= 0 && v.y + v.h <= size.height) return r;
    await wheelNotch(page, size, r.y + r.h / 2 > size.height / 2 ? 1 : -1, name);
  }
  return findWidget(page, name);
}

// One notch of the mouse wheel (+1 down), over the panel's scrollbar at its right edge, and the
// widget `name` once the panel has stopped moving. (Chromium's mobile emulation divides the
// wheel's pixels by the pixel ratio: dpr x 100 of them make the 100 CSS pixels of a notch.)
async function wheelNotch(page, size, notches, name) {
  await page.mouse.move(size.width - 12, size.height * 0.7);
  await page.mouse.wheel(0, notches * 100 * size.dpr);
  for (let last = null, now = JSON.stringify(await findWidget(page, name)); now !== last; ) {
    await pause(page, 200);
    [last, now] = [now, JSON.stringify(await findWidget(page, name))];
  }
  return findWidget(page, name);
}

// Opens a panel once the page is idle, so that what it shows is for the current text (the progress
// of work sits in the menu bar and moves nothing: noShiftWhenWorkEnds).
async function show(page, panel) {
  await waitFor(page, () => !window.attnlab.status().busy, undefined, 30000);
  await page.evaluate((p) => window.attnlab.setState({ panel: p }), panel);
  await waitFor(page, (p) => window.attnlab.status().panel === p && !window.attnlab.status().busy, panel, 30000);
  await pause(page, 250);  // a frame or two lays it out
}

// --- the checks --------------------------------------------------------------------------------------
async function sliderDrag(page, finger, size, tag) {
  await show(page, "playground");
  const s = visiblePart(await reveal(page, size, "playground.temperature"), size);
  if (!check(s, `${tag}: the temperature slider is on screen`, JSON.stringify(await findWidget(page, "playground.temperature")))) return;
  // A tap in the middle sets the value there (a slider jumps to a press); the drag from there
  // must then carry it on to where the finger lifts.
  await finger.tap(page, s.cx, s.cy);
  await pause(page, 300);
  const middle = (await status(page)).playground.T;
  await finger.drag(page, [s.cx, s.cy], [s.x + s.w * 0.95, s.cy]);
  const moved = await waitFor(page, (t) => window.attnlab.status().playground.T / t > 1.5, middle, 5000);
  const st = await status(page);
  check(moved && st.input.touch, `${tag}: a finger dragged along the temperature slider moves it`,
        `T ${middle} at the middle -> ${st.playground.T} after the drag to 95%; touch ${st.input.touch}`);
}

async function tapHead(page, finger, size, tag) {
  await show(page, "attention");
  await waitFor(page, () => window.attnlab.status().attention?.thumbnails_ready, undefined, 20000);
  await reveal(page, size, "attention.thumb.0.0");
  const widgets = (await status(page)).widgets;
  const grid = widgets["attention.grid"];
  // A thumbnail (attention.thumb.<layer>.<head>) wholly in view, other than the head open now.
  const open = await state(page);
  const want = Object.entries(widgets).map(([name, r]) => {
    const m = /^attention\.thumb\.(\d+)\.(\d+)$/.exec(name);
    return m && { layer: Number(m[1]), head: Number(m[2]), x: r.x + r.w / 2, y: r.y + r.h / 2, seen: visiblePart(r, size), r };
  }).filter((t) => t && t.seen && t.seen.w >= t.r.w - 1 && t.seen.h >= t.r.h - 1 && t.r.visible.h >= t.r.h - 1 &&
              !(t.layer === open.layer && t.head === open.head)).shift();
  if (!check(want, `${tag}: a head thumbnail is on screen`, JSON.stringify(grid))) return;
  await finger.tap(page, want.x, want.y);
  const opened = await waitFor(page, (w) => { const v = window.attnlab.state(); return v.layer === w.layer && v.head === w.head; }, want, 5000);
  const v = await state(page);
  check(opened, `${tag}: a tap on a head thumbnail opens that head`, `L${v.layer} H${v.head}, wanted L${want.layer} H${want.head}`);
}

// A tablet may have a trackpad or a mouse: a notch of the wheel scrolls the stacked panel down by
// ImGui's step (5 lines), and a notch back up returns it. (The GLFW port of Emscripten 3.1.6
// passes the DOM's raw pixels with the sign of scrolling down: ImGui read them as tens of notches
// upwards, and every wheel sent a pane to its top.)
async function wheelScroll(page, size, tag) {
  await show(page, "attention");
  const before = await findWidget(page, "attention.grid");
  const down = await wheelNotch(page, size, 1, "attention.grid");
  const up = await wheelNotch(page, size, -1, "attention.grid");
  const line = 15 * (await status(page)).ui_scale;  // CSS px: kFontPixels at this UI scale
  const moved = before && down ? before.y - down.y : NaN;
  check(moved > 3.5 * line && moved < 6.5 * line && Math.abs(up.y - before.y) < 1,
        `${tag}: a notch of the mouse wheel scrolls the stacked panel down by about 5 lines, a notch up back`,
        `grid at y ${before?.y} -> ${down?.y} -> ${up?.y}; a line is ${line} px`);
}

async function swipeTokens(page, finger, size, tag) {
  await page.evaluate((text) => window.attnlab.setState({ text, panel: "text" }), LONG);
  // (The built-in model reads at most 256 tokens: the text is clipped to them.)
  await waitFor(page, () => { const s = window.attnlab.status(); return s.tokens >= 200 && s.forward_tokens === s.tokens; }, undefined, 30000);
  await pause(page, 300);
  await reveal(page, size, "text.chips");  // held sideways, the pane may start below the fold
  const pane = visiblePart(await findWidget(page, "text.chips"), size);
  if (!check(pane && pane.h > 30, `${tag}: the tokens pane is on screen`, JSON.stringify(await findWidget(page, "text.chips")))) return;
  const query = (await state(page)).query;
  const travel = Math.min(pane.h * 0.6, 200);
  await finger.drag(page, [pane.cx, pane.y + pane.h * 0.8], [pane.cx, pane.y + pane.h * 0.8 - travel]);
  await pause(page, 200);
  const up = (await status(page)).input.scrolled;
  await finger.drag(page, [pane.cx, pane.y + pane.h * 0.3], [pane.cx, pane.y + pane.h * 0.3 + travel / 2]);
  await pause(page, 200);
  const back = (await status(page)).input.scrolled;
  const v = await state(page);
  // The content follows the finger: 3 backing pixels per CSS pixel, less the slop before it starts.
  check(/##chips/.test(up.window) && up.y > Math.min(travel * size.dpr * 0.6, up.max_y - 1) && back.y < up.y,
        `${tag}: a swipe up scrolls the tokens pane by about the finger's travel, a swipe down back`,
        `after ${travel.toFixed(0)} px up: ${JSON.stringify(up)}; after ${(travel / 2).toFixed(0)} px down: ${back.y}`);
  check(v.query === query, `${tag}: a swipe over the tokens clicks none of them`, `query ${query} -> ${v.query}`);
}

// A point well inside a token chip of the pane (a chip's fill all around it), from a screenshot.
async function findChip(page, pane) {
  const png = decodePng(await page.screenshot({ clip: { x: pane.x, y: pane.y, width: pane.w, height: pane.h }, scale: "css" }));
  const fills = [[208, 228, 246], [251, 229, 200]];  // text_panel.cpp's kChipFill
  const isFill = (x, y) => {
    const i = (y * png.width + x) * png.channels;
    return fills.some(([r, g, b]) => png.px[i] === r && png.px[i + 1] === g && png.px[i + 2] === b);
  };
  for (let y = 4; y < png.height - 4; y++)
    for (let x = 4; x < png.width - 4; x++)
      if ([[-3, -3], [3, -3], [-3, 3], [3, 3], [0, 0]].every(([dx, dy]) => isFill(x + dx, y + dy))) return { x: pane.x + x, y: pane.y + y };
  return null;
}

async function longPress(page, finger, size, tag) {
  const pane = visiblePart(await findWidget(page, "text.chips"), size);
  const chip = pane && await findChip(page, pane);
  if (!check(chip, `${tag}: a token chip is on screen`, JSON.stringify(pane))) return;
  const query = (await state(page)).query;
  await finger.tap(page, chip.x, chip.y, 900);
  await pause(page, 200);
  const st = await status(page);
  const v = await state(page);
  check(st.input.tooltip && st.input.mouse.present && !st.input.mouse.down && v.query === query,
        `${tag}: a long press on a token shows its tooltip after the finger lifts, and selects nothing`,
        JSON.stringify({ tooltip: st.input.tooltip, mouse: st.input.mouse, query: [query, v.query] }));
  await finger.tap(page, chip.x, chip.y);  // a tap on it selects it
  const chosen = await waitFor(page, (q) => window.attnlab.state().query !== q, query, 5000);
  check(chosen, `${tag}: a tap on a token selects it`, `query ${query} -> ${(await state(page)).query}`);
}

async function typing(page, finger, cdp, cli, size, tag) {
  await show(page, "text");
  // (The tokens' swipe may have scrolled a stacked pane past the box.)
  const box = visiblePart(await reveal(page, size, "text.input"), size);
  if (!check(box, `${tag}: the text box is drawn`, JSON.stringify(await findWidget(page, "text.input")))) return;
  await finger.tap(page, box.x + Math.min(box.w / 2, 100), box.y + Math.min(box.h / 2, 20));
  const focused = await waitFor(page, () => { const i = window.attnlab.status().input; return i.text_wanted && i.text_focused; }, undefined, 5000);
  check(focused && await page.evaluate(() => document.activeElement?.id === "text-input"),
        `${tag}: a tap on the text box focuses the page's DOM text element (the on-screen keyboard's)`,
        JSON.stringify((await status(page)).input));
  const typed = "The cat sat. It ran";
  await page.keyboard.press("Control+A");
  await page.keyboard.type(typed, { delay: 10 });
  await page.keyboard.press("Enter");
  // An IME: a composition that changes as it goes, then commits other characters.
  await cdp.send("Input.imeSetComposition", { text: "にほ", selectionStart: 2, selectionEnd: 2 });
  await cdp.send("Input.imeSetComposition", { text: "にほんご", selectionStart: 4, selectionEnd: 4 });
  await cdp.send("Input.insertText", { text: "日本語" });
  await page.keyboard.press("Backspace");
  await page.evaluate(() => navigator.clipboard.writeText(" and more"));
  await page.keyboard.press("Control+V");
  const want = `${typed}\n日本 and more`;
  const same = await waitFor(page, (w) => window.attnlab.state().text === w, want, 10000);
  const expected = tokenize(cli, want).length;
  const counted = await waitFor(page, (n) => window.attnlab.status().tokens === n, expected, 10000);
  check(same && counted, `${tag}: typing, an IME's composition, Backspace, Enter and a paste reach the text box, and the token count follows`,
        `${JSON.stringify((await state(page)).text)} (want ${JSON.stringify(want)}); ${(await status(page)).tokens} tokens, the CLI says ${expected}`);
  await page.evaluate(() => document.getElementById("text-input").blur());  // the keyboard closed
  const ended = await waitFor(page, () => !window.attnlab.status().input.text_wanted, undefined, 5000);
  check(ended && (await state(page)).text === want, `${tag}: closing the keyboard ends the edit and keeps the text`,
        JSON.stringify((await status(page)).input));
}

async function pinch(page, finger, size, tag) {
  const before = (await status(page)).ui_scale;
  // web_main.cpp's rule: from the scale at the start, in quarter steps, 100% to 250%.
  const want = Math.min(2.5, Math.max(1, Math.round(before * 1.5 * 4) / 4));
  await finger.pinch(page, [size.width / 2, size.height / 2], 100, 150);
  const grown = await waitFor(page, (w) => window.attnlab.status().ui_scale === w, want, 5000);
  const st = await status(page);
  const sharp = await page.evaluate(() => {
    const c = document.getElementById("canvas"), r = c.getBoundingClientRect();
    return { w: c.width, h: c.height, cssW: r.width, cssH: r.height, zoom: window.visualViewport ? visualViewport.scale : 1 };
  });
  check(grown && sharp.zoom === 1 && sharp.w === Math.round(sharp.cssW * size.dpr) && sharp.h === Math.round(sharp.cssH * size.dpr) &&
        sharp.cssW === size.width && sharp.cssH === size.height,
        `${tag}: two fingers spread 1.5 times set the UI scale from ${before * 100}% to ${want * 100}%, and the canvas stays sharp and whole (no browser zoom)`,
        `ui_scale ${before} -> ${st.ui_scale}; ${JSON.stringify(sharp)}`);
  // The reader's choice wins over the screen's default: frames drawn since keep it.
  await show(page, "help");
  await show(page, "text");
  check((await status(page)).ui_scale === want, `${tag}: the pinched UI scale stays (the screen's default does not take over again)`,
        String((await status(page)).ui_scale));
  await finger.pinch(page, [size.width / 2, size.height / 2], 150, 100);  // and back
  const back = await waitFor(page, (s) => window.attnlab.status().ui_scale === s, before, 5000);
  check(back, `${tag}: two fingers closing back set the UI scale back to ${before * 100}%`, String((await status(page)).ui_scale));
}

// The page's header (the model bar and the tabs, widgets model.* and tab.*): the lowest edge of
// those on screen, or of the menu bar (menu.menu, always on screen) when none is. Below it is
// the panel's: the content.
async function contentTop(page, size) {
  const widgets = (await status(page)).widgets;
  let top = 0;
  for (const [name, r] of Object.entries(widgets)) {
    if (!r.drawn || !/^(model\.|tab\.|menu\.)/.test(name)) continue;
    const v = visiblePart(r, size);
    if (v) top = Math.max(top, v.y + v.h);
  }
  return top;
}

// Issue 35: on a phone the header (model bar, address row, tabs) scrolls away, so the content gets
// the screen; the heatmap takes the width; a swipe that starts on the heatmap scrolls the page and
// selects nothing; a tap on it selects the row under the finger. The content's share of the screen
// is measured at the top of the page and once the finger has scrolled to the heatmap (before
// issue 35: a third, 279 of 844 px, and the heatmap 142 px wide).
async function heatmapOnPhone(page, finger, size, tag) {
  await show(page, "attention");
  await page.mouse.move(size.width - 12, size.height * 0.7);
  await page.mouse.wheel(0, -30 * 100 * size.dpr);  // back to the page's top
  await pause(page, 500);
  const shareTop = (size.height - await contentTop(page, size)) / size.height;
  // Swipes up from the screen's lower half until the map is wholly on screen.
  let map = await findWidget(page, "attention.heatmap");
  for (let i = 0; i < 8 && map && !(map.y >= 0 && map.y + map.h <= size.height && (await contentTop(page, size)) <= map.y); i++) {
    const rest = Math.max(map.y + map.h - size.height, (await contentTop(page, size)) - map.y) + 60;
    const from = [size.width * 0.45, size.height * 0.8];
    await finger.drag(page, from, [from[0], from[1] - Math.min(size.height * 0.5, Math.max(rest, 100))]);
    await pause(page, 300);
    map = await findWidget(page, "attention.heatmap");
  }
  const top = await contentTop(page, size);
  const share = (size.height - top) / size.height;
  const shown = map && map.y >= 0 && map.y + map.h <= size.height && top <= map.y;
  check(shown && share >= 0.85, `${tag}: swiped up, the header scrolls away and the content gets the screen`,
        `content from y ${top.toFixed(0)}: ${(share * 100).toFixed(0)}% of ${size.height} px (at the top ${(shareTop * 100).toFixed(0)}%); ` +
        `heatmap at y ${map?.y.toFixed(0)}..${(map?.y + map?.h).toFixed(0)}`);
  check(map && map.w >= size.width * 0.7, `${tag}: the heatmap takes the width (at least 70% of it)`,
        `${map?.w.toFixed(0)} of ${size.width} px`);
  if (!shown) return;
  // A tap on a row other than the chosen one: the map is L x L cells (binned maps pick rows too).
  const query = (await state(page)).query;
  const L = (await status(page)).attention.L;
  const row = query > L / 2 ? Math.floor(L * 0.2) : Math.floor(L * 0.7);
  await finger.tap(page, map.x + map.w * 0.1, map.y + (row + 0.5) * map.h / L);
  const chosen = await waitFor(page, (q) => window.attnlab.state().query !== q, query, 5000);
  const got = (await state(page)).query;
  check(chosen && Math.abs(got - row) <= 1, `${tag}: a tap on the heatmap selects the row under the finger`,
        `query ${query} -> ${got}, the finger on row ${row} of ${L}`);
  // A swipe down that starts on the map: the page scrolls back (the header has room above), and the
  // query stays the one tapped.
  const travel = 100, from = [map.x + map.w * 0.5, map.y + map.h * 0.3];
  await finger.drag(page, from, [from[0], from[1] + travel]);
  await pause(page, 300);
  const after = await findWidget(page, "attention.heatmap"), kept = (await state(page)).query;
  check(after.y - map.y > travel * 0.5 && kept === got, `${tag}: a swipe that starts on the heatmap scrolls the page and selects no query`,
        `the map moved ${(after.y - map.y).toFixed(0)} px with a ${travel} px swipe; query ${got} -> ${kept}`);
  await pinchMap(page, finger, size, tag);
}

// Two fingers spread twice apart over the map zoom it to half its side about their midpoint (the
// position under it stays under it, block_map.h's zoomed), and leave the UI scale alone; closing
// back shows the whole map again.
async function pinchMap(page, finger, size, tag) {
  const map = await findWidget(page, "attention.heatmap"), m = visiblePart(map, size);  // the page may cut its bottom off
  const st = await status(page), w0 = st.attention.map.window, L = st.attention.L, scale = st.ui_scale;
  const side0 = w0[1] - w0[0], cell = map.h / side0;
  const at = [m.cx, m.y + Math.min(m.h * 0.5, 120)];
  const atQ = w0[0] + (at[1] - map.y) / cell, atK = w0[2] + (at[0] - map.x) / cell;
  await finger.pinch(page, at, 80, 160);
  const done = (w) => { const m = window.attnlab.status().attention.map; return m.pinch === 0 && m.window.join() !== w.join() && m.current; };
  const zoomed = await waitFor(page, done, w0, 5000);
  const w1 = (await status(page)).attention.map.window, side1 = w1[1] - w1[0];
  // Where the anchor lies in each window, as a fraction of its side (an edge may hold it back).
  const frac = (w, at, lo) => (at - w[lo]) / (w[lo + 1] - w[lo]);
  const edge = w1[0] === 0 || w1[1] === L || w1[2] === 0 || w1[3] === L;
  const kept = Math.abs(frac(w1, atQ, 0) - frac(w0, atQ, 0)) * side1 <= 1.5 && Math.abs(frac(w1, atK, 2) - frac(w0, atK, 2)) * side1 <= 1.5;
  const sameScale = (await status(page)).ui_scale === scale;
  check(zoomed && Math.abs(side1 - Math.max(Math.min(8, L), side0 / 2)) <= 1 && w1[3] - w1[2] === side1 && (kept || edge) && sameScale,
        `${tag}: two fingers spread twice apart over the map zoom it to half its side about them, and the UI scale stays`,
        `window [${w0}] -> [${w1}] of ${L}; fingers at query ${atQ.toFixed(1)}, key ${atK.toFixed(1)}; ui_scale ${scale} -> ${(await status(page)).ui_scale}`);
  await finger.pinch(page, at, 160, 80);
  const back = await waitFor(page, (w) => { const m = window.attnlab.status().attention.map; return m.pinch === 0 && m.window.join() !== w.join(); }, w1, 5000);
  const w2 = (await status(page)).attention.map.window;
  check(back && w2[1] - w2[0] >= Math.min(L, side1 * 2) - 1 && (await status(page)).ui_scale === scale,
        `${tag}: two fingers closing back over the map zoom it out again`, `window [${w1}] -> [${w2}] of ${L}`);
}

// Issue 35: work that starts and ends moves nothing (its progress sits in the menu bar): every
// frame from a new text to the end of its work, the tabs stay where they were.
async function noShiftWhenWorkEnds(page, size, tag) {
  await show(page, "attention");
  // From the page's top: scrolled down, a panel that is shorter while its numbers are recomputed
  // would pull the page up (the scroll is clamped to the content), which is not what this measures.
  await page.mouse.move(size.width - 12, size.height * 0.7);
  await page.mouse.wheel(0, -30 * 100 * size.dpr);
  await pause(page, 500);
  const frames = await page.evaluate(async (text) => {
    window.attnlab.setState({ text });
    const seen = [];
    for (let i = 0; i < 2000; i++) {
      await new Promise((r) => requestAnimationFrame(r));
      const w = window.attnlab.status().widgets, st = window.attnlab.status();
      const working = Object.entries(w).some(([k, r]) => k.startsWith("work.cancel.") && r.drawn);
      seen.push({ working, y: w["tab.text"]?.y, grid: w["attention.normalizer"]?.y });
      if (!st.busy && st.forward_tokens === st.tokens && i > 3) break;
    }
    return seen;
  }, `${LONG}\nOne more line to read.`);
  // (The tabs, and the panel's first control: what is under them changes with the text.)
  const ys = new Set(frames.map((f) => f.y)), grids = new Set(frames.map((f) => f.grid));
  const working = frames.filter((f) => f.working).length;
  check(working > 0 && ys.size === 1 && grids.size === 1 && !ys.has(undefined),
        `${tag}: while the model works and when it ends, nothing moves (the progress is in the menu bar)`,
        `${frames.length} frames, ${working} with a progress bar; tab y ${[...ys].join(", ")}; normalizer y ${[...grids].join(", ")}`);
}

// What the picture cuts off (status() of the frame the screenshot shows), in words:
//   a window (not a child) past the viewport's edge: a popup, a menu, the page's own window;
//   a window whose layout reaches further right than it shows (nothing here scrolls sideways), or
//   further down when the reader cannot scroll it;
//   a widget drawn in the last frame (status() keeps every name it has seen) that reaches outside
//   the viewport, or that its windows clip, unless only vertically and a window around it scrolls.
const px = (v) => v.toFixed(0);
function cutOff(st, size) {
  const out = [], slack = 1;
  const inView = (r) => r.x >= -slack && r.y >= -slack && r.x + r.w <= size.width + slack && r.y + r.h <= size.height + slack;
  for (const w of st.windows) {
    const name = `window "${w.name}"`;
    // The text box (text_panel.cpp's "##text") is ImGui's multi-line field: it does not wrap, and
    // scrolls its lines sideways itself to follow the cursor.
    const textBox = /\/##text_[0-9A-F]{8}$/.test(w.name);
    if (!w.child && !inView(w)) out.push(`${name} at x ${px(w.x)}..${px(w.x + w.w)}, y ${px(w.y)}..${px(w.y + w.h)}`);
    if (w.content_w > w.inner_w + slack && !textBox) out.push(`${name}: its content is ${px(w.content_w)} px wide, it shows ${px(w.inner_w)}`);
    if (w.content_h > w.inner_h + slack && !w.scrollable_y)
      out.push(`${name}: its content is ${px(w.content_h)} px high, it shows ${px(w.inner_h)} and does not scroll`);
  }
  for (const [name, r] of Object.entries(st.widgets)) {
    if (!r.drawn || r.w <= 0 || r.h <= 0) continue;
    const v = r.visible, where = `widget ${name} at x ${px(r.x)}..${px(r.x + r.w)}, y ${px(r.y)}..${px(r.y + r.h)}`;
    const acrossInView = r.x >= -slack && r.x + r.w <= size.width + slack;
    const acrossShown = v.w <= 0 || (v.x <= r.x + slack && v.x + v.w >= r.x + r.w - slack);
    const downShown = v.h > 0 && v.y <= r.y + slack && v.y + v.h >= r.y + r.h - slack;
    if (!acrossInView || !acrossShown) out.push(`${where}: cut off at the side (shown x ${px(v.x)}..${px(v.x + v.w)})`);
    else if (!(inView(r) && downShown) && !r.scrolls) out.push(`${where}: cut off, and no window around it scrolls`);
  }
  return out;
}

// The plots' legends (plot.<name>.legend) that cover more than a quarter of their data area
// (plot.<name>.data), in words (issue 35: on a phone they covered 40-60%).
function coveringLegends(st) {
  const out = [];
  for (const [name, r] of Object.entries(st.widgets)) {
    const m = /^(plot\..*)\.legend$/.exec(name), d = m && st.widgets[`${m[1]}.data`];
    if (!m || !r.drawn || !d || !d.drawn) continue;
    const w = Math.min(r.x + r.w, d.x + d.w) - Math.max(r.x, d.x), h = Math.min(r.y + r.h, d.y + d.h) - Math.max(r.y, d.y);
    const share = Math.max(0, w) * Math.max(0, h) / (d.w * d.h);
    if (share > 0.25) out.push(`${m[1]}: ${(share * 100).toFixed(0)}%`);
  }
  return out;
}

// The mouse wheel turned (pixels, down positive), and status() once two frames have been drawn
// since: the first takes the wheel, the second shows where it left the page.
async function wheelAndDraw(page, pixels) {
  const frames = (await status(page)).frames;
  await page.mouse.wheel(0, pixels);
  await waitFor(page, (f) => window.attnlab.status().frames >= f + 2, frames, 5000);
  return status(page);
}

// Every panel's picture, and what it cuts off (nothing may be); no legend covers much of its plot.
async function panels(page, size, tag, out) {
  const blank = [], cut = [], covering = [];
  let legends = 0;
  for (const panel of PANELS) {
    await show(page, panel);
    // In CSS pixels: a ninth of the device's, and as much as the check needs.
    const shot = await page.screenshot({ path: path.join(out, `phone-${size.name}-${panel}.png`), scale: "css" });
    const stats = pictureStats(decodePng(shot));
    if (stats.colours < 30 || stats.inked < 0.03) blank.push(`${panel} (${stats.colours} colours)`);
    const st = await status(page);
    for (const what of cutOff(st, size)) cut.push(`${panel}: ${what}`);
    // The legends: of the plots on screen as the page scrolls down, by the most whole notches
    // (100 CSS px) under 80% of the screen's height, and at least two (every plot is drawn at some
    // step), until a step moves nothing (the panel's end, or a panel that does not scroll), and
    // back up. Each step waits two frames, which software drawing at devicePixelRatio 3 makes slow.
    const notches = Math.max(2, Math.floor(size.height * 0.8 / 100));
    const seen = new Set();
    await page.mouse.move(size.width - 12, size.height * 0.7);
    for (let step = 0, now = st, last = ""; step <= 10; step++) {
      const places = JSON.stringify(Object.entries(now.widgets).filter(([, r]) => r.drawn).map(([k, r]) => [k, r.y]));
      if (places === last) break;
      last = places;
      for (const what of coveringLegends(now)) if (!seen.has(what)) seen.add(what), covering.push(`${panel}: ${what}`);
      legends += Object.entries(now.widgets).filter(([k, r]) => r.drawn && /\.legend$/.test(k)).length;
      now = await wheelAndDraw(page, notches * 100 * size.dpr);
    }
    await wheelAndDraw(page, -30 * 100 * size.dpr);
  }
  check(legends > 0 && covering.length === 0, `${tag}: no plot's legend covers more than a quarter of its data`,
        `${legends} legends drawn; ${covering.join("; ")}`);
  check(blank.length === 0, `${tag}: every panel draws (phone-${size.name}-*.png)`, blank.join("; "));
  check(cut.length === 0, `${tag}: no panel's picture cuts anything off at ${size.width} x ${size.height}`,
        `${cut.length} cut off:\n          ${cut.join("\n          ")}`);
}

// A small device, before the page's first script: navigator.deviceMemory says 256 MB, and the wasm
// memory cannot grow past window.__memoryCap bytes (a tab's limit; none until set).
const smallDevice = (cap) => `
  Object.defineProperty(Navigator.prototype, "deviceMemory", { get: () => 0.25 });
  window.__memoryCap = ${cap};
  const grow = WebAssembly.Memory.prototype.grow;
  WebAssembly.Memory.prototype.grow = function (pages) {
    if (window.__memoryCap && this.buffer.byteLength + pages * 65536 > window.__memoryCap)
      throw new RangeError("WebAssembly.Memory.grow(): Maximum memory size exceeded");
    return grow.call(this, pages);
  };`;

// Memory on a small device: the large checkpoint asked for with the built-in model loaded (its
// memory may grow 64 MB past that), then named by a link, which the page opens with nothing loaded.
async function smallMemory(context, server, tag) {
  const big = `${server.origin}/models/big/model.safetensors`;
  const ignoreRequests = [/\/models\/big\//];
  const { page, errors, ready } = await openPage(context, `${server.origin}/`, { ignoreRequests, initScript: smallDevice(0) });
  if (!check(ready, `${tag}, small memory: the page starts`)) return;
  await waitFor(page, () => { const s = window.attnlab.status(); return s.model.builtin && s.forward_tokens === s.tokens && !s.busy; }, undefined, 60000);
  const held = (await status(page)).heap.memory_bytes;
  await page.evaluate((cap) => { window.__memoryCap = cap; }, held + (64 << 20));
  await page.evaluate((u) => window.attnlab.setState({ model: u }), big);
  const said = await waitFor(page, () => /may not fit/.test(window.attnlab.status().model_fetch.notice), undefined, 15000);
  let st = await status(page);
  check(said && /256 MB|0\.25 GB/.test(st.model_fetch.notice) && st.device.memory.last?.fits === "maybe not",
        `${tag}, small memory: before the download, a sentence says the model may not fit`, st.model_fetch.notice);
  const failed = await waitFor(page, () => window.attnlab.status().model_fetch.phase === "failed", undefined, 30000);
  st = await status(page);
  check(failed && /Not enough memory/.test(st.model_fetch.error + st.error) && st.model.builtin,
        `${tag}, small memory: running out is reported, and the page keeps the built-in model`,
        JSON.stringify({ phase: st.model_fetch.phase, error: st.model_fetch.error, model: st.model.name }));
  await page.evaluate(() => window.attnlab.setState({ text: "Still here after the failure." }));
  const works = await waitFor(page, () => { const s = window.attnlab.status(); return s.tokens > 3 && s.forward_tokens === s.tokens; }, undefined, 20000);
  check(works, `${tag}, small memory: the built-in model still analyses a new text`, JSON.stringify((await status(page)).model));
  let thrown = errors.filter((e) => e.startsWith("uncaught"));
  check(thrown.length === 0, `${tag}, small memory: no exception`, thrown.join(" | "));
  await page.close();

  // The link: the download fails for memory, and the page falls back on the built-in model.
  const linked = await openPage(context, `${server.origin}/?model=${encodeURIComponent(big)}`,
                                { ignoreRequests, initScript: smallDevice(held + (32 << 20)) });
  const fell = linked.ready && await waitFor(linked.page, () => {
    const s = window.attnlab.status();
    return s.model.builtin && s.forward_tokens === s.tokens && s.tokens > 0;
  }, undefined, 60000);
  st = await status(linked.page);
  check(fell && /Not enough memory/.test(st.error) && /built-in model is loaded instead/.test(st.error),
        `${tag}, small memory: a link naming it reports the failure and opens on the built-in model instead`,
        JSON.stringify({ model: st.model.name, error: st.error, phase: st.model_fetch.phase }));
  thrown = linked.errors.filter((e) => e.startsWith("uncaught"));
  check(thrown.length === 0, `${tag}, small memory, the link: no exception`, thrown.join(" | "));
  console.log(`        small memory: the built-in model's page held ${(held / 1048576).toFixed(0)} MB of wasm memory`);
  await linked.page.close();
}

// Desktops (issue 35, issue 36): a short window with a mouse starts at 100% (only touch screens
// start at 125%); at 1280 x 800 and 1440 x 900 the model bar keeps one line, with either built-in
// model's long name, so the tabs stay where they are when the model changes.
const TWIN = "assets/tiny-ssmax/model.safetensors";
async function desktops(browser, server) {
  for (const size of [{ width: 1280, height: 560 }, { width: 1280, height: 800 }, { width: 1440, height: 900 }]) {
    const tag = `desktop ${size.width}x${size.height}`;
    const context = await browser.newContext({ viewport: size, serviceWorkers: "block" });
    try {
      const { page, ready } = await openPage(context, `${server.origin}/`);
      if (!check(ready, `${tag}: the page starts`)) continue;
      await waitFor(page, () => { const s = window.attnlab.status(); return s.model.loaded && s.forward_tokens === s.tokens && !s.busy; }, undefined, 60000);
      let st = await status(page);
      check(st.ui_scale === 1 && st.device.size_class === "desktop", `${tag}: a window with a mouse starts at 100%, however short`,
            `ui_scale ${st.ui_scale}, ${JSON.stringify(st.device)}`);
      if (size.height < 600) continue;
      const rows = async () => {
        const w = (await status(page)).widgets;
        return { menu: w["model.builtin"]?.y, gpt2: w["model.load_gpt2"]?.y, url: w["model.url"]?.y, tabs: w["tab.text"]?.y, name: (await status(page)).model.name };
      };
      const tiny = await rows();
      await page.evaluate((m) => window.attnlab.setState({ model: m }), TWIN);
      await waitFor(page, () => { const s = window.attnlab.status(); return /SSMax/.test(s.model.name) && s.forward_tokens === s.tokens && !s.busy; }, undefined, 60000);
      await pause(page, 300);
      const twin = await rows();
      check(/SSMax/.test(twin.name) && tiny.menu === tiny.gpt2 && twin.menu === twin.gpt2 && tiny.url === twin.url && tiny.tabs === twin.tabs &&
            tiny.menu < tiny.url,
            `${tag}: the model bar keeps one line with either model's name, and the tabs do not move`,
            JSON.stringify({ tiny, twin }));
    } finally {
      await context.close();
    }
  }
}

export async function phones({ browser, server, cli, out }) {
  await desktops(browser, server);
  console.log("phones and tablets (Chromium's mobile emulation, touch, devicePixelRatio 3, the tablet 2):");
  await mkdir(out, { recursive: true });
  // PHONE_SIZES=390x844,768x1024 runs only those (while working on one).
  const only = process.env.PHONE_SIZES ? process.env.PHONE_SIZES.split(",") : null;
  for (const size of SIZES.filter((s) => !only || only.includes(s.name))) {
    const tag = `${size.name}`, t0 = Date.now();
    const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, deviceScaleFactor: size.dpr,
                                               isMobile: true, hasTouch: true, serviceWorkers: "block" });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.origin });
    try {
      const { page, errors, ready } = await openPage(context, `${server.origin}/`);
      if (!check(ready, `${tag}: the page starts`)) continue;
      await waitFor(page, () => { const s = window.attnlab.status(); return s.model.loaded && s.forward_tokens === s.tokens; }, undefined, 60000);
      const cdp = await context.newCDPSession(page);
      const finger = fingers(cdp);
      const st = await status(page);
      check(st.width === size.width * size.dpr && st.height === size.height * size.dpr && st.pixel_ratio === size.dpr &&
            st.device.size_class === size.size_class,
            `${tag}: the canvas is sharp (backing store ${size.width * size.dpr} x ${size.height * size.dpr}) and the page says "${size.size_class}"`,
            JSON.stringify({ width: st.width, height: st.height, pixel_ratio: st.pixel_ratio, device: st.device }));
      check(st.ui_scale === st.device.default_ui_scale && st.ui_scale === 1.25,
            `${tag}: the page starts at the UI scale that suits the screen (125%)`, `ui_scale ${st.ui_scale}, device ${st.device.default_ui_scale}`);
      await sliderDrag(page, finger, size, tag);
      await tapHead(page, finger, size, tag);
      if (size !== SIZES[1]) await heatmapOnPhone(page, finger, size, tag);
      if (size === SIZES[0]) await noShiftWhenWorkEnds(page, size, tag);
      if (size === SIZES[2]) await wheelScroll(page, size, tag);
      await swipeTokens(page, finger, size, tag);
      if (size === SIZES[0]) await longPress(page, finger, size, tag);
      await typing(page, finger, cdp, cli, size, tag);
      if (size === SIZES[0]) await pinch(page, finger, size, tag);
      await panels(page, size, tag, out);
      check(errors.length === 0, `${tag}: no console errors`, errors.join(" | "));
      await page.close();
      const t1 = Date.now();
      if (size === SIZES[0]) await smallMemory(context, server, tag);
      console.log(`        (${tag}: ${((t1 - t0) / 1000).toFixed(0)} s${size === SIZES[0] ? `, small memory ${((Date.now() - t1) / 1000).toFixed(0)} s` : ""})`);
    } finally {
      await context.close();
    }
  }
}
