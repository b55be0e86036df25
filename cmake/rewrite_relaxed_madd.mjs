// Re-encodes f32x4.relaxed_madd in a module linked by Debian's Emscripten 3.1.6, checked, in place.
//
//   node --experimental-wasm-relaxed-simd cmake/rewrite_relaxed_madd.mjs WASM_DIS MODULE.wasm
//   node --experimental-wasm-relaxed-simd cmake/rewrite_relaxed_madd.mjs --check MODULE.wasm
//
// Emscripten 3.1.6's LLVM 14 implements relaxed SIMD as the proposal stood in early 2022:
// __builtin_wasm_fma_f32x4(a, b, c) becomes "f32x4.relaxed_fma", opcode 0xfd 0xaf (the LEB128
// bytes af 01), which V8 rejects ("invalid simd opcode"). Browsers ship the final proposal
// (Chrome 114 on): f32x4.relaxed_madd, 0xfd 0x105 (85 02), a * b + c of its operands in stack
// order, which is the order gemm_simd128.cpp passes them in. Both encodings take 3 bytes, so no
// size or offset in the module changes.
//
// The bytes fd af 01 are replaced in the code section only, and only where they are an instruction:
//   - binaryen's wasm-dis (the build's own, which knows the early encoding) decodes as many
//     f32x4.relaxed_fma instructions as there are such byte runs, so every run is one; or, when an
//     immediate happens to hold those bytes too (a constant, an address), the runs are told apart by
//     marking a group of them as the early f32x4.relaxed_fms (fd b0 01: same length, same operands)
//     in a copy and counting the fms wasm-dis decodes there, halving the groups that mix both kinds.
//     The instruction runs found must then be exactly as many as the relaxed_fma decoded;
//   - the module holds no other relaxed-SIMD instruction (whose early encoding would need its own
//     rewrite);
// and the result must then validate in this V8. --check tests a module already rewritten: some
// relaxed_madd, and it validates (which an early opcode left as an instruction would not). Any failure exits 1 and writes nothing.
import { spawn } from 'node:child_process';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const EARLY = [0xfd, 0xaf, 0x01];  // f32x4.relaxed_fma, LLVM 14
const FINAL = [0xfd, 0x85, 0x02];  // f32x4.relaxed_madd
const MARK = [0xfd, 0xb0, 0x01];   // f32x4.relaxed_fms, LLVM 14: a probe, never written to the module

function fail(message) {
  console.error(`rewrite_relaxed_madd: ${message}`);
  process.exit(1);
}

// [start, end) of the code section's payload.
function codeSection(bytes) {
  const leb = (at) => {
    let value = 0, shift = 0, b;
    do { b = bytes[at++]; value += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
    return [value, at];
  };
  for (let at = 8; at < bytes.length;) {
    const id = bytes[at];
    const [size, payload] = leb(at + 1);
    if (id === 10) return [payload, payload + size];
    at = payload + size;
  }
  fail('the module has no code section');
}

// Offsets of every run of `pattern` between start and end.
function runs(bytes, [start, end], pattern) {
  const found = [];
  for (let i = start; i + pattern.length <= end; ++i)
    if (pattern.every((b, k) => bytes[i + k] === b)) found.push(i);
  return found;
}

// How many instructions of each relaxed-SIMD kind binaryen decodes (one s-expression a line).
async function decodedRelaxed(wasmDis, file) {
  const child = spawn(wasmDis, [file], { stdio: ['ignore', 'pipe', 'inherit'] });
  const counts = {};
  for await (const line of createInterface({ input: child.stdout })) {
    const m = /^\s*\(([a-z0-9]+x[0-9]+\.(?:relaxed_[a-z0-9_]+|laneselect))\s*$/.exec(line);
    if (m) counts[m[1]] = (counts[m[1]] ?? 0) + 1;
  }
  const code = await new Promise((resolve) => child.on('close', resolve));
  if (code !== 0) fail(`${wasmDis} ${file} failed (${code})`);
  return counts;
}

// The runs (offsets) among `candidates` that wasm-dis decodes as instructions: a copy with a group
// marked as relaxed_fms decodes that many fms where the group holds that many instructions.
async function instructionRuns(wasmDis, bytes, candidates, scratch) {
  const found = [];
  const groups = [candidates];
  while (groups.length) {
    const group = groups.pop();
    const copy = Buffer.from(bytes);
    for (const i of group) MARK.forEach((b, k) => { copy[i + k] = b; });
    writeFileSync(scratch, copy);
    const fms = (await decodedRelaxed(wasmDis, scratch))['f32x4.relaxed_fms'] ?? 0;
    if (fms === group.length) found.push(...group);
    else if (fms > 0 && group.length > 1) groups.push(group.slice(0, group.length >> 1), group.slice(group.length >> 1));
    else if (fms > 0) fail(`a marked run decoded as ${fms} instructions`);
  }
  unlinkSync(scratch);
  return found.sort((a, b) => a - b);
}

function mustValidate(bytes, file) {
  if (!WebAssembly.validate(bytes))
    fail(`${file} does not validate in this V8 (${process.version}); run node with --experimental-wasm-relaxed-simd`);
}

const argv = process.argv.slice(2);
if (argv[0] === '--check') {
  const file = argv[1];
  const bytes = readFileSync(file);
  const code = codeSection(bytes);
  const early = runs(bytes, code, EARLY).length, final = runs(bytes, code, FINAL).length;
  if (final === 0) fail(`${file} holds no f32x4.relaxed_madd`);
  // An early relaxed_fma left as an instruction fails validation: 0xfd 0xaf is no opcode in the
  // final SIMD and relaxed-SIMD sets. Runs of its bytes that remain are immediates.
  mustValidate(bytes, file);
  console.log(`${file}: ${final} f32x4.relaxed_madd, validates in V8 ${process.versions.v8}` +
              (early ? ` (${early} run(s) of fd af 01 left: immediates)` : ''));
} else {
  const [wasmDis, file] = argv;
  if (!wasmDis || !file) fail('usage: rewrite_relaxed_madd.mjs WASM_DIS MODULE.wasm | --check MODULE.wasm');
  const bytes = readFileSync(file);
  const code = codeSection(bytes);
  let at = runs(bytes, code, EARLY);
  const decoded = await decodedRelaxed(wasmDis, file);
  const fma = decoded['f32x4.relaxed_fma'] ?? 0;
  const others = Object.entries(decoded).filter(([name]) => name !== 'f32x4.relaxed_fma');
  if (others.length) fail(`${file} holds other relaxed-SIMD instructions, which this rewrite does not handle: ${JSON.stringify(Object.fromEntries(others))}`);
  if (fma === 0) fail(`${file} holds no f32x4.relaxed_fma (was it compiled with -mrelaxed-simd?)`);
  if (at.length !== fma) {
    const all = at.length;
    at = await instructionRuns(wasmDis, bytes, at, `${file}.probe.wasm`);
    if (at.length !== fma) fail(`${file}: ${all} runs of fd af 01 in the code section, ${at.length} of them decode as instructions, but ${fma} relaxed_fma instructions; not rewritten`);
    console.log(`${file}: ${all - fma} of ${all} runs of fd af 01 are not instructions (an immediate), left as they are`);
  }
  for (const i of at) FINAL.forEach((b, k) => { bytes[i + k] = b; });
  mustValidate(bytes, file);
  writeFileSync(file, bytes);
  console.log(`${file}: ${fma} f32x4.relaxed_fma re-encoded as f32x4.relaxed_madd; validates in V8 ${process.versions.v8}`);
}
