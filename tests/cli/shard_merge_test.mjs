// `experiment normalizer-swap --shard K/N` and `attnlab merge`: three shards merged in a shuffled
// order give the one-process run's CSV files byte for byte and its JSON summary apart from the
// timing; each shard ran its own contiguous block of the plans (the rows are counted here, not
// read from shard.json); and a set with a shard missing, repeated or run on another text is
// refused with a message that names the shard and what differs.
//
//   node tests/cli/shard_merge_test.mjs PATH/TO/attnlab
import { check, run, finish } from "./harness.mjs";
import { readFileSync, mkdtempSync, rmSync } from "node:fs";
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

const whole = path.join(tmp, "whole");
let r = swap(whole, ids);
check(r.code === 0, "the one-process run succeeds", r.err);
const wholeRows = read(whole, tables[0]).trim().split("\n").length - 1;  // header aside
// The tiny model has 4 layers: the control, then 8 normalizers on all heads and on each layer.
check(wholeRows === 1 + 1 + 8 * 5, "the one-process run has the unmodified row and 41 plans", `${wholeRows} rows`);

const shards = [1, 2, 3].map((k) => path.join(tmp, `shard${k}`));
shards.forEach((dir, i) => {
  r = swap(dir, ids, "--shard", `${i + 1}/3`, "--threads", String(1 + i));
  check(r.code === 0, `shard ${i + 1}/3 succeeds`, r.err);
});
// 41 plans in 3 blocks: floor(41k/3) boundaries 0, 13, 27, 41; shard 1 adds the unmodified row.
const rows = shards.map((dir) => read(dir, tables[0]).trim().split("\n").length - 1);
check(JSON.stringify(rows) === "[14,14,14]", "the shards hold 1+13, 14 and 14 rows", JSON.stringify(rows));

const merged = path.join(tmp, "merged");
r = run(["merge", shards[2], shards[0], shards[1], "--out", merged]);
check(r.code === 0, "merge of the three shards, given out of order, succeeds", r.err);
for (const t of tables) check(r.code === 0 && read(merged, t) === read(whole, t), `merged ${t} equals the one-process run's byte for byte`);
const summary = "normalizer-swap.json";
check(r.code === 0 && withoutTiming(read(merged, summary)) === withoutTiming(read(whole, summary)),
  "merged normalizer-swap.json equals the one-process run's apart from timing");

const refused = (args, pattern, what) => {
  const m = run(["merge", ...args, "--out", path.join(tmp, "refused")]);
  check(m.code === 1 && pattern.test(m.err), what, `code ${m.code}: ${m.err.trim()}`);
};
refused([shards[0], shards[2]], /shard\(s\) 2 of 3 missing/, "a missing shard is refused by its number");
refused([shards[0], shards[1], shards[1], shards[2]], /shard 2\/3 is given twice/, "a repeated shard is refused by its number");
const other = path.join(tmp, "other-text");
r = swap(other, "464,2068,7586,21831,18045,625,262,16931,3290,14", "--shard", "3/3");
refused([shards[0], shards[1], other], /shard 3\/3 differs from shard 1 .* in "text"/, "a shard over another text is refused, naming the text");
refused([whole], /no shard\.json/, "a folder from a run without --shard is refused");
for (const bad of ["0/3", "4/3", "2", "a/3"]) {
  const b = swap(path.join(tmp, "bad"), ids, "--shard", bad);
  check(b.code === 2 && /--shard/.test(b.err), `--shard ${bad} is refused as bad usage`, b.err.trim());
}

rmSync(tmp, { recursive: true, force: true });
finish("shard_merge_test");
