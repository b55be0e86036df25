// Tokens per second of `attnlab tokenize --model` against Hugging Face's JavaScript tokenizer
// (@huggingface/tokenizers, what @huggingface/transformers 4 runs) on the same 1 MB of text
// (tests/tokenizer/reference/make_corpus.mjs, seed 1), for each tokenizer compare_hf.mjs checks.
// One run prints both rates and their ratio, with the machine and its load.
//
//   node bench/tokenizer_speed.mjs build/native/attnlab [--bytes N] [--only NAME,...]
//
// attnlab: best of 3 runs on the text minus best of 3 on empty input (start-up and reading
// tokenizer.json are not encoding). Reference: best of 3 encode() calls of the whole text in
// this process, after the tokenizer is built (its BPE cache starts empty each time: a new
// Tokenizer per run, built outside the timing). Run npm ci in tests/tokenizer/reference first.
import { spawnSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const ref = join(here, '../tests/tokenizer/reference');
const { Tokenizer } = await import(join(ref, 'node_modules/@huggingface/tokenizers/dist/tokenizers.mjs'));
const { makeCorpus } = await import(join(ref, 'make_corpus.mjs'));
const { commandLine, tokenizers } = await import(join(ref, 'hf_tokenizers.mjs'));

const { opt, binary } = commandLine('node bench/tokenizer_speed.mjs PATH/TO/attnlab [--bytes N] [--only NAME,...]');
const bytes = Number(opt('--bytes', '1000000'));
const only = opt('--only', null)?.split(',');
const TOKENIZERS = tokenizers();

const text = makeCorpus({ seed: 1, bytes });
const input = Buffer.from(text);
const cpu = cpus();
console.log(`machine: ${cpu.length} x ${cpu[0].model}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; load average at start ${loadavg().map((x) => x.toFixed(2)).join(' ')}; node ${process.version}`);
console.log(`text: ${input.length} bytes (make_corpus.mjs seed 1)`);

const best = (n, f) => {
  let t = Infinity, r;
  for (let k = 0; k < n; k++) {
    const t0 = performance.now();
    r = f();
    t = Math.min(t, (performance.now() - t0) / 1000);
  }
  return [r, t];
};

for (const name of Object.keys(TOKENIZERS)) {
  if (only && !only.includes(name)) continue;
  const { dir, json, config } = TOKENIZERS[name]();
  const run = (buf) => spawnSync(binary, ['tokenize', '--json', '--model', dir], { input: buf, maxBuffer: 1 << 30 });
  const [empty, tEmpty] = best(3, () => run(Buffer.alloc(0)));
  const [whole, tWhole] = best(3, () => run(input));
  if (empty.status !== 0 || whole.status !== 0) {
    console.log(`${name}: attnlab failed: ${String(whole.stderr || empty.stderr)}`);
    process.exitCode = 1;
    continue;
  }
  const ours = JSON.parse(String(whole.stdout));
  const tOurs = Math.max(tWhole - tEmpty, 1e-6);
  let tRef = Infinity, theirs = null;
  for (let k = 0; k < 3; k++) {
    const tok = new Tokenizer(json, config);
    const t0 = performance.now();
    theirs = tok.encode(text).ids;
    tRef = Math.min(tRef, (performance.now() - t0) / 1000);
  }
  const same = ours.length === theirs.length && ours.every((x, i) => x === theirs[i]);
  const rOurs = ours.length / tOurs, rRef = theirs.length / tRef;
  console.log(`${name.padEnd(7)} ${String(ours.length).padStart(8)} tokens${same ? '' : ' (IDS DIFFER)'}: attnlab ${(rOurs / 1e6).toFixed(2)} M tok/s ` +
    `(${tOurs.toFixed(3)} s; start-up + loading ${tEmpty.toFixed(2)} s), reference ${(rRef / 1e6).toFixed(2)} M tok/s (${tRef.toFixed(3)} s): ` +
    `ratio ${(rOurs / rRef).toFixed(2)}x`);
  if (!same) process.exitCode = 1;
}
console.log(`load average at end ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
