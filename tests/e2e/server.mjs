// The test's web server on 127.0.0.1: the static site, the generated checkpoints under
// /models/<name>/, and the routes that misbehave on purpose:
//   /slow/<file>          a checkpoint whose body trickles in (for the cancel test)
//   /models/missing/...   404 (nothing there)
//   anything the fixtures put under /models (a non-safetensors file, a wrong shape, a truncated file)
// With `isolated` every response carries COOP/COEP, so the page is cross-origin isolated (threads).
// With `paceBytesPerSecond` every response body crosses one shared link of that rate, first come first
// served, as a visitor's connection would carry the page, its wasm and the model (bench/page_load.mjs
// --pace): curl and the browser then meet the same network.
// With `inject` (HTML), every index.html carries it first in its <head>: the Firefox and WebKit
// suite's recorder of console errors (their drivers cannot listen from the first script on).
// Every request is counted by method and path, so tests can tell a download from a cache hit.
import { createServer } from "node:http";
import { readFile, stat } from "node:fs/promises";
import { createReadStream } from "node:fs";
import path from "node:path";

const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".mjs": "text/javascript",
                ".wasm": "application/wasm", ".json": "application/json", ".png": "image/png",
                ".txt": "text/plain", ".data": "application/octet-stream", ".safetensors": "application/octet-stream" };

// site: the folder served at /; models: the folder served at /models and /slow.
export function serve({ site, models, isolated = false, slowBytesPerSecond = 1 << 20, paceBytesPerSecond = 0, inject = "" }) {
  let linkFreeAt = 0;  // performance.now() at which the shared paced link has sent all it was given
  async function paced(res, file) {
    for await (const chunk of createReadStream(file, { highWaterMark: 256 << 10 })) {
      if (res.destroyed) return;
      linkFreeAt = Math.max(linkFreeAt, performance.now()) + chunk.length * 1000 / paceBytesPerSecond;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, linkFreeAt - performance.now())));
      if (!res.write(chunk)) await new Promise((resolve) => res.once("drain", resolve));
    }
    res.end();
  }
  const hits = new Map();  // "GET /models/small/model.safetensors" -> count (ranged GETs counted as "GET+range")
  const lastAt = new Map();  // the same keys -> when the latest such request arrived (Date.now())
  const server = createServer(async (req, res) => {
    const url = new URL(req.url, "http://localhost");
    const route = decodeURIComponent(url.pathname);
    const key = `${req.method}${req.headers.range ? "+range" : ""} ${route}`;
    hits.set(key, (hits.get(key) ?? 0) + 1);
    lastAt.set(key, Date.now());
    const headers = {};
    if (isolated) {
      headers["cross-origin-opener-policy"] = "same-origin";
      headers["cross-origin-embedder-policy"] = "require-corp";
      headers["cross-origin-resource-policy"] = "same-origin";
    }
    let file, slow = false;
    if (route.startsWith("/models/")) file = path.join(models, route.slice("/models/".length));
    else if (route.startsWith("/slow/")) { file = path.join(models, "small", route.slice("/slow/".length)); slow = true; }
    else file = path.join(site, route.endsWith("/") ? `${route}index.html` : route);
    const root = route.startsWith("/models/") || slow ? models : site;
    if (!path.resolve(file).startsWith(path.resolve(root))) { res.writeHead(403, headers).end(); return; }

    let size;
    try {
      const st = await stat(file);
      if (!st.isFile()) throw new Error("not a file");
      size = st.size;
    } catch {
      res.writeHead(404, { ...headers, "content-type": "text/plain" }).end("not found");
      return;
    }
    // Content-Length always: the page shows the size before it downloads.
    Object.assign(headers, { "content-type": types[path.extname(file)] ?? "application/octet-stream",
                             "content-length": String(size), "cache-control": "no-store" });
    if (req.method === "HEAD") { res.writeHead(200, headers).end(); return; }
    if (!slow && paceBytesPerSecond > 0) {
      res.writeHead(200, headers);
      paced(res, file).catch(() => res.destroy());
      return;
    }
    if (inject && path.basename(file) === "index.html") {
      const page = Buffer.from((await readFile(file, "utf8")).replace("<head>", `<head>\n${inject}`));
      res.writeHead(200, { ...headers, "content-length": String(page.length) }).end(page);
      return;
    }
    if (!slow) {
      if (size > 64 << 20) { res.writeHead(200, headers); createReadStream(file).pipe(res); return; }
      res.writeHead(200, headers).end(await readFile(file));
      return;
    }
    // The slow route: 1/20 of a second's worth every 50 ms, until done or the client goes away.
    const body = await readFile(file);
    res.writeHead(200, headers);
    const chunk = Math.max(1, Math.floor(slowBytesPerSecond / 20));
    let pos = 0, gone = false;
    res.on("close", () => { gone = true; });
    const timer = setInterval(() => {
      if (gone || pos >= body.length) { clearInterval(timer); if (!gone) res.end(); return; }
      res.write(body.subarray(pos, pos + chunk));
      pos += chunk;
    }, 50);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => {
    server.origin = `http://127.0.0.1:${server.address().port}`;
    server.hits = hits;
    // Full (not ranged) GETs of a path: downloads of the body.
    server.downloads = (route) => hits.get(`GET ${route}`) ?? 0;
    // When the latest full GET of a path arrived, in ms since the epoch (a page's clock is
    // performance.timeOrigin + performance.now()), or undefined.
    server.lastDownloadAt = (route) => lastAt.get(`GET ${route}`);
    resolve(server);
  }));
}
