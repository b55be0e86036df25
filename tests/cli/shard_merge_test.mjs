// `experiment NAME --shard K/N` and `attnlab merge`, for every experiment:
//   - normalizer-swap over 3 windows: three shards merged in a shuffled order give the one-process
//     run's CSV files, 95% intervals included, byte for byte and its JSON summary apart from the
//     timing; each shard's records are its own window's; the intervals equal a bootstrap recomputed
//     here from the records (SplitMix64 written out in BigInt);
//   - all, distance-vs-L, distance-vs-N, critical-n, separability, gradient (units: heads) and
//     fading with --needle (units: windows), on a small text: N = 1, 2, 3 and more shards than
//     units (some empty) merge into the one-process run's files byte for byte, the JSON apart from
//     its timing fields; each shard's records cover exactly its block of the units, computed here;
//   - a set with a shard missing, repeated or run on another model, text, plan, options or
//     experiment is refused with a message that names the shard and what differs, and so is a
//     merge after the text changed;
//   - scripts/slurm/submit.sh passes the experiment's name through (fading, with a stand-in sbatch).
//
//   node tests/cli/shard_merge_test.mjs PATH/TO/attnlab
import { check, cli, run, finish } from "./harness.mjs";
import { readFileSync, readdirSync, writeFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const model = path.join(root, "assets/tiny");
const tmp = mkdtempSync(path.join(tmpdir(), "attnlab-shards-"));
const ids = "464,2068,7586,21831,18045,625,262,16931,3290,13";
const swap = (out, ids_, ...extra) =>
  run(["experiment", "normalizer-swap", "--model", model, "--ids", ids_, "--out", out, "--quiet", ...extra]);
const read = (dir, file) => readFileSync(path.join(dir, file), "utf8");
const withoutTiming = (json) => { const o = JSON.parse(json); delete o.timing; return JSON.stringify(o); };
const tables = ["normalizer_swap.csv", "normalizer_swap_layers.csv"];

// Windows of 4 tokens: the 10 ids are 3 windows (4, 4 and 2 tokens), the units of the shards.
const W = ["--max-tokens", "4", "--resamples", "300", "--seed", "5"];
const whole = path.join(tmp, "whole");
let r = swap(whole, ids, ...W);
check(r.code === 0, "the one-process run succeeds", r.err);
const csvRows = (text) => { const [head, ...lines] = text.trim().split("\n"); const cols = head.split(",");
  return lines.map((l) => Object.fromEntries(l.split(",").map((v, i) => [cols[i], v]))); };
const wholeRows = csvRows(read(whole, tables[0]));
// The tiny model has 4 layers: the control, then 8 normalizers on all heads and on each layer.
check(wholeRows.length === 1 + 1 + 8 * 5, "the one-process run has the unmodified row and 41 plans", `${wholeRows.length} rows`);
const inside = wholeRows.every((p) => p.windows === "3" && ["perplexity", "perplexity_ratio", "kl_mean", "top1_agreement"].every((c) =>
  Number(p[`${c}_lower`]) <= Number(p[c]) + 1e-12 && Number(p[c]) <= Number(p[`${c}_upper`]) + 1e-12));
check(inside, "every plan's row has 3 windows and intervals around its figures", JSON.stringify(wholeRows[2]));

const shards = [1, 2, 3].map((k) => path.join(tmp, `shard${k}`));
shards.forEach((dir, i) => {
  r = swap(dir, ids, ...W, "--shard", `${i + 1}/3`, "--threads", String(1 + i));
  check(r.code === 0, `shard ${i + 1}/3 succeeds`, r.err);
});
// 3 windows in 3 blocks: shard k holds window k - 1 alone, under every plan:
// predicted, then per plan (42) NLL, KL, top-1 and 4 layers' entropy and largest weight.
const records = shards.map((dir) => read(dir, "units.txt").trim().split("\n").filter((l) => !l.startsWith("#")).map((l) => l.split(" ").map(Number)));
check(records.every((rs, k) => rs.length === 1 && rs[0][0] === 0 && rs[0][1] === k && rs[0].length === 2 + 1 + 42 * (3 + 2 * 4)),
  "shard k's units.txt holds window k - 1's record alone, of 1 + 42 x 11 values", JSON.stringify(records.map((rs) => rs.map((x) => x.slice(0, 3)))));

const merged = path.join(tmp, "merged");
r = run(["merge", shards[2], shards[0], shards[1], "--out", merged]);
check(r.code === 0, "merge of the three shards, given out of order, succeeds", r.err);
for (const t of tables) check(r.code === 0 && read(merged, t) === read(whole, t), `merged ${t}, intervals included, equals the one-process run's byte for byte`);
const summary = "normalizer-swap.json";
check(r.code === 0 && withoutTiming(read(merged, summary)) === withoutTiming(read(whole, summary)),
  "merged normalizer-swap.json equals the one-process run's apart from timing");

// The intervals, recomputed here from the shards' records: SplitMix64 and derive_seed written out
// from base/random.h, the table's stream "SWAP", numpy's linear quantile rule.
const M64 = (1n << 64n) - 1n;
const splitmix = (seed) => { let s = seed; return () => { s = (s + 0x9E3779B97F4A7C15n) & M64; let z = s;
  z = ((z ^ (z >> 30n)) * 0xBF58476D1CE4E5B9n) & M64; z = ((z ^ (z >> 27n)) * 0x94D049BB133111EBn) & M64; return z ^ (z >> 31n); }; };
const deriveSeed = (seed, a) => { let h = splitmix(seed)();
  for (const v of [a, 0n, 0n]) h = splitmix(h ^ ((v * 0xD1B54A32D192ED03n) & M64))(); return h; };
const quantile = (v, p) => { const h = (v.length - 1) * p, lo = Math.floor(h); return lo + 1 >= v.length ? v[v.length - 1] : v[lo] + (h - lo) * (v[lo + 1] - v[lo]); };
const next = splitmix(deriveSeed(5n, 0x53574150n));
const windowsRec = records.map((rs) => rs[0].slice(2));
const stats = { perplexity: [], ratio: [] }, plan = 2;  // all=sparsemax
for (let b = 0; b < 300; ++b) {
  let nll = 0, diff = 0, n = 0;
  for (let k = 0; k < 3; ++k) {
    const w = windowsRec[Math.min(2, Math.floor(Number(next() >> 11n) * 2 ** -53 * 3))], at = 1 + plan * 11;
    nll += w[at]; diff += w[at] - w[1]; n += w[0];
  }
  stats.perplexity.push(nll / n); stats.ratio.push(diff / n);
}
const row = wholeRows[plan];
const near = (a, b) => Math.abs(a - b) <= 1e-9 * Math.abs(b);
const ends = (v) => { v.sort((x, y) => x - y); return [Math.exp(quantile(v, 0.025)), Math.exp(quantile(v, 0.975))]; };
const [pl, pu] = ends(stats.perplexity), [rl, ru] = ends(stats.ratio);
check(row.spec === "all=sparsemax" && near(Number(row.perplexity_lower), pl) && near(Number(row.perplexity_upper), pu) &&
      near(Number(row.perplexity_ratio_lower), rl) && near(Number(row.perplexity_ratio_upper), ru),
  "all=sparsemax's perplexity and ratio intervals equal a bootstrap recomputed here from the records",
  `${row.perplexity_lower} ${row.perplexity_upper} ${row.perplexity_ratio_lower} ${row.perplexity_ratio_upper} vs ${pl} ${pu} ${rl} ${ru}`);

const refused = (args, pattern, what) => {
  const m = run(["merge", ...args, "--out", path.join(tmp, "refused")]);
  check(m.code === 1 && pattern.test(m.err), what, `code ${m.code}: ${m.err.trim()}`);
};
refused([shards[0], shards[2]], /shard\(s\) 2 of 3 missing/, "a missing shard is refused by its number");
refused([shards[0], shards[1], shards[1], shards[2]], /shard 2\/3 is given twice/, "a repeated shard is refused by its number");
const other = path.join(tmp, "other-text");
r = swap(other, "464,2068,7586,21831,18045,625,262,16931,3290,14", ...W, "--shard", "3/3");
refused([shards[0], shards[1], other], /shard 3\/3 differs from shard 1 .* in the corpus/, "a shard over another text is refused, naming the corpus");
const reseeded = path.join(tmp, "reseeded");
r = swap(reseeded, ids, "--max-tokens", "4", "--resamples", "300", "--seed", "6", "--shard", "2/3");
refused([shards[0], reseeded, shards[2]], /shard 2\/3 differs from shard 1 .* options: "--seed 6" where shard 1 has "--seed 5"/,
  "a shard with another bootstrap seed is refused, naming the option");
refused([whole], /no shard\.json/, "a folder from a run without --shard is refused");
for (const bad of ["0/3", "4/3", "2", "a/3"]) {
  const b = swap(path.join(tmp, "bad"), ids, "--shard", bad);
  check(b.code === 2 && /--shard/.test(b.err), `--shard ${bad} is refused as bad usage`, b.err.trim());
}

// ---- the experiments whose shards keep records ----------------------------------------------
const textFile = path.join(tmp, "text.txt");
writeFileSync(textFile, "In the beginning was the Word, and the Word was with God. The light shineth in darkness; " +
  "and the darkness comprehended it not. There was a man sent from God, whose name was John. The same came for a " +
  "witness, to bear witness of the Light, that all men through him might believe.\n");
const otherText = path.join(tmp, "other.txt");
writeFileSync(otherText, readFileSync(textFile, "utf8").replace("John", "Peter"));
// Tokenized once here: --text would load the vocabulary in each of the ~80 runs below.
r = run(["tokenize"], readFileSync(textFile, "utf8"));
check(r.code === 0 && r.out.trim().split(/\s+/).length > 40, "the small text has more than 40 tokens", r.err || r.out);
const textIds = ["--ids", r.out.trim().split(/\s+/).join(",")];
const tiny = ["--model", model, "--quiet"];
const fiveOptions = ["--Ls", "8,16,24,40", "--Ns", "1,3,5", "--separability-Ns", "1,2,4,8", "--temperatures", "0.01,1,10",
  "--max-critical-n", "24"];
const experiment = (name, out, extra = [], input = textIds) => run(["experiment", name, ...tiny, ...input, "--out", out,
  ...(name === "fading" ? ["--max-L", "24", "--windows", "5", "--needle"] : fiveOptions), ...extra]);
// Timing fields blanked, everything else compared as text.
const timingBlanked = (json) => json.replace(/"timing":\{[^}]*\}/, '"timing":{}').replace(/"seconds":[-0-9.e+]+/g, '"seconds":0');
// Shard k of n runs units [floor(total (k-1) / n), floor(total k / n)).
const block = (total, k, n) => [Math.floor(total * (k - 1) / n), Math.floor(total * k / n)];
const recordUnits = (dir, stage) => [...new Set(read(dir, "units.txt").split("\n").filter((l) => l && !l.startsWith("#"))
  .map((l) => l.split(" ")).filter((f) => stage(Number(f[0]))).map((f) => Number(f[1])))].sort((a, b) => a - b);
