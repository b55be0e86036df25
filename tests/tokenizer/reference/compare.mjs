// Checks `attnlab tokenize --json` against two independent GPT-2 tokenizers on generated text:
//   js-tiktoken (getEncoding("gpt2"), special tokens allowed) and gpt-3-encoder 1.1.4 (a port
//   of OpenAI's encoder.py; it has no special tokens, so it only sees text without "<|endoftext|>").
//
//   node compare.mjs PATH/TO/attnlab [--seed N] [--bytes N] [--vocab-dir DIR] [--no-all-code-points]
//
// What runs (the corpus is written to a temporary folder, nothing into the repository):
//   1. the >= 1 MB corpus of make_corpus.mjs, cut into documents of 1..8 KB, each tokenized by
//      a separate run of attnlab;
//   2. documents with invalid UTF-8 (bad bytes, truncated and overlong sequences, surrogates,
//      values past U+10FFFF, cuts inside characters): the references see the text as the WHATWG
//      decoder reads it (U+FFFD per maximal subpart), and attnlab must warn on stderr;
//   3. the whole corpus in one run, which is also timed (MB/s, vocabulary loading excluded);
//   4. every Unicode scalar value once (planes that are one category throughout: sampled, as in
//      compare_hf.mjs), in a context that shows its class, in one run: this
//      checks the code-point tables against node's regular expressions (js-tiktoken only).
// Exits 0 only if attnlab's ids equal the references' everywhere. Places where the two
// references disagree with each other are printed and do not count against attnlab.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getEncoding } from 'js-tiktoken';
import gpt3 from 'gpt-3-encoder';
import { commandLine } from './hf_tokenizers.mjs';
import { makeCorpus, makeRng, sampledAway } from './make_corpus.mjs';

const { args, opt, binary } = commandLine('node compare.mjs PATH/TO/attnlab [--seed N] [--bytes N] [--vocab-dir DIR] [--no-all-code-points]');
const seed = Number(opt('--seed', '1'));
const targetBytes = Number(opt('--bytes', '1200000'));
const vocabDir = opt('--vocab-dir', null);
const binArgs = ['tokenize', '--json', ...(vocabDir ? ['--vocab-dir', vocabDir] : [])];
const EOT = '<|endoftext|>';

const tiktoken = getEncoding('gpt2');
const refTiktoken = (text) => tiktoken.encode(text, 'all');
const refGpt3 = (text) => gpt3.encode(text);

let failures = 0;
const fail = (msg) => {
  failures++;
  console.log('MISMATCH: ' + msg);
};

// Runs attnlab on `input` (a Buffer); resolves {code, ids, stderr}.
function runOurs(input) {
  return new Promise((resolve) => {
    const child = spawn(binary, binArgs, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out = [], err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => err.push(d));
    child.on('error', (e) => resolve({ code: -1, ids: null, stderr: String(e) }));
    child.on('close', (code) => {
      const stdout = Buffer.concat(out).toString('utf8');
      let ids = null;
      try {
        ids = JSON.parse(stdout);
      } catch {
        ids = null;
      }
      resolve({ code, ids, stderr: Buffer.concat(err).toString('utf8') });
    });
    child.stdin.on('error', () => {}); // the child may exit before reading everything
    child.stdin.end(input);
  });
}

// Runs fn over items, two at a time (the machine has two cores).
async function pool(items, fn, width = 2) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
  return results;
}

function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

// Describes where two id sequences for `text` part, with the text around that place.
function describe(text, ours, theirs, refName) {
  const k = firstDifference(ours, theirs);
  const at = tiktoken.decode(ours.slice(0, k)).length; // UTF-16 offset of the first differing token
  const lo = Math.max(0, at - 40), hi = Math.min(text.length, at + 60);
  const show = (ids) => JSON.stringify(ids.slice(Math.max(0, k - 3), k + 6));
  const pieces = (ids) => JSON.stringify(ids.slice(k, k + 6).map((id) => tiktoken.decode([id])));
  return `at id #${k} (text offset ~${at}), ${ours.length} ids vs ${theirs.length}\n` +
    `  text:         ${JSON.stringify(text.slice(lo, at))} >>> ${JSON.stringify(text.slice(at, hi))}\n` +
    `  attnlab:      ${show(ours)} ${pieces(ours)}\n` +
    `  ${refName.padEnd(13)} ${show(theirs)} ${pieces(theirs)}`;
}

