// AttnLab against ONNX Runtime on the same GPT-2-small-shaped random weights, in one run.
// Developer-time only; not a test, it asserts nothing about time (bench/RESULTS.md).
//
//   bench/onnx/run.sh        # sets everything up, then runs this
//   node bench/onnx/compare.mjs --onnx build/bench_onnx/gpt2.onnx --checkpoint build/bench_onnx/ckpt \
//        --cli build/native/attnlab --native build/native/attnlab_bench --wasm build/wasm/attnlab_bench.js \
//        [--wasm-mt build/wasm-mt/attnlab_bench.js] [--wasm-relaxed build/wasm/attnlab_bench_relaxed.js]
//        [--wasm-mt-relaxed build/wasm-mt/attnlab_bench_relaxed.js] [--lengths 128,512,1024] [--repeats 3] [--threads N]
//
// First the logits: AttnLab's (the CLI on the checkpoint file) against onnxruntime-node's and
// onnxruntime-web's on the same 128 tokens, which must agree to 1e-3 of their largest magnitude
// before anything is timed; and every AttnLab bench must report the checkpoint's own SHA-256, so
// that all sides run the same weights. Then every configuration in its own process, one after
// the other: prefill, last-position logits, best of --repeats after one unmeasured pass.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);
const args = Object.fromEntries(
  process.argv.slice(2).reduce((pairs, a, i, all) => (a.startsWith('--') ? [...pairs, [a.slice(2), all[i + 1]]] : pairs), []));
const lengths = (args.lengths ?? '128,512,1024').split(',').map(Number);
const repeats = Number(args.repeats ?? 3);

// The token ids every side runs: deterministic, spread over the vocabulary.
function tokenIds(n) {
  const ids = [];
  let x = 2654435761;
  for (let i = 0; i < n; ++i) { x = (Math.imul(x, 1103515245) + 12345) >>> 0; ids.push(x % 50257); }
  return ids;
}

async function ortSession(kind, threads, onnx) {
  if (kind === 'ort-node') {
    const ort = (await import('onnxruntime-node')).default;
    const session = await ort.InferenceSession.create(onnx, { intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: 'all' });
    return { ort, session, version: JSON.parse(readFileSync(path.join(path.dirname(self), 'node_modules/onnxruntime-node/package.json'))).version };
  }
  const ort = await import('onnxruntime-web');
  ort.env.wasm.numThreads = threads;
  const session = await ort.InferenceSession.create(readFileSync(onnx), { graphOptimizationLevel: 'all' });
  return { ort, session, version: JSON.parse(readFileSync(path.join(path.dirname(self), 'node_modules/onnxruntime-web/package.json'))).version };
}

async function ortRun({ ort, session }, ids) {
  const input = new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]);
  const out = await session.run({ input_ids: input });
  return out.logits.data;
}

// One configuration, in this process: prints one JSON line.
async function child(kind, threads) {
  const s = await ortSession(kind, threads, args.onnx);
  const ids = tokenIds(1024);
  const result = { build: kind, version: s.version, threads, prefill_ms: {} };
  if (args['logits-out']) writeFileSync(args['logits-out'], Buffer.from((await ortRun(s, ids.slice(0, 128))).buffer));
  for (const L of lengths) {
    let best = Infinity;
    for (let r = 0; r < repeats + 1; ++r) {
      const t0 = performance.now();
      await ortRun(s, ids.slice(0, L));
      if (r > 0) best = Math.min(best, performance.now() - t0);
    }
    result.prefill_ms[L] = Math.round(best * 10) / 10;
  }
  console.log(JSON.stringify(result));
}

