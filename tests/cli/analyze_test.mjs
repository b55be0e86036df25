// `attnlab analyze` against the independent numpy reference (tests/reference/make_analysis_fixtures.py,
// its output in tests/fixtures/analysis/cases.json), plus determinism and bad input.
//
//   node tests/cli/analyze_test.mjs PATH/TO/attnlab
//
// Deterministic keys must match to 1e-9 relative + 1e-12 absolute; `selected` and `N_s` exactly.
// expected_A / expected_B are Monte Carlo in the tool: the reference gives the exact mean (all
// subsets) or its own 200000-sample estimate, and the two must agree within 5 combined standard
// errors. sensitivity[k].g uses a random direction, so only its range is checked.
import { cli, check, run, finish } from "./harness.mjs";
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const cases = JSON.parse(readFileSync(path.join(root, "tests/fixtures/analysis/cases.json"), "utf8"));
const tmp = mkdtempSync(path.join(tmpdir(), "attnlab-analyze-"));

let fileCount = 0;
function inputFile(content) {
  const file = path.join(tmp, `input-${fileCount++}.json`);
  writeFileSync(file, typeof content === "string" ? content : JSON.stringify(content));
  return file;
}

// Runs analyze --json on an input object; returns { result, problem }.
function analyze(input) {
  const r = run(["analyze", "--input", inputFile(input), "--json"]);
  if (r.error) return { problem: `could not run: ${r.error.message}` };
  if (r.code !== 0 || r.signal) return { problem: `exit ${r.code}, signal ${r.signal}, stderr: ${r.err.trim()}`, raw: r };
  try { return { result: JSON.parse(r.out), raw: r }; }
  catch (e) { return { problem: `stdout is not JSON (${e.message}): ${r.out.slice(0, 200)}`, raw: r }; }
}

const close = (a, b) => typeof a === "number" && Math.abs(a - b) <= 1e-9 * Math.abs(b) + 1e-12;
const show = (x) => JSON.stringify(x)?.slice(0, 160);

// Recursive comparison of one output value with the reference; pushes "key: got X, want Y" lines.
function compare(got, want, key, problems) {
  if (got === undefined) { problems.push(`${key}: missing`); return; }
  if (want === null) { if (got !== null) problems.push(`${key}: got ${show(got)}, want null`); return; }
  if (typeof want === "number") {
    if (!close(got, want)) problems.push(`${key}: got ${show(got)}, want ${want}`);
  } else if (typeof want === "string") {
    if (got !== want) problems.push(`${key}: got ${show(got)}, want ${show(want)}`);
  } else if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) {
      problems.push(`${key}: got ${show(got)}, want an array of ${want.length}`);
      return;
    }
    const before = problems.length;
    for (let i = 0; i < want.length && problems.length - before < 3; i++) compare(got[i], want[i], `${key}[${i}]`, problems);
  } else {
    if (got === null || typeof got !== "object") { problems.push(`${key}: got ${show(got)}, want an object`); return; }
    for (const k of Object.keys(want)) compare(got[k], want[k], `${key}.${k}`, problems);
  }
}

// expected_A / expected_B: {mean, se} from the tool's own Monte Carlo.
function compareExpectation(got, want, key, samples, problems) {
  if (!got || typeof got.mean !== "number" || typeof got.se !== "number") {
    problems.push(`${key}: got ${show(got)}, want {mean, se}`);
    return;
  }
  if (want.std <= 1e-12 * Math.abs(want.mean)) {
    // Every subset gives the same value (e.g. L = 2, N = 1): no spread to estimate.
    if (!close(got.mean, want.mean) || !(got.se >= 0 && got.se <= 1e-9 * Math.abs(want.mean) + 1e-12))
      problems.push(`${key}: constant over subsets, got mean ${got.mean} se ${got.se}, want mean ${want.mean} se 0`);
    return;
  }
  const tolerance = 5 * Math.hypot(got.se, want.se);
  if (!(got.se > 0)) problems.push(`${key}.se: got ${got.se}, want > 0`);
  if (!(Math.abs(got.mean - want.mean) <= tolerance))
    problems.push(`${key}.mean: got ${got.mean} (se ${got.se}), want ${want.mean} (${want.exact ? "exact" : `se ${want.se}`}): ` +
                  `off by ${((got.mean - want.mean) / Math.hypot(got.se, want.se)).toFixed(1)} standard errors`);
  // The standard error of a mean of `samples` draws is std / sqrt(samples).
  const se = want.std / Math.sqrt(samples);
  if (!(got.se >= se / 2 && got.se <= se * 2))
    problems.push(`${key}.se: got ${got.se}, want about std/sqrt(samples) = ${se.toPrecision(6)} (within a factor of 2)`);
}

