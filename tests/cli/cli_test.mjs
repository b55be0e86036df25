// The attnlab CLI's contract, checked from outside: JSON outputs against the numpy reference
// fixtures, and bad input giving a message on stderr and a non-zero exit, never a crash.
//
//   node tests/cli/cli_test.mjs PATH/TO/attnlab
import { cli, check, run, finish } from "./harness.mjs";
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const fixture = (name) => path.join(root, "tests/fixtures", name);

// Largest |a - b| over the largest |b|: error relative to the tensor's scale.
function relError(a, b) {
  let err = 0, scale = 0;
  for (let i = 0; i < b.length; i++) { err = Math.max(err, Math.abs(a[i] - b[i])); scale = Math.max(scale, Math.abs(b[i])); }
  return a.length === b.length ? err / scale : Infinity;
}

for (const name of ["tiny-f32", "prefixed-untied-f32", "inferred-f16", "bf16-eps"]) {
  const expected = JSON.parse(readFileSync(path.join(fixture(name), "expected.json"), "utf8"));
  const ids = expected.tokens.join(",");
  const T = expected.tokens.length;
  const logits = run(["logits", "--model", fixture(name), "--ids", ids, "--json"]);
  const got = logits.code === 0 ? JSON.parse(logits.out).logits : [];
  const e1 = relError(got, expected.logits[T - 1]);
  check(e1 < 1e-4, `${name}: logits --json matches the numpy reference`, `relative error ${e1}, stderr: ${logits.err.trim()}`);

  const { n_layer: L, n_head: H } = expected.config;
  const att = run(["attention", "--model", path.join(fixture(name), "model.safetensors"), "--ids", ids,
                   "--layer", String(L - 1), "--head", String(H - 1), "--json"]);
  const w = att.code === 0 ? JSON.parse(att.out).weights : [];
  const e2 = relError(w.flat(), expected.attention[L - 1][H - 1].flat());
  const upperZero = w.every((row, i) => row.every((x, j) => j <= i || x === 0));
  check(w.length === T && e2 < 1e-4 && upperZero, `${name}: attention --json is T x T, causal, and matches`, `relative error ${e2}`);
}

// Generation: greedy follows the argmax; a seed makes sampling repeatable.
{
  const m = fixture("tiny-f32");
  const a = run(["generate", "--model", m, "--ids", "1,2,3", "-n", "6", "--temperature", "4", "--top-k", "20", "--seed", "7", "--json"]);
  const b = run(["generate", "--model", m, "--ids", "1,2,3", "-n", "6", "--temperature", "4", "--top-k", "20", "--seed", "7", "--json"]);
  const c = run(["generate", "--model", m, "--ids", "1,2,3", "-n", "6", "--temperature", "4", "--top-k", "20", "--seed", "8", "--json"]);
  check(a.code === 0 && a.out === b.out, "generate with the same seed gives the same tokens", a.err);
  check(a.out !== c.out, "generate with another seed gives other tokens");
  const g = run(["generate", "--model", m, "--ids", "1,2,3", "-n", "3", "--json"]);
  const first = g.code === 0 ? JSON.parse(g.out).ids[0] : -1;
  const l = JSON.parse(run(["logits", "--model", m, "--ids", "1,2,3", "--json"]).out).logits;
  check(first === l.indexOf(Math.max(...l)), "greedy generate takes the argmax of logits", `got ${first}`);
}

// tokenize reads standard input byte-exactly.
{
  const r = run(["tokenize", "--json"], "hello world");
  check(r.code === 0 && r.out.trim() === "[31373,995]", "tokenize --json: \"hello world\" -> [31373,995]", r.out + r.err);
}

// tokenize --model DIR reads DIR/tokenizer.json (here GPT-2's assets folder, read through its own
// files, and a fuzz seed: SentencePiece-style, "<s>" and "</s>" from the template, and a split on
// "▁" that merges it with the previous piece, so "ab" -> "▁ab" -> "▁" "ab" = 4 8 and "b a" ->
// "▁b▁a" -> "▁" "b▁" "a" = 4 6 4 5); --batch gives one line per "LENGTH\nBYTES" record.
{
  const gpt2 = run(["tokenize", "--json", "--model", path.join(root, "assets/gpt2")], "hello world");
  check(gpt2.code === 0 && gpt2.out.trim() === "[31373,995]", "tokenize --model assets/gpt2 reads GPT-2's files", gpt2.out + gpt2.err);
  const dir = mkdtempSync(path.join(tmpdir(), "attnlab-tok-"));
  writeFileSync(path.join(dir, "tokenizer.json"), readFileSync(path.join(root, "fuzz/corpus/tokenizer_json/sentencepiece.json")));
  const sp = run(["tokenize", "--json", "--batch", "--model", dir], "2\nab3\nb a0\n");
  check(sp.code === 0 && sp.out === "[1,4,8,11]\n[1,4,6,4,5,11]\n[1,11]\n", "tokenize --model --batch: one line per text", sp.out + sp.err);
  const frame = run(["tokenize", "--batch", "--model", dir], "5\nab");
  check(frame.code !== 0 && frame.err.includes("record 0 at byte 0"), "tokenize --batch: a short record is an error", frame.err);
  const none = run(["tokenize", "--model", path.join(dir, "nowhere")], "x");
  check(none.code !== 0 && none.err.includes("nowhere/tokenizer.json: cannot be opened"), "tokenize --model: a missing tokenizer.json is named", none.err);
  writeFileSync(path.join(dir, "tokenizer_config.json"), '{"tokenizer_class": "LlamaTokenizer", "add_bos_token": false}');
  const cfg = run(["tokenize", "--model", dir], "x");
  check(cfg.code !== 0 && cfg.err.includes("tokenizer_config.json: add_bos_token/add_eos_token"), "tokenize --model: a disagreeing config is refused", cfg.err);
  const both = run(["tokenize", "--model", dir, "--vocab-dir", dir], "x");
  check(both.code === 2 && both.err.includes("exclude each other"), "tokenize: --model and --vocab-dir exclude each other", both.err);
  rmSync(dir, { recursive: true, force: true });
}

