// `attnlab experiment`'s contract, checked from outside on the tiny fixture model (2 layers x 4
// heads, 32 positions, vocabulary 96): the files it writes, their shape, the JSON summaries, the
// independence from the thread count, the progress report, and bad input.
//
//   node tests/cli/experiment_test.mjs PATH/TO/attnlab
//
// The expected row counts and query counts are worked out here from the sweeps (8 heads, 32
// tokens), not read back from the tool.
import { cli, check, run, finish } from "./harness.mjs";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, mkdtempSync, rmSync, existsSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const model = path.join(root, "tests/fixtures/tiny-f32");
const modelFile = path.join(model, "model.safetensors");
const tmp = mkdtempSync(path.join(tmpdir(), "attnlab-experiment-"));

const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");
const HEADS = 2 * 4, TOKENS = 32;

// 32 ids below 96 from a fixed LCG (Numerical Recipes constants), high bits only.
const ids = [];
for (let s = 2025, i = 0; i < TOKENS; i++) {
  s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
  ids.push(Math.floor((s / 2 ** 32) * 96));
}
const idList = ids.join(",");

let dirCount = 0;
const freshDir = (name) => path.join(tmp, `${dirCount++}-${name}`);
const base = (out, ...extra) => ["--model", model, "--ids", idList, "--out", out, ...extra];