const range = ([a, b]) => Array.from({ length: b - a }, (_, i) => a + i);

const cases = [
  // name, units (tiny: 4 layers x 4 heads; fading: 5 windows), the shard counts
  ["all", 16, [1, 2, 3, 17]],
  ["distance-vs-L", 16, [2]],
  ["distance-vs-N", 16, [2]],
  ["critical-n", 16, [2]],
  // L = 46 finds N* = 24 (chunk 17..24) before L = 45 does (N* = 25): the search goes on without the
  // largest L, which the shards (they compute every L up to N = 32) cannot know. Checked below.
  ["critical-n", 16, [2], ["--Ls", "45,46", "--max-critical-n", "32"]],
  ["separability", 16, [2]],
  ["gradient", 16, [2]],
  ["fading", 5, [1, 2, 3, 7]],
];
const sets = {};
for (const [name, units, counts, options = []] of cases) {
  const label = options.length ? `${name} ${options.join(" ")}` : name;
  const one = path.join(tmp, `${label.replace(/[^\w-]/g, "_")}-whole`);
  r = experiment(name, one, options);
  check(r.code === 0, `${name}: the one-process run succeeds`, r.err);
  const files = readdirSync(one).sort();
  for (const n of counts) {
    const dirs = range([1, n + 1]).map((k) => `${one}-${n}-${k}`);
    let ok = true;
    dirs.forEach((dir, i) => {
      r = experiment(name, dir, [...options, "--shard", `${i + 1}/${n}`, "--threads", String(1 + (i % 2))]);
      ok = ok && r.code === 0;
      if (r.code !== 0) check(false, `${name}: shard ${i + 1}/${n} succeeds`, r.err);
    });
    if (!ok) continue;
    // A head's records are in stages 1000 (distance-vs-L) ... 5000; fading's windows in 0, the needle's in 1.
    const firstStage = name === "fading" ? (s) => s === 0 : () => true;
    const covered = dirs.every((dir, i) => JSON.stringify(recordUnits(dir, firstStage)) === JSON.stringify(range(block(units, i + 1, n))));
    check(covered, `${name}: each of ${n} shards holds the records of its own block of the ${units} units, and only those`);
    const merged = `${one}-${n}-merged`;
    r = run(["merge", ...dirs.slice().reverse(), "--out", merged]);
    check(r.code === 0, `${name}: merge of ${n} shards (given in reverse order) succeeds`, r.err);
    if (r.code !== 0) continue;
    check(JSON.stringify(readdirSync(merged).sort()) === JSON.stringify(files), `${name}, ${n} shards: the merge writes the same files`,
      readdirSync(merged).join(" "));
    const differ = files.filter((f) => (f.endsWith(".json") ? timingBlanked(read(merged, f)) !== timingBlanked(read(one, f))
      : read(merged, f) !== read(one, f)));
    check(differ.length === 0, `${name}, ${n} shards: ${files.join(", ")} equal the one-process run's byte for byte (JSON apart from timing)`,
      `differ: ${differ.join(", ")}`);
    sets[`${label}/${n}`] = dirs;
  }
}
// The test can fail: the one-process critical-n found N* (not only NaN rows).
check(/^40,\d+,1,/m.test(read(path.join(tmp, "critical-n-whole"), "critical_n.csv")), "critical-n's one-process run finds N* at L = 40");
const early = read(path.join(tmp, "critical-n_--Ls_45_46_--max-critical-n_32-whole"), "critical_n.csv");
check(/^45,25,1,/m.test(early) && /^46,24,1,/m.test(early), "critical-n --Ls 45,46: the largest L closes a chunk before the other", early);

