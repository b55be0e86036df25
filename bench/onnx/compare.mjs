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
// --model smollm2: the Llama-family peer (issue 37), SmolLM2-135M's shape; gpt2 (default): GPT-2 small.
const model = args.model ?? 'gpt2';
if (!['gpt2', 'smollm2'].includes(model)) { console.error(`compare.mjs: --model is gpt2 or smollm2, not ${model}`); process.exit(2); }
const lengths = (args.lengths ?? (model === 'smollm2' ? '128,512,1024,4096' : '128,512,1024')).split(',').map(Number);
// --decode N: also milliseconds a token over N tokens fed one at a time after 128 (AttnLab's KV cache;
// onnxruntime through the --onnx-decode graph, which takes and returns the cache).
const decode = Number(args.decode ?? 0);
const repeats = Number(args.repeats ?? 3);

// The token ids every side runs: deterministic, spread over the vocabulary.
const vocab = model === 'smollm2' ? 49152 : 50257;
function tokenIds(n) {
  const ids = [];
  let x = 2654435761;
  for (let i = 0; i < n; ++i) { x = (Math.imul(x, 1103515245) + 12345) >>> 0; ids.push(x % vocab); }
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

// Milliseconds a token through the KV-cache graph (export_llama.py --decode): 128 tokens of
// prefill through it, then `decode` steps of one token each, best of --repeats after one unmeasured.
async function ortDecodeMs(kind, threads, ids) {
  const s = await ortSession(kind, threads, args['onnx-decode']);
  const { ort, session } = s;
  const shape = JSON.parse(readFileSync(path.join(args.checkpoint, 'config.json')));
  const dims = [shape.num_hidden_layers, shape.num_key_value_heads, 0, shape.head_dim ?? shape.hidden_size / shape.num_attention_heads];
  const empty = new ort.Tensor('float32', new Float32Array(0), dims);
  const step = async (part, past) => {
    const feeds = { input_ids: new ort.Tensor('int64', BigInt64Array.from(part, BigInt), [1, part.length]), past_keys: past.k, past_values: past.v };
    const out = await session.run(feeds);
    return { k: out.present_keys, v: out.present_values };
  };
  let best = Infinity;
  for (let r = 0; r < repeats + 1; ++r) {
    let past = await step(ids.slice(0, 128), { k: empty, v: empty });
    const t0 = performance.now();
    for (let i = 0; i < decode; ++i) past = await step(ids.slice(128 + i, 129 + i), past);
    if (r > 0) best = Math.min(best, (performance.now() - t0) / decode);
  }
  return Math.round(best * 100) / 100;
}

// One configuration, in this process: prints one JSON line. --part prefill or decode: only that
// half (onnxruntime-web's two sessions in separate processes, see ort() below).
async function child(kind, threads) {
  const ids = tokenIds(Math.max(...lengths, 128 + decode));
  const decodes = decode > 0 && args['onnx-decode'] && args.part !== 'prefill';
  if (args.part === 'decode') {
    const version = JSON.parse(readFileSync(path.join(path.dirname(self), `node_modules/onnxruntime-${kind === 'ort-web' ? 'web' : 'node'}/package.json`))).version;
    console.log(JSON.stringify({ build: kind, version, threads, prefill_ms: {}, prefill_cpu_ms: {}, decode_ms: decodes ? await ortDecodeMs(kind, threads, ids) : undefined }));
    return;
  }
  const s = await ortSession(kind, threads, args.onnx);
  const result = { build: kind, version: s.version, threads, prefill_ms: {}, prefill_cpu_ms: {} };
  if (args['logits-out']) writeFileSync(args['logits-out'], Buffer.from((await ortRun(s, ids.slice(0, 128))).buffer));
  for (const L of lengths) {
    let best = Infinity, bestCpu = Infinity;
    for (let r = 0; r < repeats + 1; ++r) {
      const t0 = performance.now(), cpu0 = process.cpuUsage();
      await ortRun(s, ids.slice(0, L));
      if (r > 0) {
        best = Math.min(best, performance.now() - t0);
        const cpu = process.cpuUsage(cpu0);
        bestCpu = Math.min(bestCpu, (cpu.user + cpu.system) / 1e3);
      }
    }
    result.prefill_ms[L] = Math.round(best * 10) / 10;
    result.prefill_cpu_ms[L] = Math.round(bestCpu * 10) / 10;
  }
  if (decodes) result.decode_ms = await ortDecodeMs(kind, threads, ids);
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
  const shaOf = (dir) => createHash('sha256').update(readFileSync(path.join(dir, 'model.safetensors'))).digest('hex');
  const sha = shaOf(args.checkpoint);
  // --checkpoint-bf16 DIR: the same weights rounded to BF16, which AttnLab runs 16-bit (--dtype bf16).
  const shaBf16 = args['checkpoint-bf16'] ? shaOf(args['checkpoint-bf16']) : null;
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
    runJson(process.execPath, [self, '--child', kind, '--threads', '1', '--onnx', args.onnx, '--lengths', '1', '--repeats', '1', '--model', model, '--logits-out', file]);
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
  const sizes = ['--lengths', lengths.join(','), '--repeats', String(repeats), '--model', model, '--checkpoint', args.checkpoint,
                 ...(decode > 0 && args['onnx-decode'] ? ['--decode', String(decode), '--onnx-decode', args['onnx-decode']] : [])];
  const benchModel = [...(model === 'smollm2' ? ['--model', 'smollm2-135m'] : []), ...(decode > 0 ? ['--decode', String(decode)] : [])];
  // A relaxed-SIMD build (a .wasm beside its .js) needs node's flags for it (docs/kernels.md).
  const nodeFlags = (binary) => (/relaxed/.test(binary) ? ['--no-experimental-fetch', '--experimental-wasm-relaxed-simd'] : []);
  const bench = (binary, threads, env = {}, extra = []) => () =>
    runJson(binary.endsWith('.js') ? process.execPath : binary,
            [...(binary.endsWith('.js') ? [...nodeFlags(binary), binary] : []), '--prefill', lengths.join(','), '--repeats', String(repeats),
             ...benchModel, ...extra, '--threads', String(threads)], env);
  const ortChild = (kind, threads, part) =>
    runJson(process.execPath, [self, '--child', kind, '--threads', String(threads), '--onnx', args.onnx, ...sizes, '--part', part]);
  // onnxruntime-web's prefill and KV-cache graphs are 656 MB each for smollm2: in one process they
  // would share one 4 GB wasm heap with L = 4096's activations, so each runs in its own.
  const ort = (kind, threads) => () => {
    if (kind !== 'ort-web' || !(decode > 0 && args['onnx-decode'])) return ortChild(kind, threads, 'both');
    return { ...ortChild(kind, threads, 'prefill'), decode_ms: ortChild(kind, threads, 'decode').decode_ms };
  };
  const configs = [
    ['AttnLab wasm', 1, bench(args.wasm, 1)],
    ...(args['wasm-mt'] ? [['AttnLab wasm', all, bench(args['wasm-mt'], all)]] : []),
    ...(args['wasm-relaxed'] ? [['AttnLab wasm relaxed SIMD', 1, bench(args['wasm-relaxed'], 1)]] : []),
    ...(args['wasm-mt-relaxed'] ? [['AttnLab wasm relaxed SIMD', all, bench(args['wasm-mt-relaxed'], all)]] : []),
    ['onnxruntime-web', 1, ort('ort-web', 1)],
    ...(all > 1 ? [['onnxruntime-web', all, ort('ort-web', all)]] : []),  // --threads 1: one thread only
    ['AttnLab native', 1, bench(args.native, 1, { OMP_NUM_THREADS: '1' })],
    ['AttnLab native', 2, bench(args.native, 2, { OMP_NUM_THREADS: '2' })],
    ['onnxruntime-node', 1, ort('ort-node', 1)],
    ['onnxruntime-node', 2, ort('ort-node', 2)],
    ...(shaBf16 ? [['AttnLab native BF16', 1, bench(args.native, 1, { OMP_NUM_THREADS: '1' }, ['--dtype', 'bf16'])],
                   ['AttnLab native BF16', 2, bench(args.native, 2, { OMP_NUM_THREADS: '2' }, ['--dtype', 'bf16'])]] : []),
  ];
  // --only a,b: just the configurations whose name contains one of these (e.g. native,onnxruntime-node).
  // --rounds R: every configuration once a round, the rounds one after the other, so that a
  // machine whose speed drifts (other jobs) moves both sides of a ratio alike; each cell then shows
  // the median of the rounds (and the min), each ratio the median of the rounds' own ratios.
  const only = args.only ? args.only.split(',') : null;
  const chosen = configs.filter(([name]) => !only || only.some((o) => name.includes(o)));
  const rounds = Number(args.rounds ?? 1);
  const rows = chosen.map(([name, threads]) => ({ engine: name, name, threads, runs: [] }));
  for (let round = 0; round < rounds; ++round)
    chosen.forEach(([name, threads, run], i) => {
      const r = run();
      const want = / BF16$/.test(name) ? shaBf16 : sha;
      if (r.checkpoint_sha256 && r.checkpoint_sha256 !== want) { console.error(`compare.mjs: ${name} ran other weights (${r.checkpoint_sha256})`); process.exit(1); }
      if (r.version) rows[i].name = `${name} ${r.version}`;
      // --cpu 1: the process's CPU time instead of wall time (1 thread on a loaded machine).
      rows[i].runs.push({ ...(args.cpu && r.prefill_cpu_ms ? r.prefill_cpu_ms : r.prefill_ms), decode: r.decode_ms });
      console.log(`round ${round + 1}: ${name}, ${threads} thread(s): ${lengths.map((L) => `L = ${L}: ${r.prefill_ms[L]} ms`).join(', ')}${r.decode_ms ? `, decode ${r.decode_ms} ms a token` : ''}; load ${os.loadavg()[0].toFixed(1)}`);
    });
  const median = (xs) => { const v = xs.filter(Number.isFinite).sort((a, b) => a - b); return v.length ? (v[(v.length - 1) >> 1] + v[v.length >> 1]) / 2 : NaN; };
  for (const r of rows) r.ms = Object.fromEntries([...lengths, 'decode'].map((L) => [L, median(r.runs.map((x) => x[L]))]));
  const find = (name, threads) => rows.find((r) => r.engine === name && r.threads === threads);
  const columns = decode > 0 ? [...lengths, 'decode'] : lengths;
  const heads = columns.map((L) => (L === 'decode' ? `decode, ms a token (${decode} after 128)` : `L = ${L}`));
  const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
  const cell = (r, L) => (Number.isFinite(r.ms[L]) ? (rounds > 1 ? `${fmt(r.ms[L])} (min ${fmt(Math.min(...r.runs.map((x) => x[L])))})` : fmt(r.ms[L])) : "-");
  console.log(`\n| ${model}: ${args.cpu ? 'CPU ' : ''}ms, best of ${repeats} in a process${rounds > 1 ? `, median (min) of ${rounds} rounds` : ''} | ${heads.join(' | ')} |\n|---|${columns.map(() => '---').join('|')}|`);
  for (const r of rows) console.log(`| ${r.name}, ${r.threads} thread${r.threads > 1 ? 's' : ''} | ${columns.map((L) => cell(r, L)).join(' | ')} |`);
  const ratio = (peer, ours, threads, target) => {
    const p = find(peer, threads), o = find(ours, threads);
    if (!p || !o) return;
    const cells = columns.map((L) => median(p.runs.map((x, i) => x[L] / o.runs[i][L])));
    console.log(`| ${peer} / ${ours}, ${threads} thread${threads > 1 ? 's' : ''} (target >= ${target.toFixed(2)}) | ${cells.map((x) => (Number.isFinite(x) ? `${x.toFixed(2)}${x >= target ? '' : ' (missed)'}` : '-')).join(' | ')} |`);
  };
  console.log(`\n| speed-up: peer time / AttnLab time | ${heads.join(' | ')} |\n|---|${columns.map(() => '---').join('|')}|`);
  ratio('onnxruntime-web', 'AttnLab wasm', 1, 1.3);
  ratio('onnxruntime-web', 'AttnLab wasm', all, 1.3);
  ratio('onnxruntime-web', 'AttnLab wasm relaxed SIMD', 1, 1.3);
  ratio('onnxruntime-web', 'AttnLab wasm relaxed SIMD', all, 1.3);
  ratio('onnxruntime-node', 'AttnLab native', 1, 1.0);
  ratio('onnxruntime-node', 'AttnLab native', 2, 1.0);
  // BF16 within 1.1x of F32: F32 time / BF16 time >= 1 / 1.1.
  ratio('AttnLab native', 'AttnLab native BF16', 1, 1 / 1.1);
  ratio('AttnLab native', 'AttnLab native BF16', 2, 1 / 1.1);
  console.log(`\nload average after: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
}

if (args.child) await child(args.child, Number(args.threads));
else await parent();