const same = (a, b) => a.length === b.length && firstDifference(a, b) === -1;

// Compares attnlab's result on one document with both references.
const stats = { docs: 0, tiktokenMismatch: 0, gpt3Checked: 0, gpt3Mismatch: 0, refsDisagree: 0 };
function check(label, text, result, { expectWarning = false } = {}) {
  stats.docs++;
  if (result.code !== 0 || !Array.isArray(result.ids)) {
    fail(`${label}: attnlab exited with ${result.code}: ${result.stderr.trim()}`);
    return;
  }
  const warned = /warning: invalid UTF-8/.test(result.stderr);
  if (warned !== expectWarning) fail(`${label}: expected ${expectWarning ? 'a' : 'no'} UTF-8 warning, stderr: ${JSON.stringify(result.stderr)}`);
  const tk = refTiktoken(text);
  const tkOk = same(result.ids, tk);
  let g3 = null;
  if (!text.includes(EOT)) {
    stats.gpt3Checked++;
    g3 = refGpt3(text);
    if (!same(tk, g3)) {
      stats.refsDisagree++;
      console.log(`REFERENCES DISAGREE on ${label} (js-tiktoken vs gpt-3-encoder):\n` + describe(text, tk, g3, 'gpt-3-encoder:'));
      console.log(`  attnlab follows ${same(result.ids, tk) ? 'js-tiktoken' : same(result.ids, g3) ? 'gpt-3-encoder' : 'neither'}`);
      if (!same(result.ids, tk) && !same(result.ids, g3)) fail(`${label}: attnlab matches neither reference`);
      return;
    }
  }
  if (!tkOk) {
    stats.tiktokenMismatch++;
    fail(`${label} vs js-tiktoken ` + describe(text, result.ids, tk, 'js-tiktoken:'));
  }
  if (g3 && !same(result.ids, g3)) {
    stats.gpt3Mismatch++;
    if (tkOk) fail(`${label} vs gpt-3-encoder ` + describe(text, result.ids, g3, 'gpt-3-encoder:'));
  }
}

// Cuts text into documents of 1..8 KB of UTF-8, on code-point boundaries.
function splitDocuments(text, rng) {
  const docs = [];
  let cur = [], curBytes = 0, want = rng.int(1024, 8192);
  for (const ch of text) {
    cur.push(ch);
    curBytes += Buffer.byteLength(ch, 'utf8');
    if (curBytes >= want) {
      docs.push(cur.join(''));
      cur = [];
      curBytes = 0;
      want = rng.int(1024, 8192);
    }
  }
  if (cur.length) docs.push(cur.join(''));
  return docs;
}

// Byte documents with invalid UTF-8, from slices of the corpus.
function invalidDocuments(corpusBytes, rng, count) {
  const faults = [
    [0xff], [0xfe], [0x80], [0xbf], [0xc0, 0xaf], [0xc1, 0xbf], [0xe0, 0x80, 0xaf], [0xf0, 0x80, 0x80, 0xaf], // bad bytes, overlongs
    [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xed, 0xa0, 0x80, 0xed, 0xb0, 0x80], // surrogates (also a CESU-8 pair)
    [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], // past U+10FFFF, 5-byte form
    [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xe2, 0x82, 0x41], [0xf0, 0x9f, 0x41], [0xc3, 0xc3, 0xa9], // truncated
    [0xe0, 0xa0], [0xf4, 0x8f, 0xbf], [0x80, 0x80, 0x80, 0x80], [0xc2, 0x20], // more truncations, lone continuations
  ];
  const docs = [];
  for (let d = 0; d < count; d++) {
    // A slice at arbitrary byte offsets: it may begin or end inside a character.
    const len = rng.int(256, 4096);
    const start = rng.int(0, corpusBytes.length - len);
    const parts = [corpusBytes.subarray(start, start + len)];
    for (let k = rng.int(d < faults.length ? 0 : 1, 8); k > 0; k--) {
      const at = rng.int(0, parts[parts.length - 1].length);
      const last = parts.pop();
      parts.push(last.subarray(0, at), Buffer.from(rng.pick(faults)), last.subarray(at));
    }
    if (d < faults.length) parts.push(Buffer.from(faults[d]), Buffer.from(rng.chance(0.5) ? ' x' : '')); // each fault at least once
    docs.push(Buffer.concat(parts));
  }
  // Some that are nothing but faults and random bytes.
  for (let d = 0; d < 8; d++) docs.push(Buffer.from(Array.from({ length: rng.int(1, 64) }, () => rng.int(0, 255))));
  docs.push(Buffer.from([0xff]), Buffer.from([0xc3]), Buffer.from([0xed, 0xa0, 0x80]));
  return docs;
}