const all3 = sets["all/3"] ?? [];
const shard3 = (extra, name = "all") => {
  const dir = path.join(tmp, `odd-${extra.join("-").replace(/[^\w]/g, "")}-${name}`);
  const input = extra[0] === "--text" ? [] : textIds;
  return { dir, r: experiment(name, dir, ["--shard", "3/3", ...extra], input) };
};
if (all3.length === 3) {
  refused([all3[0], all3[2]], /shard\(s\) 2 of 3 missing/, "records: a missing shard is refused by its number");
  refused([all3[0], all3[1], all3[1], all3[2]], /shard 2\/3 is given twice/, "records: a repeated shard is refused by its number");
  const odd = [
    [["--model", path.join(root, "assets/tiny-ssmax")], "all", /shard 3\/3 differs from shard 1 .* in the model/, "another model"],
    [["--attention", "all=ssmax:0.43"], "all", /shard 3\/3 differs from shard 1 .* in the plan: "all=ssmax:0.43"/, "another plan"],
    [["--seed", "1"], "all", /shard 3\/3 differs from shard 1 .* in the options: "--seed"/, "another seed"],
    [["--text", otherText], "all", /shard 3\/3 differs from shard 1 .* in the corpus/, "another text"],
    [[], "gradient", /shard 3\/3 differs from shard 1 .* in the experiment: "gradient" where shard 1 has "all"/, "another experiment"],
  ];
  for (const [extra, name, pattern, what] of odd) {
    const o = shard3(extra, name);
    check(o.r.code === 0, `the odd shard (${what}) runs`, o.r.err);
    refused([all3[0], all3[1], o.dir], pattern, `records: a shard run on ${what} is refused, naming the shard and what differs`);
  }
  refused([all3[0], all3[1], shards[2]], /differs from shard 1|is one of/, "records: a normalizer-swap shard among all's is refused");
}
// The merge reads the model and the text again: a text changed since the shards ran is refused.
const changing = path.join(tmp, "changing.txt");
writeFileSync(changing, readFileSync(textFile, "utf8"));
const before = [1, 2].map((k) => path.join(tmp, `changing-${k}`));
const ranBefore = before.every((dir, i) => experiment("gradient", dir, ["--shard", `${i + 1}/2`], ["--text", changing]).code === 0);
writeFileSync(changing, readFileSync(otherText, "utf8"));
refused(before, /corpus \(SHA-256\) is now .* but the shards ran .*a file changed/,
  "records: a merge after the text changed is refused, naming the corpus");
