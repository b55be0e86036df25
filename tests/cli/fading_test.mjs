// `attnlab experiment fading`, checked from outside on the tiny fixture model (2 layers x 4 heads,
// 32 positions, vocabulary 96). The expected numbers are worked out here, in double, from weights
// the new code does not compute: the numpy reference's (tests/fixtures/tiny-f32/expected.json, made
// by tests/reference/make_gpt2_fixtures.py) and `attnlab attention --json`'s, row L-1 of a pass
// over each window. Also: a head with all-equal logits (its query weights zeroed in a copy of the
// checkpoint) gives 1/L exactly, the needle probe's pair, weight and rank, and bad input.
//
//   node tests/cli/fading_test.mjs PATH/TO/attnlab
import { check, run, finish } from "./harness.mjs";
import { readFileSync, writeFileSync, mkdtempSync, rmSync, existsSync, copyFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const model = path.join(root, "tests/fixtures/tiny-f32");
const reference = JSON.parse(readFileSync(path.join(model, "expected.json"), "utf8"));
const tmp = mkdtempSync(path.join(tmpdir(), "attnlab-fading-"));
const LAYERS = 2, HEADS = 4, CONTEXT = 32;
const ok = (r) => r.code === 0 && r.signal === null;
const parse = (text) => { try { return JSON.parse(text); } catch { return null; } };

// 40 ids below 96 from a fixed LCG (Numerical Recipes constants), high bits only: longer than the
// context, so that two windows start at different offsets (0 and 8).
const ids = [];
for (let s = 29, i = 0; i < 40; i++) {
  s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
  ids.push(Math.floor((s / 2 ** 32) * 96));
}

let dirs = 0;
const fading = (modelPath, idList, ...extra) => {
  const out = path.join(tmp, `run-${dirs++}`);
  const r = run(["experiment", "fading", "--model", modelPath, "--ids", idList.join(","), "--out", out, "--quiet", ...extra]);
  const csv = existsSync(path.join(out, "fading.csv")) ? readFileSync(path.join(out, "fading.csv"), "utf8") : "";
  return { r, out, rows: table(csv), json: parse(existsSync(path.join(out, "fading.json")) ? readFileSync(path.join(out, "fading.json"), "utf8") : "") };
};
// CSV text -> array of {column: number} (NaN for "nan").
function table(text) {
  const lines = text.trim().split("\n");
  const columns = lines[0].split(",");
  return lines.slice(1).map((line) => Object.fromEntries(line.split(",").map((f, i) => [columns[i], f === "nan" ? NaN : Number(f)])));
}
const cell = (rows, L, layer, head) => rows.find((r) => r.L === L && r.layer === layer && r.head === head);

// --- the three quantities of one query row, in double, from their definitions ---------------------
function stats(row, L) {
  const w = row.slice(0, L);
  return { max: Math.max(...w), entropy: -w.reduce((s, x) => s + (x > 0 ? x * Math.log(x) : 0), 0), previous: w[L - 2] };
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const weightsOf = (idList, layer, head, extra = []) =>
  parse(run(["attention", "--model", model, "--ids", idList.join(","), "--layer", String(layer), "--head", String(head), "--json", ...extra]).out)?.weights;

// --- against the numpy reference: 12 tokens, one window, L = 8 ------------------------------------
{
  const { r, rows } = fading(model, reference.tokens, "--max-L", "8", "--windows", "1");
  check(ok(r), "fading on the numpy reference's 12 tokens exits 0", r.err);
  let err = 0;
  for (let l = 0; l < LAYERS; l++)
    for (let h = 0; h < HEADS; h++) {
      const want = stats(reference.attention[l][h][7], 8), got = cell(rows, 8, l, h);
      err = Math.max(err, got ? Math.max(Math.abs(got.max_weight_mean - want.max), Math.abs(got.entropy_mean - want.entropy),
                                         Math.abs(got.previous_weight_mean - want.previous)) : Infinity);
    }
  check(err < 2e-5, "L = 8, every head: largest weight, entropy and previous-token weight of the numpy reference's row 7", `largest error ${err}`);
}

// --- against `attnlab attention --json`, two windows, under two plans ------------------------------
for (const plan of [[], ["--attention", "all=ssmax:0.43"]]) {
  const name = plan.length ? "all=ssmax:0.43" : "the trained plan";
  const { r, rows, json } = fading(model, ids, "--windows", "2", ...plan);
  check(ok(r) && rows.length === 4 * LAYERS * HEADS, `${name}: a row per L (8, 16, 24, 32), layer and head`, r.err);
  check(json?.parameters?.windows === 2 && JSON.stringify(json.parameters.window_offsets) === "[0,8]" && rows.every((x) => x.queries === 2),
        `${name}: two windows, at offsets 0 and 8 of the 40 tokens, one query each per row`, JSON.stringify(json?.parameters));
  let err = 0;
  for (let l = 0; l < LAYERS; l++)
    for (let h = 0; h < HEADS; h++) {
      const windows = [0, 8].map((o) => weightsOf(ids.slice(o, o + CONTEXT), l, h, plan));
      for (const L of [8, 16, 24, 32]) {
        const per = windows.map((w) => stats(w[L - 1], L)), got = cell(rows, L, l, h);
        const want = { max: mean(per.map((s) => s.max)), entropy: mean(per.map((s) => s.entropy)), previous: mean(per.map((s) => s.previous)) };
        err = Math.max(err, got ? Math.max(Math.abs(got.max_weight_mean - want.max), Math.abs(got.entropy_mean - want.entropy),
                                           Math.abs(got.previous_weight_mean - want.previous)) : Infinity);
      }
    }
  check(err < 2e-5, `${name}: every (L, head) is the mean over the windows of row L-1 of attention --json`, `largest error ${err}`);
  check(rows.every((x) => x.uniform_weight === 1 / x.L && Math.abs(x.uniform_entropy - Math.log(x.L)) < 1e-15),
        `${name}: uniform_weight = 1/L and uniform_entropy = ln L`);
  if (plan.length) {
    check(json?.parameters?.zero_shot_swap === true && json.parameters.attention === "all=ssmax:0.43" &&
          rows.every((x) => x.softmax_head === 0 && Number.isNaN(x.lemma1_upper_mean)),
          "all=ssmax:0.43 is labelled a zero-shot swap, and has no Lemma 1 band (SSMax depends on L)", JSON.stringify(json?.parameters));
  } else {
    check(json?.parameters?.zero_shot_swap === false && rows.every((x) => x.softmax_head === 1 &&
          x.lemma1_lower_mean <= x.uniform_weight && x.max_weight_mean <= x.lemma1_upper_mean + 1e-7 && x.lemma1_upper_mean <= 1),
          "softmax: Lemma 1's band holds the largest weight, its upper end capped at 1, its lower end under 1/L");
  }
}

// --- a head with all-equal logits: layer 0's query weights and biases zeroed in a copy --------------
{
  const dir = path.join(tmp, "flat");
  mkdirSync(dir);
  copyFileSync(path.join(model, "config.json"), path.join(dir, "config.json"));
  const bytes = readFileSync(path.join(model, "model.safetensors"));
  const headerLength = Number(bytes.readBigUInt64LE(0)), header = JSON.parse(bytes.subarray(8, 8 + headerLength).toString("utf8"));
  const data = 8 + headerLength, C = 32;
  const zero = (name, isQuery) => {
    const [begin] = header[name].data_offsets, shape = header[name].shape;
    const rowsN = shape.length === 2 ? shape[0] : 1, cols = shape[shape.length - 1];
    for (let i = 0; i < rowsN; i++) for (let j = 0; j < cols; j++) if (isQuery(j)) bytes.writeFloatLE(0, data + begin + 4 * (i * cols + j));
  };
  zero("h.0.attn.c_attn.weight", (j) => j < C);  // q is the first C of the 3C columns
  zero("h.0.attn.c_attn.bias", (j) => j < C);
  writeFileSync(path.join(dir, "model.safetensors"), bytes);
  const { r, rows } = fading(dir, ids, "--windows", "2");
  const layer0 = rows.filter((x) => x.layer === 0);
  check(ok(r) && layer0.length === 4 * HEADS, "fading on the copy with layer 0's queries zeroed exits 0", r.err);
  check(layer0.every((x) => Math.abs(x.max_weight_mean - 1 / x.L) < 1e-7 && Math.abs(x.previous_weight_mean - 1 / x.L) < 1e-7),
        "all-equal logits: the largest weight and the previous-token weight are 1/L",
        JSON.stringify(layer0.map((x) => [x.L, x.max_weight_mean])));
  check(layer0.every((x) => Math.abs(x.entropy_mean - Math.log(x.L)) < 1e-5 && x.lemma1_lower_mean === 1 / x.L && x.lemma1_upper_mean === 1 / x.L),
        "all-equal logits: the entropy is ln L and Lemma 1's band (a = 0) is exactly 1/L");
  check(rows.filter((x) => x.layer === 1).some((x) => Math.abs(x.max_weight_mean - 1 / x.L) > 1e-3), "layer 1, left alone, does not fade to 1/L");
}

// --- the needle probe -------------------------------------------------------------------------------
{
  const { r, out, json } = fading(model, ids, "--windows", "1", "--needle");
  check(ok(r) && existsSync(path.join(out, "needle.csv")), "--needle writes needle.csv", r.err);
  // The pair worked out here: the first id that occurs once, and the id after it; the filler is the
  // text without either.
  const count = new Map();
  ids.forEach((x) => count.set(x, (count.get(x) ?? 0) + 1));
  const at = ids.findIndex((x, i) => count.get(x) === 1 && i + 1 < ids.length);
  const A = ids[at], B = ids[at + 1], filler = ids.filter((x) => x !== A && x !== B);
  check(json?.needle?.a === A && json.needle.b === B && json.needle.filler_tokens === filler.length,
        `the pair is (${A}, ${B}), from text position ${at}; the filler has ${filler.length} tokens`, JSON.stringify(json?.needle)?.slice(0, 200));
  const rows = existsSync(path.join(out, "needle.csv")) ? table(readFileSync(path.join(out, "needle.csv"), "utf8")) : [];
  let err = 0, rankErr = 0;
  for (const L of [8, 16]) {
    const sequence = [filler[0], A, B, ...filler.slice(1, L - 3), A];
    for (let l = 0; l < LAYERS; l++)
      for (let h = 0; h < HEADS; h++) {
        const row = weightsOf(sequence, l, h)?.[L - 1] ?? [], got = cell(rows, L, l, h);
        const rank = 1 + row.slice(0, L).filter((x) => x > row[2]).length;
        err = Math.max(err, got ? Math.abs(got.needle_weight_mean - row[2]) : Infinity);
        rankErr = Math.max(rankErr, got ? Math.abs(got.needle_rank_mean - rank) : Infinity);
      }
  }
  check(err < 2e-5 && rankErr === 0, "needle, L = 8 and 16: each head's weight on B and B's rank, from attention --json on [f0, A, B, f1.., A]",
        `weight error ${err}, rank error ${rankErr}`);
  const same = run(["experiment", "fading", "--model", model, "--ids", ids.join(","), "--out", path.join(tmp, "json"), "--windows", "1",
                    "--needle", "--json", "--quiet"]);
  check(ok(same) && parse(same.out)?.needle?.a === A && same.out === readFileSync(path.join(tmp, "json", "fading.json"), "utf8"),
        "--json prints fading.json to stdout");
}

// --- bad input: a clear message and a non-zero exit -----------------------------------------------------
const bad = [
  [["--max-L", "4"], 2, "--max-L"],
  [["--max-L", "64"], 2, "--max-L"],
  [["--windows", "0"], 2, "--windows"],
  [["--attention", "all=bogus"], 2, "--attention"],
  [["--frobnicate"], 2, "frobnicate"],
];
for (const [extra, code, word] of bad) {
  const r = run(["experiment", "fading", "--model", model, "--ids", ids.join(","), "--out", path.join(tmp, "bad"), ...extra]);
  check(r.code === code && r.signal === null && r.err.includes(word), `${extra.join(" ")}: exit ${code}, the message names ${word}`,
        `exit ${r.code}: ${r.err.trim()}`);
}
{
  const r = run(["experiment", "fading", "--model", model, "--ids", "1,2,3,4,5", "--out", path.join(tmp, "short")]);
  check(r.code === 1 && r.err.includes("5 token(s)") && r.err.includes("at least 8"), "5 tokens: exit 1, the message says 8 are needed", r.err);
  const none = run(["experiment", "fading", "--model", model, "--ids", Array(20).fill(7).join(","), "--out", path.join(tmp, "same"), "--needle"]);
  check(none.code === 1 && none.err.includes("--needle: no token"), "--needle on a text of one repeated token: exit 1, no pair", none.err);
  const noOut = run(["experiment", "fading", "--model", model, "--ids", ids.join(",")]);
  check(noOut.code === 2 && noOut.err.includes("--out is required"), "no --out: exit 2", noOut.err);
  const missing = run(["experiment", "fading", "--model", path.join(tmp, "nowhere"), "--ids", ids.join(","), "--out", path.join(tmp, "m")]);
  check(missing.code === 1 && missing.err.includes("nowhere"), "a missing model: exit 1, the message names it", missing.err);
}

rmSync(tmp, { recursive: true, force: true });
finish("fading_test");
