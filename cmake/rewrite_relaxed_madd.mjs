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
// The bytes fd af 01 are replaced in the code section only, and only when
//   - binaryen's wasm-dis (the build's own, which knows the early encoding) decodes exactly as many
//     f32x4.relaxed_fma instructions as there are such byte runs: so every run is an instruction,
//     none an immediate that happens to hold those bytes;
//   - the module holds no other relaxed-SIMD instruction (whose early encoding would need its own
//     rewrite);
// and the result must then validate in this V8. --check tests a module already rewritten: some
// relaxed_madd, no early opcode left, and it validates. Any failure exits 1 and writes nothing.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const EARLY = [0xfd, 0xaf, 0x01];  // f32x4.relaxed_fma, LLVM 14
const FINAL = [0xfd, 0x85, 0x02];  // f32x4.relaxed_madd

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
  if (early > 0) fail(`${file} still holds ${early} runs of the early relaxed_fma encoding`);
  if (final === 0) fail(`${file} holds no f32x4.relaxed_madd`);
  mustValidate(bytes, file);
  console.log(`${file}: ${final} f32x4.relaxed_madd, validates in V8 ${process.versions.v8}`);
} else {
  const [wasmDis, file] = argv;
  if (!wasmDis || !file) fail('usage: rewrite_relaxed_madd.mjs WASM_DIS MODULE.wasm | --check MODULE.wasm');
  const bytes = readFileSync(file);
  const code = codeSection(bytes);
  const at = runs(bytes, code, EARLY);
  const decoded = await decodedRelaxed(wasmDis, file);
  const fma = decoded['f32x4.relaxed_fma'] ?? 0;
  const others = Object.entries(decoded).filter(([name]) => name !== 'f32x4.relaxed_fma');
  if (others.length) fail(`${file} holds other relaxed-SIMD instructions, which this rewrite does not handle: ${JSON.stringify(Object.fromEntries(others))}`);
  if (fma === 0) fail(`${file} holds no f32x4.relaxed_fma (was it compiled with -mrelaxed-simd?)`);
  if (at.length !== fma) fail(`${file}: ${at.length} runs of fd af 01 in the code section, but ${fma} relaxed_fma instructions; not rewritten`);
  for (const i of at) FINAL.forEach((b, k) => { bytes[i + k] = b; });
  mustValidate(bytes, file);
  writeFileSync(file, bytes);
  console.log(`${file}: ${fma} f32x4.relaxed_fma re-encoded as f32x4.relaxed_madd; validates in V8 ${process.versions.v8}`);
}
