// What an address in the model bar (or ?model=) names, and the files a model is made of. Three
// kinds of address:
//   a Hugging Face repository id ("Qwen/Qwen3-0.6B"): the files under ${hub}/${id}/resolve/main/,
//     where the hub is ?hub=BASE or https://huggingface.co;
//   a folder's web address, ending in "/": the same files under it;
//   a file's web address (…/model.safetensors): that file, and config.json beside it (as before).
// A model's files: config.json, tokenizer.json with tokenizer_config.json (each optional for a
// file address), and the weights: model.safetensors, or model.safetensors.index.json and every
// shard it names. The errors of this part are sentences that name the file and what is wrong.
// web/model_fetch.js downloads what this lists.
//
// [SECTION] Addresses
// [SECTION] Errors in words
// [SECTION] Sizes
// [SECTION] The list of files
"use strict";
(function () {
  // [SECTION] Addresses ---------------------------------------------------------------------------
  const DEFAULT_HUB = "https://huggingface.co";
  // ORG/NAME, each of letters, digits, '-', '_' and '.': Hugging Face's rule for repository ids.
  const REPO_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*\/[A-Za-z0-9][A-Za-z0-9_.-]*$/;

  function hub() {
    const given = new URLSearchParams(location.search).get("hub");
    return (given || DEFAULT_HUB).replace(/\/+$/, "");
  }
  function isRepoId(address) { return REPO_ID.test(address) && !/\.(safetensors|json)$/i.test(address); }
  function absolute(url) { try { return new URL(url, location.href).href; } catch (e) { return null; } }
  function host(url) { try { return new URL(url, location.href).host; } catch (e) { return url; } }

  // { kind: "repo" | "folder" | "file", base (ends in "/"), weights (the file name), name (what
  // messages call the model) }, or null for an address that is none of these.
  function resolve(address) {
    if (isRepoId(address)) {
      return { kind: "repo", base: `${hub()}/${address}/resolve/main/`, weights: "model.safetensors", name: address };
    }
    const href = absolute(address);
    if (!href) return null;
    if (href.endsWith("/")) return { kind: "folder", base: href, weights: "model.safetensors", name: address };
    const cut = href.lastIndexOf("/") + 1;
    return { kind: "file", base: href.slice(0, cut), weights: href.slice(cut), name: address };
  }

  // [SECTION] Errors in words ---------------------------------------------------------------------
  const statusText = { 400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
                       408: "Request Timeout", 410: "Gone", 429: "Too Many Requests", 500: "Internal Server Error",
                       502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout" };
  class Refusal extends Error {}  // a sentence for the reader

  function httpError(response, url) {
    const text = response.statusText || statusText[response.status] || "";
    return `The server answered ${response.status}${text ? " " + text : ""} for ${url}.`;
  }
  // The sentence for a file the server would not give.
  function missing(model, name, response, url) {
    // Hugging Face answers 401 to an anonymous request for a gated repository and for one that is not there.
    if (model.kind === "repo" && (response.status === 401 || response.status === 403))
      return new Refusal(`${model.name} on ${host(model.base)}: not found or gated (needs a login). The server answered ` +
                         `${response.status} for ${name}; check the name, or open a public model.`);
    if (response.status === 404 || response.status === 410)
      return new Refusal(`${name} is missing from ${model.name}: the server answered ${response.status} for ${url}.`);
    return new Refusal(httpError(response, url));
  }

  // [SECTION] Sizes ----------------------------------------------------------------------------------
  // The size a response announces, or -1. A compressed body's length is not the file's.
  function announcedSize(response) {
    if (response.headers.get("content-encoding")) return -1;
    const n = Number(response.headers.get("content-length"));
    return Number.isFinite(n) && n > 0 ? n : -1;
  }

  // The size of the file at `url` without downloading it: HEAD, or a one-byte ranged GET where the
  // server refuses HEAD or leaves the length out. Returns { response (the failing one), size }.
  async function sizeOf(url, signal) {
    const head = await fetch(url, { method: "HEAD", signal });
    let size = head.ok ? announcedSize(head) : -1;
    if (head.ok && size >= 0) return { response: head, size };
    if (head.status === 401 || head.status === 403 || head.status === 404) return { response: head, size: -1 };
    const ranged = await fetch(url, { headers: { Range: "bytes=0-0" }, signal });
    if (ranged.body) ranged.body.cancel().catch(() => {});
    if (ranged.status === 206) {
      const m = /\/(\d+)\s*$/.exec(ranged.headers.get("content-range") || "");
      size = m ? Number(m[1]) : -1;
    } else if (ranged.ok) {
      size = announcedSize(ranged);  // the server ignored Range: don't download it all now
    }
    return { response: ranged, size };
  }

  // [SECTION] The list of files ----------------------------------------------------------------------
  // Reads a text file of the model: its text, or null when it is optional and absent (404).
  // `get(url)` is the caller's fetch (cache first); a required file's absence is a Refusal.
  async function text(model, name, required, get) {
    const url = model.base + name;
    const response = await get(url);
    if (response.ok) return { name, url, text: await response.text() };
    if (!required && (response.status === 404 || model.kind !== "repo")) return null;  // a hub's 401 is the repository's, not the file's
    throw missing(model, name, response, url);
  }

  // config.json's model_type, "gpt2" when it names none (or is no JSON: the engine says why).
  function modelType(config) {
    try { return JSON.parse(config.text).model_type || "gpt2"; } catch (e) { return "gpt2"; }
  }

  // config.json (required but for a file's address), tokenizer.json and tokenizer_config.json. A
  // GPT-2 file's address reads GPT-2's built-in vocabulary, which its tokenizer.json would repeat:
  // not asked for, so that such a folder without one gets no 404 for it.
  // A repository's or folder's three are asked for at once: each answer is a round trip, and in a
  // fresh profile Cache Storage's (asked first) takes longer. Their errors come in this order.
  async function listTexts(model, get, bare = false) {
    const ask = (name, required) => {
      const answer = text(model, name, required, get);
      answer.catch(() => {});  // awaited below, or not needed after an earlier file's error
      return answer;
    };
    const config = ask("config.json", model.kind !== "file");
    const atOnce = !bare && model.kind !== "file";
    const tokenizer = atOnce ? ask("tokenizer.json", false) : null, tc = atOnce ? ask("tokenizer_config.json", false) : null;
    const texts = [];
    const c = await config;
    if (c) texts.push({ ...c, kind: "config" });
    if (bare || (model.kind === "file" && (!c || modelType(c) === "gpt2"))) return texts;
    const t = await (tokenizer ?? ask("tokenizer.json", false));
    if (t) {
      texts.push({ ...t, kind: "tokenizer" });
      const tcText = await (tc ?? ask("tokenizer_config.json", false));
      if (tcText) texts.push({ ...tcText, kind: "tokenizer_config" });
    }
    return texts;
  }

  // Everything a model is made of, before any weights are downloaded:
  //   { texts: [{ name, url, text, kind }], index (its text or null),
  //     weights: [{ name, url, size, cached }] }
  // get(url): a GET, cache first; size(url): { ok, size, cached, response } (size -1 when unknown);
  // has(url): whether Cache Storage holds it.
  // A file address with the `bare` flag (the site's own built-in models) reads config.json only.
  async function listFiles(model, { get, size, has = null, bare = false, checkTexts = () => {} }) {
    // A sharded model kept in Cache Storage: its index is there, and model.safetensors's 404 is not.
    const keptSharded = model.kind !== "file" && has ? has(model.base + "model.safetensors.index.json") : false;
    const texts = await listTexts(model, get, bare);
    checkTexts(texts);  // throws a Refusal for a config.json the engine refuses: no weights are asked for then
    if (model.kind === "file") {
      const s = await size(model.base + model.weights);
      if (!s.ok) throw missing(model, model.weights, s.response, model.base + model.weights);
      return { texts, index: null, weights: [{ name: model.weights, url: model.base + model.weights, size: s.size, cached: s.cached }] };
    }
    const single = (await keptSharded) ? { ok: false, response: { status: 404 } } : await size(model.base + "model.safetensors");
    if (single.ok) {
      return { texts, index: null,
               weights: [{ name: "model.safetensors", url: model.base + "model.safetensors", size: single.size, cached: single.cached }] };
    }
    if (single.response && single.response.status !== 404) throw missing(model, "model.safetensors", single.response, model.base + "model.safetensors");
    const index = await text(model, "model.safetensors.index.json", false, get);
    if (!index) {
      throw new Refusal(`${model.name} has no weights in safetensors form: neither model.safetensors nor ` +
                        `model.safetensors.index.json is there (the server answered 404 for both, under ${model.base}).`);
    }
    let names;
    try {
      const map = JSON.parse(index.text).weight_map;
      names = [...new Set(Object.values(map))];
      if (!names.length || names.some((n) => typeof n !== "string" || /[\\/]/.test(n) || n === "." || n === "..")) throw new Error();
    } catch (e) {
      throw new Refusal(`${model.name}: model.safetensors.index.json has no usable "weight_map" (a file name per tensor).`);
    }
    texts.push({ ...index, kind: "index" });
    const sizes = await Promise.all(names.map((n) => size(model.base + n)));
    const weights = names.map((n, i) => {
      if (!sizes[i].ok) throw missing(model, n, sizes[i].response, model.base + n);
      return { name: n, url: model.base + n, size: sizes[i].size, cached: sizes[i].cached };
    });
    return { texts, index: index.text, weights };
  }

  window.attnlabModelFiles = { resolve, isRepoId, hub, host, listFiles, listTexts, sizeOf, announcedSize, httpError, Refusal };
})();