function compareCase(got, expected) {
  const problems = [];
  for (const [key, want] of Object.entries(expected)) {
    if (!(key in got)) { problems.push(`${key}: missing`); continue; }
    if (key === "selected" || key === "N_s") {
      if (JSON.stringify(got[key]) !== JSON.stringify(want)) problems.push(`${key}: got ${show(got[key])}, want ${show(want)}`);
    } else if (key === "expected_A" || key === "expected_B") {
      compareExpectation(got[key], want, key, expected.samples, problems);
    } else if (key === "sensitivity" && want === null) {
      if (got[key] !== null) problems.push(`sensitivity: got ${show(got[key])}, want null (softmax only)`);
    } else if (key === "sensitivity") {
      const g = got[key];
      if (!Array.isArray(g) || g.length !== want.length) { problems.push(`sensitivity: got ${show(g)}, want ${want.length} entries`); continue; }
      want.forEach((w, k) => {
        const e = g[k] ?? {};
        compare(e.eps, w.eps, `sensitivity[${k}].eps`, problems);
        compare(e.bound, w.bound, `sensitivity[${k}].bound`, problems);
        if (!(typeof e.g === "number" && e.g >= 0 && e.g <= w.bound * (1 + 1e-9)))
          problems.push(`sensitivity[${k}].g: got ${e.g}, want in [0, ${w.bound}]`);
      });
    } else {
      compare(got[key], want, key, problems);
    }
  }
  return problems;
}

// --- every reference case ---------------------------------------------------------------
console.log(`analyze: ${cases.length} cases from tests/fixtures/analysis/cases.json`);
for (const { name, input, expected } of cases) {
  const { result, problem } = analyze(input);
  const what = `${name} (L=${expected.L} N=${expected.N} T=${expected.T} ${expected.normalizer})`;
  if (problem) { check(false, what, problem); continue; }
  if (result === null || typeof result !== "object" || Array.isArray(result)) { check(false, what, "stdout is not a JSON object"); continue; }
  const problems = compareCase(result, expected);
  check(problems.length === 0, what, `\n          ${problems.join("\n          ")}`);
}

// --- determinism, seeds, sample counts ----------------------------------------------------
const byName = Object.fromEntries(cases.map((c) => [c.name, c]));
{
  const input = byName["L200-N5-d8"].input;
  const file = inputFile(input);
  const a = run(["analyze", "--input", file, "--json"]);
  const b = run(["analyze", "--input", file, "--json"]);
  check(a.code === 0 && a.out.length > 0 && a.out === b.out, "the same input and seed give byte-identical output", a.err.trim());

  const one = analyze({ ...input, seed: 1 }), two = analyze({ ...input, seed: 2 });
  const ok = one.result && two.result;
  check(ok && one.result.expected_A.mean !== two.result.expected_A.mean,
        "another seed changes expected_A.mean", ok ? `${one.result.expected_A.mean} both times` : one.problem ?? two.problem);
  check(ok && one.result.d_A === two.result.d_A, "another seed leaves d_A unchanged",
        ok ? `${one.result.d_A} vs ${two.result.d_A}` : one.problem ?? two.problem);
}
{
  // 16 times the samples: the standard error should shrink by about sqrt(16) = 4.
  const input = byName["L20-N10-d2-montecarlo"].input;
  const small = analyze({ ...input, samples: 1000 }), large = analyze({ ...input, samples: 16000 });
  const ratio = small.result && large.result ? small.result.expected_A.se / large.result.expected_A.se : NaN;
  check(ratio >= 3 && ratio <= 16 / 3, "expected_A.se shrinks as 1/sqrt(samples) (x16 samples -> se / 4)",
        `ratio ${ratio} ${small.problem ?? ""} ${large.problem ?? ""}`);
}
{
  const r = run(["analyze", "--input", inputFile(byName["L3-N2-d2"].input)]);
  check(r.code === 0 && r.out.trim().length > 0 && !r.signal, "without --json: exit 0 and a report on stdout",
        `exit ${r.code}, stderr: ${r.err.trim()}`);
}

