// AttnLab's service worker: adds the two headers that make the page cross-origin isolated
// (SharedArrayBuffer, so the model can run on a worker thread) on static hosts such as GitHub
// Pages, which cannot send headers of their own. It caches nothing and changes nothing else.
//
//   Cross-Origin-Opener-Policy: same-origin     no cross-origin window shares our process
//   Cross-Origin-Embedder-Policy: require-corp  every subresource must opt in (CORS or CORP)
//
// Only this site's own responses pass through here. Cross-origin requests (the checkpoint from
// huggingface.co) are left to the browser: the page fetches them in "cors" mode, and a CORS
// response satisfies require-corp, so models still download (and "credentialless" is not
// needed; Safari does not support it). A server without CORS fails exactly as it would without
// this worker, with the page's usual "the server may not allow cross-origin downloads" message.
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

function withIsolationHeaders(response) {
  // Opaque and redirect responses cannot be rebuilt (status 0); they carry no document anyway.
  if (response.status === 0 || response.type === "opaqueredirect" || response.type === "opaque") return response;
  const headers = new Headers(response.headers);
  headers.set("Cross-Origin-Opener-Policy", "same-origin");
  headers.set("Cross-Origin-Embedder-Policy", "require-corp");
  headers.set("Cross-Origin-Resource-Policy", "same-origin");
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers: headers });
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (new URL(request.url).origin !== self.location.origin) return;  // not ours: the browser's own path
  // A devtools quirk: only-if-cached outside same-origin mode throws in fetch().
  if (request.cache === "only-if-cached" && request.mode !== "same-origin") return;
  event.respondWith(fetch(request).then(withIsolationHeaders));
});