const time = (f) => {
  const t0 = performance.now();
  const r = f();
  return [r, (performance.now() - t0) / 1000];
};

async function main() {
  // Stop at once if the binary cannot run at all (wrong path, missing vocabulary).
  const probe = spawnSync(binary, binArgs, { input: 'hello world' });
  if (probe.status !== 0 || String(probe.stdout) !== '[31373,995]\n') {
    console.log(`FAIL: '${binary} ${binArgs.join(' ')}' on "hello world" gave exit ${probe.status}, ` +
      `stdout ${JSON.stringify(String(probe.stdout))}, stderr ${JSON.stringify(String(probe.stderr || probe.error))}`);
    process.exit(1);
  }
  const tmp = mkdtempSync(join(tmpdir(), 'attnlab-tokenizer-'));
  try {
    const rng = makeRng(seed ^ 0x5eed);
    const corpus = makeCorpus({ seed, bytes: targetBytes });
    const corpusPath = join(tmp, 'corpus.txt');
    writeFileSync(corpusPath, corpus, 'utf8');
    const corpusBytes = readFileSync(corpusPath);
    console.log(`corpus: ${corpusBytes.length} bytes, ${[...corpus].length} code points (seed ${seed}), in ${corpusPath}`);

    // 1. Documents.
    const docs = splitDocuments(corpus, rng);
    const withEot = docs.filter((d) => d.includes(EOT)).length;
    const results = await pool(docs, (d) => runOurs(Buffer.from(d, 'utf8')));
    docs.forEach((d, i) => check(`document ${i}`, d, results[i]));
    console.log(`documents: ${docs.length} of 1-8 KB (${withEot} with <|endoftext|>, checked against js-tiktoken only); ` +
      `mismatches: js-tiktoken ${stats.tiktokenMismatch}, gpt-3-encoder ${stats.gpt3Mismatch} (of ${stats.gpt3Checked}); ` +
      `references disagree on ${stats.refsDisagree}`);

    // 2. Invalid UTF-8.
    const before = { ...stats };
    const bad = invalidDocuments(corpusBytes, rng, 40);
    const badResults = await pool(bad, (b) => runOurs(b));
    const decoder = new TextDecoder('utf-8'); // replacement mode, maximal subparts (WHATWG)
    const strict = new TextDecoder('utf-8', { fatal: true });
    let invalidCount = 0;
    bad.forEach((b, i) => {
      let valid = true;
      try {
        strict.decode(b);
      } catch {
        valid = false;
      }
      invalidCount += valid ? 0 : 1;
      check(`invalid-UTF-8 document ${i}`, decoder.decode(b), badResults[i], { expectWarning: !valid });
    });
    console.log(`invalid UTF-8: ${bad.length} byte documents (${invalidCount} invalid); mismatches: js-tiktoken ` +
      `${stats.tiktokenMismatch - before.tiktokenMismatch}, gpt-3-encoder ${stats.gpt3Mismatch - before.gpt3Mismatch} ` +
      `(of ${stats.gpt3Checked - before.gpt3Checked}); references disagree on ${stats.refsDisagree - before.refsDisagree}`);

    // 3. The whole corpus in one run, against js-tiktoken (gpt-3-encoder's encode() is
    // quadratic in the output length, so it only sees the documents), and timed. The time
    // of a run on empty input (starting up and loading the vocabulary) is subtracted; each
    // is the best of three.
    const runSync = (input) => spawnSync(binary, binArgs, { input, maxBuffer: 1 << 30 });
    const best = (input) => {
      let best = Infinity, r = null;
      for (let k = 0; k < 3; k++) {
        const [res, t] = time(() => runSync(input));
        r = res;
        best = Math.min(best, t);
      }
      return [r, best];
    };
    const [emptyRun, tEmpty] = best(Buffer.alloc(0));
    if (emptyRun.status !== 0 || String(emptyRun.stdout) !== '[]\n') fail(`empty input: exit ${emptyRun.status}, stdout ${JSON.stringify(String(emptyRun.stdout))}`);
    const [whole, tWhole] = best(corpusBytes);
    const beforeWhole = stats.tiktokenMismatch;
    const wholeIds = whole.status === 0 ? JSON.parse(String(whole.stdout)) : null;
    const [tk, tTk] = time(() => refTiktoken(corpus));
    if (!wholeIds) fail(`whole corpus: attnlab exited with ${whole.status}: ${String(whole.stderr)}`);
    else if (!same(wholeIds, tk)) {
      stats.tiktokenMismatch++;
      fail('whole corpus vs js-tiktoken ' + describe(corpus, wholeIds, tk, 'js-tiktoken:'));
    }
    console.log(`whole corpus: ${wholeIds ? wholeIds.length : '?'} ids; mismatches: js-tiktoken ${stats.tiktokenMismatch - beforeWhole}`);
    const mb = corpusBytes.length / 1e6;
    const tEncode = Math.max(tWhole - tEmpty, 1e-6);
    console.log(`speed: attnlab run on ${mb.toFixed(2)} MB: ${tWhole.toFixed(3)} s, of which start-up + vocabulary ${tEmpty.toFixed(3)} s; ` +
      `encoding ${tEncode.toFixed(3)} s = ${(mb / tEncode).toFixed(1)} MB/s (js-tiktoken: ${tTk.toFixed(2)} s = ${(mb / tTk).toFixed(1)} MB/s)`);

    // 4. Every scalar value c once, in the unit " a<c>1<c>'s". Pieces by c's class:
    //      letter: " ac" "1" "c" "'s"        number: " a" "c1c" "'s"
    //      other:  " a" "c" "1" "c'" "s"     space:  " a" "c" "1" "c" "'s"
    // An "other" c swallows the apostrophe, so the id of "'s" (338) tells it apart from the
    // rest whatever c's bytes are; letters, numbers and spaces differ wherever their bytes
    // merge with the neighbours. Pieces never cross units, so js-tiktoken takes the text in
    // chunks. (gpt-3-encoder is left out here: it would add a minute, and it reads the text
    // with the same JavaScript regular expression; its BPE is checked on the documents.)
    if (!args.includes('--no-all-code-points')) {
      const units = [];
      for (let c = 0; c <= 0x10ffff; c++) {
        if ((c >= 0xd800 && c <= 0xdfff) || sampledAway(c)) continue;
        const s = String.fromCodePoint(c);
        units.push(' a' + s + '1' + s + "'s");
      }
      const text = units.join('');
      const ours = runSync(Buffer.from(text, 'utf8'));
      const oursIds = ours.status === 0 ? JSON.parse(String(ours.stdout)) : null;
      const tkAll = [];
      for (let i = 0; i < units.length; i += 1024) for (const id of refTiktoken(units.slice(i, i + 1024).join(''))) tkAll.push(id);
      let m1 = 0;
      if (!oursIds) fail(`all code points: attnlab exited with ${ours.status}: ${String(ours.stderr)}`);
      else if (!same(oursIds, tkAll)) {
        m1 = 1;
        fail('all code points vs js-tiktoken ' + describe(text, oursIds, tkAll, 'js-tiktoken:'));
      }
      stats.tiktokenMismatch += m1;
      console.log(`all code points: ${units.length} scalar values (planes 4-13, 15-16 sampled), ${Buffer.byteLength(text)} bytes, ${oursIds ? oursIds.length : '?'} ids; ` +
        `mismatches: js-tiktoken ${m1}`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  console.log(`total: js-tiktoken mismatches ${stats.tiktokenMismatch}, gpt-3-encoder mismatches ${stats.gpt3Mismatch}, ` +
    `references disagree ${stats.refsDisagree}; ${failures === 0 ? 'PASS: 100% identical' : `FAIL (${failures} problems)`}`);
  process.exit(failures === 0 ? 0 : 1);
}

main();
