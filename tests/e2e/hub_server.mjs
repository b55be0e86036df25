// A stand-in for Hugging Face on 127.0.0.1: its URL layout (ORG/NAME/resolve/main/FILE) and its
// answers as an anonymous visitor gets them: 401 for a repository that is not there and for a
// gated one alike, 404 for a file missing from a repository that is there. CORS as the real hub
// sends it (any origin; Range allowed; the lengths readable). Every request is counted by method
// and path, so a test can tell a download from a cache hit.
//   repos: { "ORG/NAME": folder }   gated: ["ORG/NAME", ...]   slow: { "ORG/NAME": bytes per second }
import { createServer } from "node:http";
import { stat, readFile } from "node:fs/promises";
import path from "node:path";

const cors = {
  "access-control-allow-origin": "*",
  "access-control-allow-headers": "range, content-type",
  "access-control-allow-methods": "GET, HEAD, OPTIONS",
  "access-control-expose-headers": "content-length, content-range, etag",
};

export function serveHub({ repos, gated = [], slow = {} }) {
  const hits = new Map();
  const server = createServer(async (req, res) => {
    const route = decodeURIComponent(new URL(req.url, "http://localhost").pathname);
    hits.set(`${req.method} ${route}`, (hits.get(`${req.method} ${route}`) ?? 0) + 1);
    if (req.method === "OPTIONS") { res.writeHead(204, cors).end(); return; }
    const m = /^\/([^/]+\/[^/]+)\/resolve\/main\/([^/]+)$/.exec(route);
    const json = { ...cors, "content-type": "application/json" };
    if (!m || gated.includes(m[1]) || !repos[m[1]]) {
      res.writeHead(401, json).end(JSON.stringify({ error: "Invalid username or password." }));
      return;
    }
    const file = path.join(repos[m[1]], m[2]);
    let size;
    try { size = (await stat(file)).size; } catch {
      res.writeHead(404, { ...json, "x-error-code": "EntryNotFound" }).end(JSON.stringify({ error: "Entry not found" }));
      return;
    }
    const headers = { ...cors, "content-type": "application/octet-stream", "content-length": String(size), "cache-control": "no-store" };
    if (req.method === "HEAD") { res.writeHead(200, headers).end(); return; }
    const body = await readFile(file);
    const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? "");
    if (range) {
      const [a, b] = [Number(range[1]), Math.min(Number(range[2]), size - 1)];
      res.writeHead(206, { ...headers, "content-length": String(b - a + 1), "content-range": `bytes ${a}-${b}/${size}` })
        .end(body.subarray(a, b + 1));
      return;
    }
    const rate = slow[m[1]];
    if (!rate) { res.writeHead(200, headers).end(body); return; }
    // A twentieth of a second's worth every 50 ms, until done or the client goes away.
    res.writeHead(200, headers);
    let pos = 0, gone = false;
    res.on("close", () => { if (pos < body.length) { gone = true; server.closedEarly.push(route); } });
    const chunk = Math.max(1, Math.floor(rate / 20));
    const timer = setInterval(() => {
      if (gone || pos >= body.length) { clearInterval(timer); if (!gone) res.end(); return; }
      res.write(body.subarray(pos, pos + chunk));
      pos += chunk;
    }, 50);
  });
  server.closedEarly = [];
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => {
    server.origin = `http://127.0.0.1:${server.address().port}`;
    server.hits = hits;
    // Requests of any method to paths under ORG/NAME.
    server.requestsTo = (repo) => [...hits].filter(([k]) => k.split(" ")[1].startsWith(`/${repo}/`)).reduce((a, [, n]) => a + n, 0);
    // Requests of one method for one file of a repository.
    server.requests = (method, repo, file) => hits.get(`${method} /${repo}/resolve/main/${file}`) ?? 0;
    server.gets = (repo, file) => server.requests("GET", repo, file);
    resolve(server);
  }));
}