function runJson(cmd, argv, env = {}) {
  const r = spawnSync(cmd, argv, { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} failed (${r.status}): ${r.stderr}`);
  const line = r.stdout.trim().split('\n').filter((l) => l.startsWith('{')).pop();
  return JSON.parse(line);
}

async function parent() {
  for (const need of ['onnx', 'checkpoint', 'cli', 'native', 'wasm'])
    if (!args[need]) { console.error(`compare.mjs: --${need} is required (see the comment at the top)`); process.exit(2); }
  const all = Number(args.threads ?? Math.min(os.cpus().length, 8));
  const sha = createHash('sha256').update(readFileSync(path.join(args.checkpoint, 'model.safetensors'))).digest('hex');
  console.log(`# AttnLab vs ONNX Runtime, ${new Date().toISOString()}`);
  console.log(`machine: ${os.cpus()[0].model}, ${os.cpus().length} cores, node ${process.version}; load average before: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);

  // Logits first.
  const ids = tokenIds(128);
  const ours = JSON.parse(execFileSync(args.cli, ['logits', '--model', path.join(args.checkpoint, 'model.safetensors'), '--ids', ids.join(','), '--json'],
                                       { encoding: 'utf8', maxBuffer: 1 << 26 })).logits;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'attnlab-onnx-'));
  let failed = false;
  for (const kind of ['ort-node', 'ort-web']) {
    const file = path.join(dir, `${kind}.f32`);
    runJson(process.execPath, [self, '--child', kind, '--threads', '1', '--onnx', args.onnx, '--lengths', '1', '--repeats', '1', '--logits-out', file]);
    const theirs = new Float32Array(readFileSync(file).buffer.slice(0));
    let diff = 0, scale = 0;
    for (let i = 0; i < ours.length; ++i) { diff = Math.max(diff, Math.abs(ours[i] - theirs[i])); scale = Math.max(scale, Math.abs(ours[i])); }
    const ok = theirs.length === ours.length && diff <= 1e-3 * scale;
    failed ||= !ok;
    console.log(`logits at L = 128, AttnLab native vs ${kind}: max |difference| ${diff.toExponential(2)} against max |logit| ${scale.toExponential(2)}: ${ok ? 'agree' : 'DISAGREE'} (${theirs.length} logits)`);
  }
  if (failed) { console.error('compare.mjs: the logits disagree; nothing timed'); process.exit(1); }

  // Each configuration in its own process: ours prints one JSON line (--prefill), and so does
  // this script as a child for ONNX Runtime (its thread count is fixed once per process).
  const sizes = ['--lengths', lengths.join(','), '--repeats', String(repeats)];
  // A relaxed-SIMD build (a .wasm beside its .js) needs node's flags for it (docs/kernels.md).
  const nodeFlags = (binary) => (/relaxed/.test(binary) ? ['--no-experimental-fetch', '--experimental-wasm-relaxed-simd'] : []);
  const bench = (binary, threads, env = {}) => () =>
    runJson(binary.endsWith('.js') ? process.execPath : binary,
            [...(binary.endsWith('.js') ? [...nodeFlags(binary), binary] : []), '--prefill', lengths.join(','), '--repeats', String(repeats),
             '--threads', String(threads)], env);
  const ort = (kind, threads) => () => runJson(process.execPath, [self, '--child', kind, '--threads', String(threads), '--onnx', args.onnx, ...sizes]);
  const configs = [
    ['AttnLab wasm', 1, bench(args.wasm, 1)],
    ...(args['wasm-mt'] ? [['AttnLab wasm', all, bench(args['wasm-mt'], all)]] : []),
    ...(args['wasm-relaxed'] ? [['AttnLab wasm relaxed SIMD', 1, bench(args['wasm-relaxed'], 1)]] : []),
    ...(args['wasm-mt-relaxed'] ? [['AttnLab wasm relaxed SIMD', all, bench(args['wasm-mt-relaxed'], all)]] : []),
    ['onnxruntime-web', 1, ort('ort-web', 1)],
    ['onnxruntime-web', all, ort('ort-web', all)],
    ['AttnLab native', 1, bench(args.native, 1, { OMP_NUM_THREADS: '1' })],
    ['AttnLab native', 2, bench(args.native, 2, { OMP_NUM_THREADS: '2' })],
    ['onnxruntime-node', 1, ort('ort-node', 1)],
    ['onnxruntime-node', 2, ort('ort-node', 2)],
  ];
  const rows = [];
  for (const [name, threads, run] of configs) {
    const r = run();
    if (r.checkpoint_sha256 && r.checkpoint_sha256 !== sha) { console.error(`compare.mjs: ${name} ran other weights (${r.checkpoint_sha256})`); process.exit(1); }
    rows.push({ engine: name, name: r.version ? `${name} ${r.version}` : name, threads, ms: r.prefill_ms });
    console.log(`${name}, ${threads} thread(s): ${lengths.map((L) => `L = ${L}: ${r.prefill_ms[L]} ms`).join(', ')}`);
  }
  const find = (name, threads) => rows.find((r) => r.engine === name && r.threads === threads);
  console.log(`\n| prefill (ms), best of ${repeats} | ${lengths.map((L) => `L = ${L}`).join(' | ')} |\n|---|${lengths.map(() => '---').join('|')}|`);
  for (const r of rows) console.log(`| ${r.name}, ${r.threads} thread${r.threads > 1 ? 's' : ''} | ${lengths.map((L) => r.ms[L]).join(' | ')} |`);
  const ratio = (peer, ours, threads, target) => {
    const p = find(peer, threads), o = find(ours, threads);
    if (!p || !o) return;
    const cells = lengths.map((L) => p.ms[L] / o.ms[L]);
    console.log(`| ${peer} / ${ours}, ${threads} thread${threads > 1 ? 's' : ''} (target >= ${target}) | ${cells.map((x) => `${x.toFixed(2)}${x >= target ? '' : ' (missed)'}`).join(' | ')} |`);
  };
  console.log(`\n| speed-up: peer time / AttnLab time | ${lengths.map((L) => `L = ${L}`).join(' | ')} |\n|---|${lengths.map(() => '---').join('|')}|`);
  ratio('onnxruntime-web', 'AttnLab wasm', 1, 1.3);
  ratio('onnxruntime-web', 'AttnLab wasm', all, 1.3);
  ratio('onnxruntime-web', 'AttnLab wasm relaxed SIMD', 1, 1.3);
  ratio('onnxruntime-web', 'AttnLab wasm relaxed SIMD', all, 1.3);
  ratio('onnxruntime-node', 'AttnLab native', 1, 1.0);
  ratio('onnxruntime-node', 'AttnLab native', 2, 1.0);
  console.log(`\nload average after: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
}

if (args.child) await child(args.child, Number(args.threads));
else await parent();