// Bad input: a message on stderr, a non-zero exit, no crash.
const tmp = mkdtempSync(path.join(tmpdir(), "attnlab-cli-"));
const good = readFileSync(path.join(fixture("tiny-f32"), "model.safetensors"));
writeFileSync(path.join(tmp, "truncated.safetensors"), good.subarray(0, good.length - 100));
writeFileSync(path.join(tmp, "empty.safetensors"), "");
const m = fixture("tiny-f32");
const bad = [
  [["logits", "--model", m, "--ids", "1,96"], "outside", "an id outside the vocabulary"],
  [["logits", "--model", m, "--ids", "1,,2"], "is not one", "a malformed id list"],
  [["logits", "--model", m, "--ids", ""], "is not one", "an empty id list"],
  [["logits", "--model", m], "--ids is required", "no ids"],
  [["logits", "--ids", "1"], "--model FILE is required", "no model"],
  [["logits", "--model", path.join(tmp, "missing.safetensors"), "--ids", "1"], "missing.safetensors", "a missing file"],
  [["logits", "--model", path.join(tmp, "truncated.safetensors"), "--ids", "1"], "truncated.safetensors", "a truncated checkpoint"],
  [["logits", "--model", path.join(tmp, "empty.safetensors"), "--ids", "1"], "empty.safetensors", "an empty checkpoint"],
  [["attention", "--model", m, "--ids", "1,2", "--layer", "2", "--head", "0"], "--layer", "a layer out of range"],
  [["attention", "--model", m, "--ids", "1,2", "--layer", "0", "--head", "-1"], "--head", "a head out of range"],
  [["attention", "--model", m, "--ids", "1,2", "--layer", "x", "--head", "0"], "--layer", "a layer that is not a number"],
  [["logits", "--model", m, "--ids", Array(33).fill(1).join(",")], "at most 32", "more tokens than n_positions"],
  [["generate", "--model", m, "--ids", "1", "-n", "40"], "exceeds", "generating past n_positions"],
  [["logits", "--model", m, "--ids", "1", "--bogus"], "unknown option", "an unknown option"],
  [["frobnicate"], "unknown command", "an unknown command"],
];
for (const [args, fragment, what] of bad) {
  const r = run(args);
  check(r.code !== 0 && r.signal === null && r.err.includes(fragment), `${what}: clear error, non-zero exit`,
        `exit ${r.code}, signal ${r.signal}, stderr: ${r.err.trim()}`);
}
// random-checkpoint: the browser tests' checkpoints. The config it writes must describe the file
// (checked through `logits`, which refuses a config that disagrees with the tensors) and the
// shape asked for must be the one written (the safetensors header, read here by hand).
{
  const r = run(["random-checkpoint", "--out", tmp, "--layers", "3", "--heads", "2", "--embd", "16", "--positions", "20",
                 "--vocab", "300", "--seed", "7"]);
  check(r.code === 0, "random-checkpoint writes a checkpoint", r.err);
  const config = JSON.parse(readFileSync(path.join(tmp, "config.json"), "utf8"));
  check(config.n_layer === 3 && config.n_head === 2 && config.n_embd === 16 && config.n_positions === 20 &&
        config.vocab_size === 300 && config.layer_norm_epsilon === 1e-5 && config.model_type === "gpt2",
        "random-checkpoint: config.json has the asked shape", JSON.stringify(config));
  const file = readFileSync(path.join(tmp, "model.safetensors"));
  const header = JSON.parse(file.subarray(8, 8 + Number(file.readBigUInt64LE(0))).toString("utf8"));
  check(JSON.stringify(header["h.2.attn.c_attn.weight"]?.shape) === "[16,48]" && JSON.stringify(header["wte.weight"]?.shape) === "[300,16]" &&
        !("h.3.ln_1.weight" in header), "random-checkpoint: the tensors have the asked shape");
  const logits = run(["logits", "--model", path.join(tmp, "model.safetensors"), "--ids", "1,2,299", "--json"]);
  check(logits.code === 0 && JSON.parse(logits.out).logits?.length === 300, "random-checkpoint: the checkpoint runs", logits.err);
  const again = run(["random-checkpoint", "--out", path.join(tmp, "again"), "--layers", "1"]);
  check(again.code === 2 && again.err.includes(path.join(tmp, "again")) && again.err.includes("not an existing folder"),
        "random-checkpoint: a missing folder is named, before any weights are drawn", again.err);
  const odd = run(["random-checkpoint", "--out", tmp, "--embd", "10", "--heads", "4"]);
  check(odd.code === 2 && odd.err.includes("multiple of --heads"), "random-checkpoint: n_embd must divide into heads", odd.err);
}
rmSync(tmp, { recursive: true });

finish("cli");