// --- bad input: exit 1 or 2, a message naming the problem on stderr, nothing on stdout ------
const base = { logits: [0.5, -1, 2, 0.25, 1], vectors: [[1, 0], [0, 1], [1, 1], [-1, 0.5], [0.3, -2]], N: 2, T: 1 };
const rawBase = JSON.stringify(base);
const zeroAt13 = { logits: Array.from({ length: 17 }, (_, i) => Math.sin(i)),
                   vectors: Array.from({ length: 17 }, (_, i) => (i === 13 ? [0, 0, 0] : [1, i, -i])), N: 3, T: 1 };
const without = (key) => { const o = { ...base }; delete o[key]; return o; };
const bad = [
  // [arguments or input, stderr must match, what]
  [["analyze", "--json"], /--input/, "missing --input"],
  [["analyze", "--input", path.join(tmp, "no-such-file.json"), "--json"], /no-such-file\.json/, "input file missing"],
  ["this is not JSON", /json|parse|invalid|unexpected|expected/i, "not JSON"],
  [rawBase.slice(0, 25), /json|parse|unexpected|end|truncated|expected/i, "truncated JSON"],
  [{ ...base, logits: 5 }, /logits/, "logits not an array"],
  [{ ...base, logits: [0.5, "x", 2, 0.25, 1] }, /logits/, "a string among the logits"],
  [{ ...base, logits: [0.5, null, 2, 0.25, 1] }, /logits/, "null among the logits"],
  [rawBase.replace("[0.5,-1,", "[0.5,1e400,"), /logits|finite|overflow|out of range|too large/i, "a logit 1e400 (inf)"],
  [{ ...base, vectors: base.vectors.slice(0, 4) }, /vectors/, "4 vectors for 5 logits"],
  [{ ...base, vectors: [[1, 0], [0, 1], [1], [-1, 0.5], [0.3, -2]] }, /vectors/, "ragged vectors"],
  [{ ...base, logits: [], vectors: [] }, /logits|empty|\bL\b/, "empty logits"],
  [{ ...base, N: 0 }, /\bN\b/, "N = 0"],
  [{ ...base, N: 5 }, /\bN\b/, "N = L"],
  [{ ...base, N: 2.5 }, /\bN\b/, "N = 2.5"],
  [{ ...base, T: 0 }, /\bT\b/, "T = 0"],
  [{ ...base, T: -1 }, /\bT\b/, "T = -1"],
  [{ ...base, normalizer: "relu" }, /relu|normalizer/, "an unknown normalizer"],
  [{ ...base, samples: 0 }, /samples/, "samples = 0"],
  [{ ...base, temprature: 0.5 }, /temprature/, "an unknown key (a typo) is named"],
  [zeroAt13, /\b13\b/, "a zero vector: the error names its index"],
  // Not spelled out in the brief, but N and T have no default in the input format.
  [without("N"), /\bN\b/, "N missing"],
  [without("T"), /\bT\b/, "T missing"],
  ["[1, 2, 3]", /object|json|logits/i, "top level not an object"],
];
for (const [what_in, fragment, what] of bad) {
  const args = Array.isArray(what_in) ? what_in : ["analyze", "--input", inputFile(what_in), "--json"];
  const r = run(args);
  check((r.code === 1 || r.code === 2) && r.signal === null && r.out === "" && fragment.test(r.err),
        `${what}: exit 1 or 2, stderr names it, stdout empty`,
        `exit ${r.code}, signal ${r.signal}, stdout ${JSON.stringify(r.out.slice(0, 80))}, stderr: ${r.err.trim()}`);
}

rmSync(tmp, { recursive: true });
finish("analyze");