// --- CSV reading: header, rows of numbers -------------------------------------------------
const NUMBER = /^(nan|[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?)$/i;

// Returns { columns, rows (arrays of numbers, NaN for "nan"), problems }.
function readCsv(file) {
  const problems = [];
  if (!existsSync(file)) return { columns: [], rows: [], problems: [`${path.basename(file)} missing`] };
  const text = readFileSync(file, "utf8");
  if (!text.endsWith("\n")) problems.push("does not end with a newline");
  const lines = text.split("\n").slice(0, -1);
  const columns = (lines[0] ?? "").split(",");
  const rows = [];
  lines.slice(1).forEach((line, i) => {
    const fields = line.split(",");
    if (fields.length !== columns.length) problems.push(`row ${i + 1} has ${fields.length} fields, header ${columns.length}`);
    const bad = fields.find((f) => !NUMBER.test(f));
    if (bad !== undefined) problems.push(`row ${i + 1}: '${bad}' is not a number`);
    rows.push(fields.map((f) => (f.toLowerCase() === "nan" ? NaN : Number(f))));
  });
  return { columns, rows, problems: problems.slice(0, 5) };
}
const col = (t, name) => t.rows.map((r) => r[t.columns.indexOf(name)]);
const sameList = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

// Every (layer, head) pair of the model, each with the same sweep values, in head order.
function coversHeads(t, sweep, values) {
  const want = [];
  for (let layer = 0; layer < 2; layer++)
    for (let head = 0; head < 4; head++)
      for (const v of values) want.push(`${layer},${head},${v}`);
  const got = t.rows.map((r) => `${r[t.columns.indexOf("layer")]},${r[t.columns.indexOf("head")]},${r[t.columns.indexOf(sweep)]}`);
  return sameList(got, want);
}

const distanceColumns = ["layer", "head", "L", "N", "queries", "skipped"];
for (const f of ["d_A", "d_B", "bound_A", "bound_B", "expected_A", "expected_B", "approx_A", "abar"]) distanceColumns.push(`${f}_mean`, `${f}_sd`);
distanceColumns.push("expected_A_mc_se");
const columnsOf = {
  distance_vs_L: distanceColumns,
  distance_vs_N: distanceColumns,
  critical_n: ["L", "N_star", "found", "N_star_over_L", "D", "p_value", "exact"],
  critical_n_scan: ["L", "N", "D", "p_value", "exact", "rejected"],
  critical_n_heads: ["layer", "head", "L", "N", "queries", "d_A_mean", "expected_A_mean"],
  separability: ["layer", "head", "L", "N", "queries", "skipped", "ratio_mean", "ratio_sd", "N_s_mean", "N_s_sd", "r_mean", "r_sd",
                 "delta_mean", "delta_sd", "lower_mean", "lower_sd", "upper_mean", "upper_sd"],
  gradient: ["layer", "head", "T", "T_paper", "eps", "queries", "skipped", "g_mean", "g_sd", "jacobian_norm_mean", "jacobian_norm_max",
             "bound_paper", "bound_tight", "bound_g"],
  gradient_summary: ["T", "T_paper", "eps", "g_max_over_heads", "g_mean_over_heads", "jacobian_norm_max_over_heads",
                     "jacobian_norm_max_over_queries", "bound_paper", "bound_tight", "bound_g"],
};
const summaries = {
  "distance-vs-L": ["distance_vs_L.csv"],
  "distance-vs-N": ["distance_vs_N.csv"],
  "critical-n": ["critical_n.csv", "critical_n_scan.csv", "critical_n_heads.csv"],
  separability: ["separability.csv"],
  gradient: ["gradient.csv", "gradient_summary.csv"],
};

// --- experiment all, defaults ---------------------------------------------------------------
const allDir = freshDir("all");
const all = run(["experiment", "all", ...base(allDir, "--quiet")]);
check(all.code === 0 && all.signal === null, "experiment all --quiet exits 0", `exit ${all.code}, signal ${all.signal}, stderr: ${all.err.trim()}`);
{
  const want = [...Object.keys(columnsOf).map((t) => `${t}.csv`), ...Object.keys(summaries).map((e) => `${e}.json`)].sort();
  const got = existsSync(allDir) ? readdirSync(allDir).sort() : [];
  check(sameList(got, want), "the folder holds the 8 CSV tables and the 5 JSON summaries", `got ${got.join(" ")}`);
}
check(!/%|ETA/.test(all.err), "--quiet: no progress on stderr", all.err.slice(0, 200));

const tables = Object.fromEntries(Object.keys(columnsOf).map((t) => [t, readCsv(path.join(allDir, `${t}.csv`))]));
for (const [name, t] of Object.entries(tables)) {
  check(sameList(t.columns, columnsOf[name]), `${name}.csv: header`, `got ${t.columns.join(",")}`);
  check(t.problems.length === 0 && t.rows.length > 0, `${name}.csv: every row has the header's field count and numbers`, t.problems.join("; "));
}

// Defaults for 32 tokens: L in {32}, N = 5; N in {1, 5, 10, 20}; separability N = 1..31;
// 26 temperatures x 3 eps.
const seq = (a, b) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
{
  const t = tables.distance_vs_L;
  const L = col(t, "L"), N = col(t, "N"), q = col(t, "queries"), sk = col(t, "skipped");
  check(t.rows.length === HEADS * 1 && coversHeads(t, "L", [32]), "distance_vs_L: 8 heads x L in {32}", `${t.rows.length} rows`);
  check(t.rows.length > 0 && N.every((n) => n === 5) && q.every((x, i) => x === L[i] - 5) && sk.every((x) => x === 5),
        "distance_vs_L: N = 5, queries = L - N, skipped = N", `N ${N}, queries ${q}, skipped ${sk}`);
  check(t.rows.length > 0 && col(t, "d_A_mean").every((x) => x > 0 && Number.isFinite(x)), "distance_vs_L: d_A_mean finite and > 0");
}
{
  const t = tables.distance_vs_N;
  const N = col(t, "N"), q = col(t, "queries"), sk = col(t, "skipped");
  check(t.rows.length === HEADS * 4 && coversHeads(t, "N", [1, 5, 10, 20]), "distance_vs_N: 8 heads x N in {1, 5, 10, 20}", `${t.rows.length} rows`);
  check(t.rows.length > 0 && col(t, "L").every((x) => x === 32) && q.every((x, i) => x === 32 - N[i]) && sk.every((x, i) => x === N[i]),
        "distance_vs_N: L = 32, queries = 32 - N, skipped = N");
}
{
  const t = tables.separability;
  check(t.rows.length === HEADS * 31 && coversHeads(t, "N", seq(1, 31)), "separability: 8 heads x N = 1..31", `${t.rows.length} rows`);
  const ratio = col(t, "ratio_mean");
  check(ratio.length > 0 && ratio.every((x) => x >= 0 && x <= 1), "separability: ratio_mean in [0, 1]", `${ratio.filter((x) => !(x >= 0 && x <= 1)).slice(0, 3)}`);
}
{
  const t = tables.gradient;
  check(t.rows.length === HEADS * 26 * 3, "gradient: 8 heads x 26 temperatures x 3 eps", `${t.rows.length} rows`);
  const T = [...new Set(col(t, "T"))], eps = [...new Set(col(t, "eps"))];
  check(T.length === 26 && Math.abs(Math.min(...T) - 1e-3) < 1e-12 && Math.abs(Math.max(...T) - 100) < 1e-9 && sameList(eps, [1e-3, 0.1, 10]),
        "gradient: T from 1e-3 to 1e2 (26 values), eps {1e-3, 0.1, 10}", `T ${T.length} values, eps ${eps}`);
  check(tables.gradient_summary.rows.length === 26 * 3, "gradient_summary: 26 x 3 rows", `${tables.gradient_summary.rows.length} rows`);
}
{
  // critical_n's N* is the first scanned N for its L where the KS test did not reject.
  const c = tables.critical_n, scan = tables.critical_n_scan, heads = tables.critical_n_heads;
  check(sameList(col(c, "L"), [32]), "critical_n: one row, L = 32", `L ${col(c, "L")}`);
  const firstAccept = scan.rows.find((r) => r[scan.columns.indexOf("L")] === 32 && r[scan.columns.indexOf("rejected")] === 0);
  const nStar = col(c, "N_star")[0], found = col(c, "found")[0];
  check(found === 1 ? firstAccept && firstAccept[1] === nStar && col(c, "N_star_over_L")[0] === nStar / 32 : !firstAccept && Number.isNaN(nStar),
        "critical_n: N* is the first N the scan did not reject, N*/L matches", `N* ${nStar}, found ${found}, first accept ${firstAccept}`);
  check(scan.rows.length > 0 && heads.rows.length === HEADS * scan.rows.length, "critical_n_heads: 8 rows per scanned (L, N)",
        `${heads.rows.length} rows for ${scan.rows.length} scanned`);
  const p = col(scan, "p_value");
  check(p.length > 0 && p.every((x) => x >= 0 && x <= 1), "critical_n_scan: p-values in [0, 1]");
}

// --- JSON summaries ---------------------------------------------------------------------
const modelSha = sha256(readFileSync(modelFile));
const textSha = sha256(idList);  // --ids is hashed as given
// [used, skipped] worked out from the sweeps: a query at position t (0-based) sees t + 1
// tokens and is skipped for N when t < N.
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const expectedQueries = {
  "distance-vs-L": [HEADS * (32 - 5), HEADS * 5],
  "distance-vs-N": [HEADS * sum([1, 5, 10, 20].map((n) => 32 - n)), HEADS * (1 + 5 + 10 + 20)],
  separability: [HEADS * sum(seq(1, 31).map((n) => 32 - n)), HEADS * sum(seq(1, 31))],
  gradient: [HEADS * 31, HEADS],
};
const summaryJson = {};
for (const [name, files] of Object.entries(summaries)) {
  let s = null, problem = "";
  try { s = JSON.parse(readFileSync(path.join(allDir, `${name}.json`), "utf8")); } catch (e) { problem = e.message; }
  summaryJson[name] = s;
  if (!s) { check(false, `${name}.json parses`, problem); continue; }
  const problems = [];
  if (s.experiment !== name) problems.push(`experiment ${s.experiment}`);
  if (!s.parameters || typeof s.parameters !== "object") problems.push("parameters missing");
  const m = s.model ?? {};
  if (m.sha256 !== modelSha) problems.push(`model.sha256 ${m.sha256}, want ${modelSha}`);
  if (m.n_layer !== 2 || m.n_head !== 4) problems.push(`model n_layer ${m.n_layer} n_head ${m.n_head}`);
  if (typeof m.path !== "string" || !existsSync(m.path) || sha256(readFileSync(m.path)) !== modelSha) problems.push(`model.path ${m.path}`);
  const t = s.text ?? {};
  if (t.sha256 !== textSha) problems.push(`text.sha256 ${t.sha256}, want ${textSha} (SHA-256 of the --ids string)`);
  if (t.tokens !== 32 || t.tokens_used !== 32) problems.push(`text tokens ${t.tokens} tokens_used ${t.tokens_used}`);
  const q = s.queries ?? {};
  if (!Number.isInteger(q.used) || !Number.isInteger(q.skipped) || q.used < 0 || q.skipped < 0) problems.push(`queries ${JSON.stringify(q)}`);
  const want = expectedQueries[name];
  if (want && (q.used !== want[0] || q.skipped !== want[1])) problems.push(`queries used ${q.used} skipped ${q.skipped}, want ${want}`);
  if (!Array.isArray(s.notes) || s.notes.length === 0 || !s.notes.every((n) => typeof n === "string" && n.length)) problems.push("notes");
  if (!s.timing || typeof s.timing !== "object" || !(s.timing.experiment_seconds >= 0)) problems.push(`timing ${JSON.stringify(s.timing)}`);
  if (!Array.isArray(s.tables) || !sameList([...s.tables].sort(), [...files].sort()) || !s.tables.every((f) => existsSync(path.join(allDir, f))))
    problems.push(`tables ${JSON.stringify(s.tables)}, want ${files}`);
  check(problems.length === 0, `${name}.json: experiment, parameters, model, text, queries, notes, timing, tables`, problems.join("; "));
}
{
  const p = summaryJson["distance-vs-N"]?.parameters ?? {}, pL = summaryJson["distance-vs-L"]?.parameters ?? {};
  check(sameList(p.Ns ?? [], [1, 5, 10, 20]) && pL.N === 5 && sameList(pL.Ls ?? [], [32]) && p.seed === 0 && p.vectors === "values",
        "parameters record the sweeps actually run", `distance-vs-N ${JSON.stringify(p)}, distance-vs-L ${JSON.stringify(pL)}`);
}

// --- determinism: thread count, seed ----------------------------------------------------------
// The help promises that results do not depend on --threads; the seed drives only the Monte
// Carlo draws. So the CSVs must not change with the thread count, with whether --threads or
// --seed 0 (the default) is given at all, or from one run to the next.
const csvNames = Object.keys(columnsOf).map((t) => `${t}.csv`);
const differingCsvs = (a, b) => csvNames.filter((f) => !existsSync(path.join(a, f)) || !existsSync(path.join(b, f)) ||
                                                   !readFileSync(path.join(a, f)).equals(readFileSync(path.join(b, f))));
{
  const one = freshDir("threads1"), two = freshDir("threads2");
  const a = run(["experiment", "all", ...base(one, "--quiet", "--threads", "1")]);
  const b = run(["experiment", "all", ...base(two, "--quiet", "--threads", "2")]);
  const differ = differingCsvs(one, two);
  check(a.code === 0 && b.code === 0 && differ.length === 0, "--threads 1 and --threads 2 give byte-identical CSVs",
        `exit ${a.code}/${b.code}, differ: ${differ.join(" ")} ${a.err.trim()} ${b.err.trim()}`);
  const threads = [one, two].map((d) => { try { return JSON.parse(readFileSync(path.join(d, "gradient.json"), "utf8")).timing.threads; } catch { return null; } });
  check(threads[0] === 1 && threads[1] === 2, "timing.threads records --threads", `got ${threads}`);
  const differDefault = differingCsvs(allDir, one);
  check(differDefault.length === 0, "no --threads (all cores) and --threads 1 give byte-identical CSVs", `differ: ${differDefault.join(" ")}`);

  const again = freshDir("again");
  const c = run(["experiment", "all", ...base(again, "--quiet")]);
  const differAgain = differingCsvs(allDir, again);
  check(c.code === 0 && differAgain.length === 0, "the same command twice gives byte-identical CSVs", `differ: ${differAgain.join(" ")}`);
  const seed0 = freshDir("seed0");
  const d = run(["experiment", "all", ...base(seed0, "--quiet", "--seed", "0")]);
  const differSeed0 = differingCsvs(allDir, seed0);
  check(d.code === 0 && differSeed0.length === 0, "--seed 0 (the default) gives the CSVs of no --seed", `differ: ${differSeed0.join(" ")}`);
}
{
  // 31 tokens: the attention blocks of the forward pass are not a multiple of 16 floats, so
  // per-thread scratch buffers differ in alignment (a case the 32-token runs above miss).
  const short = ["--model", model, "--ids", ids.slice(0, 31).join(","), "--Ls", "31", "--quiet"];
  const dirs = [["1", freshDir("t31")], ...seq(1, 6).map(() => ["2", freshDir("t31")])];
  const codes = dirs.map(([t, d]) => run(["experiment", "distance-vs-L", ...short, "--out", d, "--threads", t]).code);
  const text = ([, d]) => (existsSync(path.join(d, "distance_vs_L.csv")) ? readFileSync(path.join(d, "distance_vs_L.csv"), "utf8") : null);
  const same = dirs.slice(1).map((d) => text(d) !== null && text(d) === text(dirs[0]));
  check(codes.every((c) => c === 0) && same.every(Boolean), "31 tokens: --threads 1 and six runs with --threads 2 give the same distance_vs_L.csv",
        `exit ${codes}, identical to --threads 1: ${same}`);
}
{
  // Same argument lengths (--seed 7 vs --seed 0), so that only the seed differs.
  const zero = freshDir("seedA"), seven = freshDir("seedB");
  const a = run(["experiment", "distance-vs-L", ...base(zero, "--quiet", "--seed", "0")]);
  const b = run(["experiment", "distance-vs-L", ...base(seven, "--quiet", "--seed", "7")]);
  const t0 = readCsv(path.join(zero, "distance_vs_L.csv")), t7 = readCsv(path.join(seven, "distance_vs_L.csv"));
  const ok = a.code === 0 && b.code === 0 && t7.rows.length === t0.rows.length && t0.rows.length > 0;
  check(ok && col(t7, "expected_A_mean").every((x, i) => x !== col(t0, "expected_A_mean")[i]), "--seed 7 changes expected_A_mean (every head)",
        `exit ${a.code}/${b.code} ${b.err.trim()}`);
  check(ok && sameList(col(t7, "d_A_mean"), col(t0, "d_A_mean")), "--seed 7 leaves d_A_mean unchanged",
        `${col(t7, "d_A_mean")} vs ${col(t0, "d_A_mean")}`);
}

// --- progress ---------------------------------------------------------------------------
{
  const r = run(["experiment", "gradient", ...base(freshDir("progress"))]);
  const lines = r.err.split(/[\r\n]/).filter((l) => /\d+%/.test(l) && /ETA/.test(l));
  check(r.code === 0 && lines.length > 0 && lines.some((l) => /100%/.test(l)), "without --quiet: progress lines with a percentage and ETA, up to 100%",
        `exit ${r.code}, stderr: ${r.err.slice(0, 300)}`);
}

// --- options ----------------------------------------------------------------------------
{
  const residual = freshDir("residual");
  const r = run(["experiment", "distance-vs-L", ...base(residual, "--quiet", "--vectors", "residual")]);
  const t = readCsv(path.join(residual, "distance_vs_L.csv"));
  const d = col(t, "d_A_mean"), d0 = col(tables.distance_vs_L, "d_A_mean");
  check(r.code === 0 && d.length > 0 && d.length === d0.length && d.every((x) => Number.isFinite(x)) && d.every((x, i) => x !== d0[i]),
        "--vectors residual runs and gives other d_A_mean than the values", `exit ${r.code} ${r.err.trim()} ${d} vs ${d0}`);
  let vectors = null;
  try { vectors = JSON.parse(readFileSync(path.join(residual, "distance-vs-L.json"), "utf8")).parameters.vectors; } catch { /* reported below */ }
  check(vectors === "residual", "--vectors residual is recorded in the parameters", `got ${vectors}`);
}
{
  const sweep = freshDir("sweep");
  const r = run(["experiment", "all", ...base(sweep, "--quiet", "--Ls", "8,16", "--N", "3")]);
  const t = readCsv(path.join(sweep, "distance_vs_L.csv"));
  check(r.code === 0 && t.rows.length === HEADS * 2 && coversHeads(t, "L", [8, 16]) && col(t, "N").every((n) => n === 3) &&
        col(t, "queries").every((q, i) => q === col(t, "L")[i] - 3),
        "--Ls 8,16 --N 3: distance_vs_L has L in {8, 16}, N = 3, queries = L - 3", `exit ${r.code} ${r.err.trim()}, ${t.rows.length} rows, L ${col(t, "L")}`);
  const c = readCsv(path.join(sweep, "critical_n.csv"));
  check(sameList(col(c, "L"), [8, 16]), "--Ls 8,16: critical_n has L in {8, 16}", `L ${col(c, "L")}`);
}

// --- bad input: exit 1 or 2, the first stderr line names the problem, no signal, nothing on
// disk that claims success (no JSON summary) -------------------------------------------------
const existingFile = path.join(tmp, "a-file");
writeFileSync(existingFile, "not a folder\n");
const out = () => freshDir("bad");
const bad = [
  // [arguments, first stderr line must match, what]
  [() => ["experiment"], /name the experiment/, "no NAME"],
  [() => ["experiment", "frobnicate", ...base(out())], /frobnicate/, "an unknown NAME"],
  [() => ["experiment", "all", "--ids", idList, "--out", out()], /--model.*required/, "no --model"],
  [() => ["experiment", "all", "--model", model, "--ids", idList], /--out.*required/, "no --out"],
  [() => ["experiment", "all", ...base(out(), "--text", path.join(root, "README.md"))], /--text.*--ids/, "both --text and --ids"],
  [() => ["experiment", "all", "--model", model, "--out", out()], /--text.*--ids/, "neither --text nor --ids"],
  [() => ["experiment", "all", "--model", model, "--ids", [...ids.slice(0, 31), 96].join(","), "--out", out()], /--ids.*96|96.*vocabulary/, "an id >= 96"],
  [() => ["experiment", "all", ...base(out(), "--N", "0")], /--N\b/, "--N 0"],
  [() => ["experiment", "all", ...base(out(), "--N", "32")], /--N\b.*31|--N\b.*32/, "--N 32 (>= tokens)"],
  [() => ["experiment", "all", ...base(out(), "--Ls", "64")], /--Ls.*64/, "--Ls 64 (> tokens)"],
  [() => ["experiment", "all", ...base(out(), "--samples", "0")], /--samples/, "--samples 0"],
  [() => ["experiment", "all", ...base(out(), "--temperatures", "0")], /--temperatures/, "--temperatures 0"],
  [() => ["experiment", "all", ...base(out(), "--temperatures", "abc")], /--temperatures.*abc/, "--temperatures abc"],
  [() => ["experiment", "all", ...base(out(), "--eps", "-1")], /--eps/, "--eps -1"],
  [() => ["experiment", "all", ...base(out(), "--vectors", "foo")], /--vectors.*foo/, "--vectors foo"],
  [() => ["experiment", "all", ...base(out(), "--threads", "0")], /--threads/, "--threads 0"],
  [() => ["experiment", "all", ...base(out(), "--bogus", "1")], /--bogus/, "an unknown option"],
  [() => ["experiment", "all", "--model", path.join(tmp, "no-such-model.safetensors"), "--ids", idList, "--out", out()],
   /no-such-model/, "a model that does not exist"],
  [() => ["experiment", "all", "--model", model, "--text", path.join(tmp, "no-such-text.txt"), "--out", out()], /no-such-text/,
   "a text file that does not exist"],
  [() => ["experiment", "all", ...base(existingFile)], /a-file/, "--out is an existing regular file"],
  // Not in the brief: a sweep that fits the text but not N (L must exceed N), and too few tokens.
  [() => ["experiment", "all", ...base(out(), "--Ls", "4", "--N", "5")], /\bL\b|--Ls/, "--Ls 4 with --N 5 (L <= N)"],
  [() => ["experiment", "all", "--model", model, "--ids", "7", "--out", out()], /at least 2|tokens/, "a one-token text"],
];
for (const [argsOf, fragment, what] of bad) {
  const before = dirCount;
  const args = argsOf();
  const dirs = seq(before, dirCount - 1).map((i) => path.join(tmp, `${i}-bad`));
  const r = run(args);
  const first = r.err.split("\n")[0];
  const written = dirs.filter(existsSync).flatMap((d) => readdirSync(d).filter((f) => f.endsWith(".json")));
  check((r.code === 1 || r.code === 2) && r.signal === null && fragment.test(first) && written.length === 0 && !/\.json/.test(r.out),
        `${what}: exit 1 or 2, stderr names it, no summary written`,
        `exit ${r.code}, signal ${r.signal}, written ${written}, stdout ${JSON.stringify(r.out.slice(0, 120))}, stderr: ${first}`);
}
check(readFileSync(existingFile, "utf8") === "not a folder\n" && statSync(existingFile).isFile(), "--out at a file leaves the file alone");

// --- help ---------------------------------------------------------------------------------
{
  const r = run(["experiment", "--help"]);
  const names = ["distance-vs-L", "distance-vs-N", "critical-n", "separability", "gradient"];
  check(r.code === 0 && names.every((n) => r.out.includes(n)), "experiment --help exits 0 and lists the five experiments",
        `exit ${r.code}, missing ${names.filter((n) => !r.out.includes(n))}`);
}

rmSync(tmp, { recursive: true });
finish("experiment");