check(ranBefore, "the two shards over the text before it changed ran");
for (const name of ["all", "fading"]) {
  const b = experiment(name, path.join(tmp, "bad"), ["--shard", "4/3"]);
  check(b.code === 2 && /--shard/.test(b.err), `${name}: --shard 4/3 is refused as bad usage`, b.err.trim());
}

// ---- scripts/slurm/submit.sh passes any experiment's name through ------------------------------
// A stand-in for sbatch that runs each array task, then the merge, at once (the real Slurm is
// tests/cli/slurm_test.sh's, which needs root).
const bin = path.join(tmp, "bin");
mkdirSync(bin);
writeFileSync(path.join(bin, "sbatch"), `#!/usr/bin/env bash
array= out= script=
for a in "$@"; do case $a in --array=*) array=\${a#--array=} ;; --output=*) out=\${a#--output=} ;; --*) ;; *) script=$a ;; esac; done
if [[ -n $array ]]; then
  for k in \${array//,/ }; do SLURM_ARRAY_TASK_ID=$k bash "$script" > "\${out//%a/$k}" 2>&1 || exit 1; done
else bash "$script" > "$out" 2>&1 || exit 1; fi
echo 4242
`, { mode: 0o755 });
const submitted = path.join(tmp, "submitted");
const sub = spawnSync(path.join(root, "scripts/slurm/submit.sh"), ["fading", "--model", model, "--text", textFile, "--out", submitted,
  "--tasks", "3", "--", "--max-L", "24", "--windows", "5", "--needle"],
  { encoding: "utf8", env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, ATTNLAB: path.resolve(cli) } });
check(sub.status === 0 && /array 4242: shards 1,2,3 of 3/.test(sub.stdout), "submit.sh fading submits 3 shards and the merge", sub.stderr);
const direct = path.join(tmp, "fading-text-whole");
r = run(["experiment", "fading", ...tiny, "--text", textFile, "--out", direct, "--max-L", "24", "--windows", "5", "--needle"]);
const readOrNull = (dir, file) => { try { return read(dir, file); } catch { return null; } };
check(r.code === 0 && ["fading.csv", "needle.csv"].every((f) => readOrNull(submitted, f) !== null && readOrNull(submitted, f) === read(direct, f)),
  "submit.sh fading: the merged tables equal the one-process run's", r.err);

rmSync(tmp, { recursive: true, force: true });
finish("shard_merge_test");
