// Screenshots of every panel at the sizes a class meets (issue 35): desktop 1440 x 900 and
// 1280 x 800, a tablet at 820 x 1180 and a phone at 390 x 844 (touch, devicePixelRatio 3 on the
// two touch screens), with the built-in model and, with --twin, its SSMax twin compared.
// No checks: pictures for a person to judge (screen-<size>-<panel>.png in --out; on the touch
// screens also -scrolled.png, the panel once the page has scrolled past its header).
//
//   node tests/e2e/screens.mjs --site dist --out build/e2e [--sizes 390x844,1280x800]
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { chromium } from "playwright-core";
import { chromiumArgs, chromiumPath, parseArgs, waitFor, openPage } from "./lib.mjs";
import { serve } from "./server.mjs";
import { PANELS } from "./model_suite.mjs";

const args = parseArgs(process.argv.slice(2));
const site = path.resolve(args.site ?? "dist");
const out = path.resolve(args.out ?? "build/e2e");
const SIZES = [
  { name: "1440x900", width: 1440, height: 900, touch: false },
  { name: "1280x800", width: 1280, height: 800, touch: false },
  { name: "820x1180", width: 820, height: 1180, touch: true },
  { name: "390x844", width: 390, height: 844, touch: true },
].filter((s) => !args.sizes || String(args.sizes).split(",").includes(s.name));

await mkdir(out, { recursive: true });
const server = await serve({ site, models: path.resolve("build/e2e-models") });
const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
try {
  for (const size of SIZES) {
    const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, serviceWorkers: "block",
                                               deviceScaleFactor: size.touch ? 3 : 1, isMobile: size.touch, hasTouch: size.touch });
    const { page, ready } = await openPage(context, `${server.origin}/`);
    if (!ready) throw new Error(`${size.name}: the page did not start`);
    await waitFor(page, () => { const s = window.attnlab.status(); return s.model.loaded && s.forward_tokens === s.tokens && !s.busy; }, undefined, 60000);
    const views = PANELS.map((panel) => ({ panel, state: { panel } }));
    if (args.twin) views.push({ panel: "compare", state: { panel: "attention", compare: true } });
    for (const view of views) {
      await page.evaluate((s) => window.attnlab.setState(s), view.state);
      await waitFor(page, (p) => window.attnlab.status().panel === p && !window.attnlab.status().busy, view.state.panel, 30000);
      if (view.state.compare) await waitFor(page, () => window.attnlab.status().twin.phase === "ready", undefined, 60000);
      await page.waitForTimeout(400);
      await page.screenshot({ path: path.join(out, `screen-${size.name}-${view.panel}.png`), scale: "css" });
      if (!size.touch) continue;
      // A phone's or a tablet's page scrolls: also the panel once the header has scrolled away, by
      // notches of the wheel (5 lines each) over the page's scrollbar.
      const st = await page.evaluate(() => window.attnlab.status());
      const header = Math.max(...Object.entries(st.widgets).filter(([k, r]) => r.drawn && /^(tab|model)\./.test(k)).map(([, r]) => r.y + r.h));
      await page.mouse.move(size.width - 8, size.height * 0.7);
      for (let i = 0; i < Math.ceil(header / (5 * 15 * st.ui_scale)); i++) {
        await page.mouse.wheel(0, 100 * 3);
        await page.waitForTimeout(150);
      }
      await page.waitForTimeout(400);
      await page.screenshot({ path: path.join(out, `screen-${size.name}-${view.panel}-scrolled.png`), scale: "css" });
      await page.mouse.wheel(0, -30 * 100 * 3);
      await page.waitForTimeout(300);
    }
    console.log(`${size.name}: ${views.length} screenshots`);
    await context.close();
  }
} finally {
  await browser.close();
  server.close();
}
