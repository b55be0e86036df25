// The CLI's attention plans (issue 26), checked from outside on the tiny fixture model (2 layers x
// 4 heads, 32 positions, vocabulary 96): --attention on logits, attention, generate, experiment
// and perplexity; bad specs; the perplexity command against the numpy reference's logits and
// against the CLI's own logits of every position; experiment normalizer-swap's files.
//
//   node tests/cli/attention_plan_test.mjs PATH/TO/attnlab
//
// Where the expected weights are worked out here, they use that every normalizer of the plans is
// unchanged by adding a constant to a row of scores: so the log of a head's softmax weights (the
// default plan) stands in for its scores, and the layers before a swapped one see the same scores.
import { cli, check, run, finish } from "./harness.mjs";
import { readFileSync, writeFileSync, mkdtempSync, rmSync, existsSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const model = path.join(root, "tests/fixtures/tiny-f32");
const reference = JSON.parse(readFileSync(path.join(model, "expected.json"), "utf8"));
const tmp = mkdtempSync(path.join(tmpdir(), "attnlab-plan-"));
const parse = (r) => { try { return JSON.parse(r.out); } catch { return null; } };
const ok = (r) => r.code === 0 && r.signal === null;

// 32 ids below 96 from a fixed LCG (Numerical Recipes constants), high bits only.
const ids = [];
for (let s = 7, i = 0; i < 32; i++) {
  s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
  ids.push(Math.floor((s / 2 ** 32) * 96));
}
const idList = ids.join(",");
const short = ids.slice(0, 12).join(",");

// --- the normalizers, in double, written out from their definitions (PAPER.md §7) -----------------
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
function softmax(z, T = 1) {
  const m = Math.max(...z);
  const e = z.map((x) => Math.exp((x - m) / T));
  const s = sum(e);
  return e.map((x) => x / s);
}
// sparsemax: the Euclidean projection onto the simplex, max(z - tau, 0) with the threshold from
// the sorted scores (Martins & Astudillo 2016).
function sparsemax(z) {
  const sorted = [...z].sort((a, b) => b - a);
  let cumulative = 0, k = 0, kSum = 0;
  sorted.forEach((x, i) => {
    cumulative += x;
    if (1 + (i + 1) * x > cumulative) { k = i + 1; kSum = cumulative; }
  });
  const tau = (kSum - 1) / k;
  return z.map((x) => Math.max(x - tau, 0));
}
// SSMax: softmax(s ln(n) z) over the n keys the query sees.
const ssmax = (z, s) => softmax(z.map((x) => s * Math.log(z.length) * x));

const maxAbsDiff = (a, b) => (a.length === b.length ? Math.max(0, ...a.map((x, i) => Math.abs(x - b[i]))) : Infinity);
const logSumExp = (row) => { const m = Math.max(...row); return m + Math.log(sum(row.map((x) => Math.exp(x - m)))); };
const argmax = (row) => row.indexOf(Math.max(...row));
// exp(mean over t = 0..n-2 of -ln softmax(logits[t])[tokens[t + 1]]), in double.
function perplexityOf(logits, tokens) {
  let total = 0;
  for (let t = 0; t + 1 < tokens.length; t++) total += logSumExp(logits[t]) - logits[t][tokens[t + 1]];
  return Math.exp(total / (tokens.length - 1));
}

// --- logits --------------------------------------------------------------------------------------
const logitsOf = (...extra) => parse(run(["logits", "--model", model, "--ids", short, "--json", ...extra]))?.logits ?? null;
{
  const plain = logitsOf(), control = logitsOf("--attention", "all=softmax@1"), swapped = logitsOf("--attention", "all=sparsemax");
  check(plain && control && plain.every((x, i) => x === control[i]), "logits --attention all=softmax@1: the same bits as no plan");
  check(swapped && swapped.length === 96 && maxAbsDiff(swapped, plain) > 1e-3, "logits --attention all=sparsemax: other logits",
        `largest difference ${swapped && maxAbsDiff(swapped, plain)}`);
  const later = logitsOf("--attention", "all=sparsemax,all=softmax");
  check(later && later.every((x, i) => x === plain[i]), "later items override earlier ones: all=sparsemax,all=softmax is the default");
  const all = parse(run(["logits", "--model", model, "--ids", short, "--json", "--all-positions", "--attention", "all=sparsemax"]))?.logits;
  // The last row comes from a 12-row product, the plain output from a 1-row one (another kernel):
  // equal to fp32 rounding, not bit for bit.
  check(all && all.length === 12 && all.every((row) => row.length === 96) && maxAbsDiff(all[11], swapped) < 1e-4,
        "logits --all-positions: 12 rows of 96, the last one the last position's", `difference ${all && maxAbsDiff(all[11], swapped)}`);
}

// --- attention: the weights under the plan -----------------------------------------------------------
const weightsOf = (layer, head, ...extra) =>
  parse(run(["attention", "--model", model, "--ids", short, "--layer", String(layer), "--head", String(head), "--json", ...extra]))?.weights ?? null;
{
  // Layer 1 head 2 swapped alone: layer 0 runs as before, so layer 1's scores are as before, and
  // the log of its default softmax weights stands in for them (row by row, up to a constant).
  const base = weightsOf(1, 2);
  const cases = [
    ["1.2=sparsemax", (z) => sparsemax(z)],
    ["1.2=ssmax:0.43", (z) => ssmax(z, 0.43)],
    ["1.2=softmax@0.5", (z) => softmax(z, 0.5)],
    ["1.*=ssmax:1@2", (z) => ssmax(z.map((x) => x / 2), 1)],
  ];
  for (const [spec, normalizer] of cases) {
    const got = weightsOf(1, 2, "--attention", spec);
    let err = Infinity;
    if (base && got && got.length === 12) {
      err = 0;
      got.forEach((row, i) => {
        const z = base[i].slice(0, i + 1).map(Math.log);
        err = Math.max(err, maxAbsDiff(row, [...normalizer(z), ...Array(11 - i).fill(0)]));
      });
    }
    check(err < 2e-5, `attention --attention ${spec}: layer 1 head 2's weights are the normalizer of its scores`, `largest error ${err}`);
  }
  const sparse = weightsOf(1, 2, "--attention", "1.2=sparsemax");
  check(sparse && sparse.some((row, i) => row.slice(0, i + 1).some((x) => x === 0)), "sparsemax gives exact zeros among the visible keys");
  const alone = weightsOf(1, 2, "--attention", "1.*=sparsemax"), everywhere = weightsOf(1, 2, "--attention", "all=sparsemax");
  check(alone && everywhere && maxAbsDiff(alone.flat(), everywhere.flat()) > 1e-4,
        "attention: with layer 0 swapped too, layer 1's weights change (the later layers see the swap)");
  const head0 = weightsOf(1, 0, "--attention", "1.2=sparsemax"), head0base = weightsOf(1, 0);
  check(head0 && head0base && maxAbsDiff(head0.flat(), head0base.flat()) === 0, "attention: a head the plan leaves alone keeps its weights");
}

// --- generate: prefill and KV-cache decoding under the plan ------------------------------------------
{
  const spec = "all=entmax-1.5,1.3=ssmax:0.3";
  const g = parse(run(["generate", "--model", model, "--ids", short, "-n", "3", "--json", "--attention", spec]));
  const steps = [];
  let prefix = ids.slice(0, 12);
  for (let i = 0; i < 3; i++) {
    const l = parse(run(["logits", "--model", model, "--ids", prefix.join(","), "--json", "--attention", spec]))?.logits;
    steps.push(l ? argmax(l) : -1);
    prefix = [...prefix, steps[i]];
  }
  check(g && JSON.stringify(g.ids) === JSON.stringify(steps), "generate --attention: greedy decoding follows logits' argmax under the plan at every step",
        `generate ${JSON.stringify(g?.ids)}, logits ${JSON.stringify(steps)}`);
}

// --- perplexity ------------------------------------------------------------------------------
const perplexityJson = (...args) => { const r = run(["perplexity", "--model", model, "--json", ...args]); return { r, j: parse(r) }; };
{
  // The default plan against the numpy reference's logits at every position.
  const tokens = reference.tokens;
  const { r, j } = perplexityJson("--ids", tokens.join(","));
  const want = perplexityOf(reference.logits, tokens);
  check(ok(r) && j && j.tokens === tokens.length - 1, `perplexity --json: tokens = input length - 1 = ${tokens.length - 1}`, r.err + r.out);
  check(j && Math.abs(j.perplexity - want) / want < 1e-4, "perplexity of the default plan: exp(mean nll) of the numpy reference's logits",
        `got ${j?.perplexity}, numpy ${want}`);
  check(j && Math.abs(j.perplexity - Math.exp(j.mean_nll)) <= 1e-12 * j.perplexity, "perplexity = exp(mean_nll)");
  check(j && j.cut === 0 && j.text_tokens === tokens.length && j.attention === "", "perplexity --json: no cut, the default plan", r.out);
}
for (const spec of ["", "all=sparsemax", "0.*=ssmax:0.43,1.1=sa-softmax", "all=softmax@2"]) {
  // exp(mean nll) from the logits `logits --all-positions` prints, in double here.
  const extra = spec ? ["--attention", spec] : [];
  const { r, j } = perplexityJson("--ids", idList, ...extra);
  const all = parse(run(["logits", "--model", model, "--ids", idList, "--json", "--all-positions", ...extra]))?.logits;
  const want = all ? perplexityOf(all, ids) : NaN;
  check(ok(r) && j && j.tokens === 31 && Math.abs(j.perplexity - want) / want < 1e-9 && (spec === "" || j.attention === spec),
        `perplexity --attention '${spec}' = exp(mean nll) of logits --all-positions under the plan`, `got ${j?.perplexity}, from logits ${want}; ${r.err}`);
}
{
  const { r, j } = perplexityJson("--ids", [...ids, ...ids.slice(0, 8)].join(","));
  check(ok(r) && j && j.tokens === 31 && j.text_tokens === 40 && j.tokens_used === 32 && j.cut === 8,
        "40 ids on a 32-position model: cut to 32, 31 predicted, the cut in the JSON", r.out + r.err);
  check(/40 tokens.*32.*8 cut/.test(r.err), "the cut is stated on stderr", r.err);
  const whole = perplexityJson("--ids", idList).j;
  check(j && whole && j.perplexity === whole.perplexity, "the cut text's perplexity is that of its first 32 tokens");
  const m = perplexityJson("--ids", idList, "--max-tokens", "10");
  const first10 = perplexityJson("--ids", ids.slice(0, 10).join(","));
  check(ok(m.r) && m.j?.tokens === 9 && m.j?.cut === 22 && m.j?.perplexity === first10.j?.perplexity, "--max-tokens 10: the first 10 tokens, 9 predicted",
        m.r.out + m.r.err);
  const text = path.join(tmp, "hello.txt");
  writeFileSync(text, "hello world");  // GPT-2 ids 31373, 995: outside the fixture's vocabulary of 96
  const t = run(["perplexity", "--model", model, "--text", text, "--json"]);
  check(t.code === 1 && /31373|vocabulary/.test(t.err), "perplexity --text: a token outside the vocabulary is named", t.err);
  const human = run(["perplexity", "--model", model, "--ids", idList]);
  check(ok(human) && human.out.includes(String(whole?.perplexity).slice(0, 6)), "perplexity without --json prints the perplexity", human.out);
}

// --- experiment: the paper's experiments on a pass under the plan -------------------------------------
{
  const dirs = ["", "all=sparsemax"].map((spec) => {
    const out = path.join(tmp, `dist-${spec ? "swap" : "plain"}`);
    const r = run(["experiment", "distance-vs-L", "--model", model, "--ids", idList, "--out", out, "--quiet", ...(spec ? ["--attention", spec] : [])]);
    return { r, out };
  });
  const rows = dirs.map(({ out }) => (existsSync(path.join(out, "distance_vs_L.csv")) ? readFileSync(path.join(out, "distance_vs_L.csv"), "utf8").split("\n").slice(1, -1) : []));
  const recorded = (() => { try { return JSON.parse(readFileSync(path.join(dirs[1].out, "distance-vs-L.json"), "utf8")).model.attention; } catch { return null; } })();
  check(dirs.every(({ r }) => ok(r)) && recorded === "all=sparsemax", "experiment --attention runs and records the plan in the summary", dirs[1].r.err + recorded);
  check(rows[0].length === 8 && rows[1].length === 8 && rows[0].slice(0, 4).join() === rows[1].slice(0, 4).join() &&
        rows[0].slice(4).every((row, i) => row !== rows[1][4 + i]),
        "experiment --attention all=sparsemax: layer 0's rows unchanged (its scores and values come before any swap), layer 1's all change");
}

// --- bad specs: every command names the item and exits 2 -----------------------------------------------
const badSpecs = [
  ["all=sparsemax,2.0=softmax", "2.0=softmax", "a layer past the model"],
  ["all=sparsemax,0.4=softmax", "0.4=softmax", "a head past the model"],
  ["all=entmax:0.5", "entmax:0.5", "entmax with alpha < 1"],
  ["all=ssmax:abc", "ssmax:abc", "ssmax with a scale that is not a number"],
  ["0.*=softmax@0", "0.*=softmax@0", "a temperature of 0"],
  ["all=softmaxx", "softmaxx", "an unknown normalizer"],
  ["all", "'all'", "an item with no '='"],
  ["all=sparsemax,,0.1=softmax", "item 2", "an empty item"],
  ["x.1=softmax", "x.1", "a layer that is not a number"],
];
const commands = [
  ["logits", "--model", model, "--ids", short],
  ["attention", "--model", model, "--ids", short, "--layer", "0", "--head", "0"],
  ["generate", "--model", model, "--ids", short, "-n", "2"],
  ["perplexity", "--model", model, "--ids", short],
  ["experiment", "gradient", "--model", model, "--ids", short, "--out", path.join(tmp, "bad-experiment")],
  ["experiment", "normalizer-swap", "--model", model, "--ids", short, "--out", path.join(tmp, "bad-swap")],
];
for (const command of commands) {
  const failures = [];
  for (const [spec, item, what] of badSpecs) {
    const r = run([...command, "--attention", spec]);
    const first = r.err.split("\n")[0];
    if (!(r.code === 2 && r.signal === null && first.includes("--attention") && first.includes(item) && r.out === ""))
      failures.push(`${what}: exit ${r.code}, stderr ${first}`);
  }
  check(failures.length === 0, `${command.slice(0, 2).join(" ")} --attention: each bad spec exits 2 naming the item`, failures.join("; "));
}
check(!existsSync(path.join(tmp, "bad-swap")) && !existsSync(path.join(tmp, "bad-experiment")), "a bad spec writes no output folder");
{
  const r = run(["perplexity", "--model", model, "--ids", "5", "--json"]);
  check(r.code === 1 && r.signal === null && /1 token.*at least 2/.test(r.err) && r.out === "", "perplexity of 1 token: a readable error", r.err);
  const none = run(["perplexity", "--model", model, "--json"]);
  check(none.code === 2 && /--text.*--ids/.test(none.err), "perplexity without a text: says to give --text or --ids", none.err);
}

// --- experiment normalizer-swap ----------------------------------------------------------------------
const SETTINGS = ["sparsemax", "entmax-1.5", "ssmax:0.3", "ssmax:0.43", "ssmax:1", "sa-softmax", "softmax@0.5", "softmax@2"];
const PLAN_FIGURES = ["perplexity", "perplexity_ratio", "kl_mean", "top1_agreement"], LAYER_FIGURES = ["entropy_mean", "max_weight_mean"];
const bounds = (figures) => figures.flatMap((c) => [`${c}_lower`, `${c}_upper`]);
const PLAN_COLUMNS = ["heads", "normalizer", "spec", "layer", "T", "tokens", "mean_nll", ...PLAN_FIGURES, "windows", ...bounds(PLAN_FIGURES)];
const LAYER_COLUMNS = ["heads", "normalizer", "layer", "swapped", ...LAYER_FIGURES, ...bounds(LAYER_FIGURES)];
function readTable(file) {
  if (!existsSync(file)) return { columns: [], rows: [] };
  const lines = readFileSync(file, "utf8").split("\n");
  const columns = lines[0].split(",");
  const rows = lines.slice(1, -1).map((line) => Object.fromEntries(line.split(",").map((v, i) => [columns[i], /^[-+0-9.e]+$|^nan$/i.test(v) ? Number(v) : v])));
  return { columns, rows, endsWithNewline: lines[lines.length - 1] === "" };
}
const swapDir = (name) => path.join(tmp, name);
const swap = (out, ...extra) => run(["experiment", "normalizer-swap", "--model", model, "--ids", idList, "--out", out, ...extra]);
{
  const out = swapDir("swap");
  const r = swap(out, "--threads", "1");
  check(ok(r), "experiment normalizer-swap exits 0", r.err);
  const files = existsSync(out) ? readdirSync(out).sort() : [];
  check(JSON.stringify(files) === JSON.stringify(["normalizer-swap.json", "normalizer_swap.csv", "normalizer_swap_layers.csv"]),
        "it writes normalizer_swap.csv, normalizer_swap_layers.csv and normalizer-swap.json", files.join(" "));
  const plans = readTable(path.join(out, "normalizer_swap.csv")), layers = readTable(path.join(out, "normalizer_swap_layers.csv"));
  check(JSON.stringify(plans.columns) === JSON.stringify(PLAN_COLUMNS) && plans.endsWithNewline, "normalizer_swap.csv: header", plans.columns.join());
  check(JSON.stringify(layers.columns) === JSON.stringify(LAYER_COLUMNS), "normalizer_swap_layers.csv: header", layers.columns.join());
  // The 32 ids are one window (the context is longer): no interval over windows from one window.
  check(plans.rows.every((p) => p.windows === 1 && bounds(PLAN_FIGURES).every((c) => Number.isNaN(p[c]))) &&
        layers.rows.every((l) => bounds(LAYER_FIGURES).every((c) => Number.isNaN(l[c]))), "one window: every interval is nan");
  // The plans: the unmodified model, the control, then each setting on all heads and on layers 0 and 1.
  const want = [["none", "unmodified", ""], ["all", "softmax@1", "all=softmax@1"]];
  for (const s of SETTINGS) for (const heads of ["all", "0.*", "1.*"]) want.push([heads, s, `${heads}=${s}`]);
  const got = plans.rows.map((p) => [p.heads, p.normalizer, p.spec]);
  check(JSON.stringify(got) === JSON.stringify(want), `normalizer_swap.csv: ${want.length} plans, in order`, JSON.stringify(got.slice(0, 4)));
  check(layers.rows.length === 2 * want.length && layers.rows.every((l, i) => l.heads === want[i >> 1][0] && l.normalizer === want[i >> 1][1] && l.layer === (i & 1)),
        "normalizer_swap_layers.csv: a row per plan and layer", `${layers.rows.length} rows`);

  const base = plans.rows[0], control = plans.rows[1];
  const { j: pj } = perplexityJson("--ids", idList);
  check(base && pj && base.perplexity === pj.perplexity && base.mean_nll === pj.mean_nll && base.tokens === 31,
        "the unmodified row: the perplexity command's numbers exactly, 31 predicted tokens", `${base?.perplexity} vs ${pj?.perplexity}`);
  check(control && control.perplexity_ratio === 1 && control.kl_mean === 0 && control.top1_agreement === 1 && control.perplexity === base.perplexity,
        "the control all=softmax@1: ratio 1, KL 0, top-1 agreement 1, exactly", JSON.stringify(control));
  const problems = [];
  for (const p of plans.rows.slice(2)) {
    const viaCli = perplexityJson("--ids", idList, "--attention", p.spec).j;
    if (!viaCli || viaCli.perplexity !== p.perplexity) problems.push(`${p.spec}: perplexity ${p.perplexity}, the perplexity command ${viaCli?.perplexity}`);
    if (Math.abs(p.perplexity_ratio - p.perplexity / base.perplexity) > 1e-12 * p.perplexity_ratio) problems.push(`${p.spec}: ratio`);
    if (!(p.kl_mean > 0) || !(p.top1_agreement >= 0 && p.top1_agreement <= 1) || !Number.isInteger(p.top1_agreement * 31)) problems.push(`${p.spec}: KL ${p.kl_mean}, top-1 ${p.top1_agreement}`);
    if (p.T !== (p.normalizer === "softmax@0.5" ? 0.5 : p.normalizer === "softmax@2" ? 2 : 1) || p.layer !== (p.heads === "all" ? -1 : Number(p.heads[0]))) problems.push(`${p.spec}: T ${p.T} layer ${p.layer}`);
  }
  check(problems.length === 0, "every plan: perplexity = the perplexity command's under its spec, ratio = perplexity / unmodified, KL > 0, top-1 a fraction of 31",
        problems.slice(0, 3).join("; "));
  {
    // KL and top-1 from the logits of every position, here in double, for one plan.
    const spec = "all=sparsemax";
    const p = plans.rows.find((x) => x.spec === spec);
    const a = parse(run(["logits", "--model", model, "--ids", idList, "--json", "--all-positions"]))?.logits;
    const b = parse(run(["logits", "--model", model, "--ids", idList, "--json", "--all-positions", "--attention", spec]))?.logits;
    let kl = 0, same = 0;
    for (let t = 0; a && b && t < 31; t++) {
      const la = logSumExp(a[t]), lb = logSumExp(b[t]);
      kl += sum(a[t].map((x, v) => Math.exp(x - la) * (x - la - (b[t][v] - lb))));
      same += argmax(a[t]) === argmax(b[t]) ? 1 : 0;
    }
    check(p && Math.abs(p.kl_mean - kl / 31) < 1e-9 * (kl / 31) + 1e-12 && p.top1_agreement === same / 31,
          `${spec}: kl_mean and top1_agreement from logits --all-positions`, `got ${p?.kl_mean} ${p?.top1_agreement}, want ${kl / 31} ${same / 31}`);
  }
  const layer = (heads, s, l) => layers.rows.find((x) => x.heads === heads && x.normalizer === s && x.layer === l);
  const lp = [];
  for (const s of SETTINGS) {
    const l0 = layer("1.*", s, 0), u0 = layer("none", "unmodified", 0);
    if (!l0 || l0.entropy_mean !== u0.entropy_mean || l0.max_weight_mean !== u0.max_weight_mean || l0.swapped !== 0) lp.push(`1.*=${s} layer 0`);
    if (layer("1.*", s, 1)?.swapped !== 1 || layer("all", s, 0)?.swapped !== 1) lp.push(`${s}: swapped`);
  }
  for (const l of layers.rows) {
    // Row t sees t + 1 keys: its entropy is at most ln(t + 1); the mean over t = 0..31 is below the mean of those.
    const bound = sum(Array.from({ length: 32 }, (_, t) => Math.log(t + 1))) / 32;
    if (!(l.entropy_mean >= 0 && l.entropy_mean <= bound + 1e-9 && l.max_weight_mean > 0 && l.max_weight_mean <= 1)) lp.push(`${l.heads}=${l.normalizer} layer ${l.layer}: ${l.entropy_mean} ${l.max_weight_mean}`);
  }
  check(lp.length === 0, "layers: a swap of layer 1 leaves layer 0's attention as it was; entropies in [0, mean ln(t+1)], largest weights in (0, 1]", lp.slice(0, 3).join("; "));
  // Softmax's entropy grows with T, on the same scores (the swapped layer 0, or layer 1 with layer 0 as it was).
  const order = [0, 1].every((l) => layer(`${l}.*`, "softmax@0.5", l).entropy_mean < layer("none", "unmodified", l).entropy_mean &&
                                     layer("none", "unmodified", l).entropy_mean < layer(`${l}.*`, "softmax@2", l).entropy_mean);
  check(order, "a layer's entropy at T = 0.5 < at T = 1 < at T = 2");
  const sparse = [0, 1].every((l) => layer(`${l}.*`, "sparsemax", l).entropy_mean < layer("none", "unmodified", l).entropy_mean);
  check(sparse, "sparsemax on a layer lowers its entropy below softmax's");

  let summary = null;
  try { summary = JSON.parse(readFileSync(path.join(out, "normalizer-swap.json"), "utf8")); } catch { /* reported below */ }
  check(summary?.experiment === "normalizer-swap" && summary.baseline?.perplexity === base.perplexity && summary.text?.tokens_used === 32 &&
        summary.parameters?.plans?.length === want.length - 1 && summary.model?.n_layer === 2 && summary.timing?.threads === 1 &&
        JSON.stringify([...summary.tables].sort()) === JSON.stringify(["normalizer_swap.csv", "normalizer_swap_layers.csv"]),
        "normalizer-swap.json: experiment, baseline, text, plans, model, timing, tables", JSON.stringify(summary)?.slice(0, 300));
  check(/\d+%.*ETA/.test(r.err) && /100%/.test(r.err), "progress with a percentage and an ETA on stderr", r.err.slice(0, 200));

  const two = swapDir("swap-threads2");
  const r2 = swap(two, "--threads", "2", "--quiet");
  const same = ["normalizer_swap.csv", "normalizer_swap_layers.csv"].every((f) => existsSync(path.join(two, f)) &&
                readFileSync(path.join(two, f)).equals(readFileSync(path.join(out, f))));
  check(ok(r2) && same && !/ETA/.test(r2.err), "--threads 2 --quiet: byte-identical CSVs, no progress", r2.err);
}
{
  const out = swapDir("swap-base");
  const r = swap(out, "--quiet", "--attention", "all=softmax@2");
  const plans = readTable(path.join(out, "normalizer_swap.csv"));
  const base = plans.rows[0], { j } = perplexityJson("--ids", idList, "--attention", "all=softmax@2");
  const t2 = plans.rows.find((p) => p.spec === "all=softmax@2");
  check(ok(r) && base && j && base.perplexity === j.perplexity && t2?.kl_mean === 0 && t2?.perplexity_ratio === 1,
        "--attention sets the unmodified model's plan: its perplexity, and all=softmax@2 over it changes nothing", r.err);
  const help = run(["experiment", "normalizer-swap", "--help"]);
  check(ok(help) && SETTINGS.every((s) => help.out.includes(s)), "experiment normalizer-swap --help lists the settings");
  const top = run(["experiment", "--help"]), usage = run(["--help"]);
  check(top.out.includes("normalizer-swap") && top.out.includes("--attention") && usage.out.includes("perplexity") && usage.out.includes("HEADS=NORMALIZER"),
        "attnlab --help and experiment --help mention perplexity, normalizer-swap and --attention");
}

rmSync(tmp, { recursive: true });
finish("attention-plan");
