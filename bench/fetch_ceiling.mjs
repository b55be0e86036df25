// How fast can this headless Chromium bring a GPT-2-small-sized file from 127.0.0.1 into one buffer:
// fetch() with one request or several ranged ones at once, on the page's main thread or in a worker,
// and XMLHttpRequest into an ArrayBuffer, beside curl in the same run (issue 13, point 3: how close to
// curl can a page get?). A benchmark, not a test; developer-time only.
//
//   node bench/fetch_ceiling.mjs --checkpoint build/bench_onnx/ckpt
//
// It serves the file itself, with Range support (tests/e2e/server.mjs has none, on purpose: the app's
// probe of a server that ignores Range is one of the e2e checks).
import { createServer } from "node:http";
import { createReadStream, statSync } from "node:fs";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import os from "node:os";
import path from "node:path";
import { chromium } from "../tests/e2e/node_modules/playwright-core/index.mjs";
import { chromiumArgs, chromiumPath, parseArgs } from "../tests/e2e/lib.mjs";

const args = parseArgs(process.argv.slice(2));
const file = path.join(path.resolve(args.checkpoint ?? "build/bench_onnx/ckpt"), "model.safetensors");
const size = statSync(file).size;
const server = createServer((req, res) => {
  if (req.url !== "/model") { res.writeHead(200, { "content-type": "text/html" }).end("<p>fetch ceiling</p>"); return; }
  const range = /bytes=(\d+)-(\d+)/.exec(req.headers.range ?? "");
  const from = range ? Number(range[1]) : 0, to = range ? Math.min(size - 1, Number(range[2])) : size - 1;
  res.writeHead(range ? 206 : 200, { "content-length": String(to - from + 1), "accept-ranges": "bytes",
                                     ...(range ? { "content-range": `bytes ${from}-${to}/${size}` } : {}) });
  createReadStream(file, { start: from, end: to, highWaterMark: 1 << 20 }).pipe(res);
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const origin = `http://127.0.0.1:${server.address().port}`;
console.log(`# fetch ceiling, ${new Date().toISOString()}: ${(size / 1e6).toFixed(1)} MB; ${os.cpus()[0].model}, ` +
            `${os.cpus().length} cores; load average ${os.loadavg().map((x) => x.toFixed(2)).join(" ")}`);
const curl = Number((await promisify(execFile)("curl", ["-s", "-o", "/dev/null", "-w", "%{time_total}", `${origin}/model`])).stdout);
console.log(`curl: ${curl.toFixed(2)} s (${(size / 1e6 / curl).toFixed(0)} MB/s)`);

// parts requests at once, each for its share of the bytes, read into one Uint8Array; seconds.
const download = async ({ url, size, parts }) => {
  const into = new Uint8Array(size);
  const t0 = performance.now();
  const share = Math.ceil(size / parts);
  await Promise.all(Array.from({ length: parts }, async (_, i) => {
    const from = i * share, to = Math.min(size, from + share) - 1;
    const response = await fetch(url, parts > 1 ? { headers: { Range: `bytes=${from}-${to}` } } : {});
    const reader = response.body.getReader();
    for (let at = from; ;) {
      const { value, done } = await reader.read();
      if (done) break;
      into.set(value, at);
      at += value.length;
    }
  }));
  return (performance.now() - t0) / 1000;
};

const browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, headless: true });
try {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${origin}/`);
  const url = `${origin}/model`;
  for (const where of ["main thread", "worker"]) {
    for (const parts of [1, 2, 4, 8]) {
      const seconds = where === "main thread"
        ? await page.evaluate(`(${download})(${JSON.stringify({ url, size, parts })})`)
        : await page.evaluate(async ({ source, job }) => {
          const worker = new Worker(URL.createObjectURL(new Blob([`onmessage = async (e) => postMessage(await (${source})(e.data));`],
                                                                 { type: "text/javascript" })));
          return await new Promise((resolve) => { worker.onmessage = (e) => { worker.terminate(); resolve(e.data); }; worker.postMessage(job); });
        }, { source: String(download), job: { url, size, parts } });
      console.log(`fetch() on the ${where}, ${parts} request(s) at once: ${seconds.toFixed(2)} s ` +
                  `(${(size / 1e6 / seconds).toFixed(0)} MB/s, ${(seconds / curl).toFixed(1)}x curl)`);
    }
  }
  // The older API, whole body as one ArrayBuffer (the browser fills it; no chunk reaches JS).
  for (let run = 0; run < 2; ++run) {
    const seconds = await page.evaluate((url) => new Promise((resolve, reject) => {
      const t0 = performance.now();
      const request = new XMLHttpRequest();
      request.open("GET", url);
      request.responseType = "arraybuffer";
      request.onload = () => resolve((performance.now() - t0) / 1000);
      request.onerror = () => reject(new Error("XMLHttpRequest failed"));
      request.send();
    }), url);
    console.log(`XMLHttpRequest, responseType arraybuffer, on the main thread: ${seconds.toFixed(2)} s ` +
                `(${(size / 1e6 / seconds).toFixed(0)} MB/s, ${(seconds / curl).toFixed(1)}x curl)`);
  }
  // The same in ranged pieces, `inFlight` at a time, each copied into one buffer as it arrives: what a
  // page would do to keep JS's second copy to a few pieces.
  for (const [piece, inFlight] of [[32, 1], [32, 2], [32, 4], [64, 2]]) {
    const seconds = await page.evaluate(({ url, size, piece, inFlight }) => new Promise((resolve, reject) => {
      const into = new Uint8Array(size), bytes = piece << 20, pieces = Math.ceil(size / bytes);
      const t0 = performance.now();
      let next = 0, finished = 0;
      const start = () => {
        if (next >= pieces) return;
        const from = next++ * bytes, to = Math.min(size, from + bytes) - 1;
        const request = new XMLHttpRequest();
        request.open("GET", url);
        request.setRequestHeader("Range", `bytes=${from}-${to}`);
        request.responseType = "arraybuffer";
        request.onload = () => {
          into.set(new Uint8Array(request.response), from);
          if (++finished === pieces) resolve((performance.now() - t0) / 1000); else start();
        };
        request.onerror = () => reject(new Error("XMLHttpRequest failed"));
        request.send();
      };
      for (let i = 0; i < inFlight; ++i) start();
    }), { url, size, piece, inFlight });
    console.log(`XMLHttpRequest in ${piece} MB ranged pieces, ${inFlight} at a time, copied into one buffer: ${seconds.toFixed(2)} s ` +
                `(${(size / 1e6 / seconds).toFixed(0)} MB/s, ${(seconds / curl).toFixed(1)}x curl)`);
  }
} finally {
  await browser.close();
  server.close();
}
