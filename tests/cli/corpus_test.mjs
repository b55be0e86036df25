// `attnlab experiment --text` over a corpus: repeated --text, folders of .txt files and JSONL
// files with a "text" field; the document list and the corpus hash in the JSON summary, worked
// out here from the files; a window that never crosses into the next document (its tables equal
// those of a run over that document alone); normalizer-swap's windows over a corpus, each inside
// one document (the corpus's NLL is the token-weighted mean of the documents' own runs); and the
// messages for bad corpora.
//
//   node tests/cli/corpus_test.mjs PATH/TO/attnlab [--without-swap]
//
// --without-swap leaves out normalizer-swap's corpus runs (126 runs of the model): the sanitizer
// build passes it, where they took minutes; its swap code runs there in cli:attention-plans.
import { check, run, finish } from "./harness.mjs";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const model = path.join(root, "assets/tiny");
const tmp = mkdtempSync(path.join(tmpdir(), "attnlab-corpus-"));
const sha256 = (bytes) => createHash("sha256").update(bytes).digest("hex");

// The corpus: a folder with a one-token document (too short for a window) and a short one in a
// sub-folder, then a JSONL file whose first line is a long document.
const folder = path.join(tmp, "folder");
mkdirSync(path.join(folder, "sub"), { recursive: true });
const docs = [
  [path.join(folder, "a.txt"), "."],
  [path.join(folder, "sub", "b.txt"), "In the beginning was the word, and the word was short."],
];
writeFileSync(docs[0][0], docs[0][1]);
writeFileSync(docs[1][0], docs[1][1]);
writeFileSync(path.join(folder, "notes.md"), "not a .txt file, so not a document");
const long = "And the earth was without form, and void; and darkness was upon the face of the deep. ".repeat(8);
const jsonl = path.join(tmp, "corpus.jsonl");
writeFileSync(jsonl, JSON.stringify({ text: long }) + "\n\n" + JSON.stringify({ text: "Let there be light", id: 7 }) + "\n");
docs.push([`${jsonl}:1`, long], [`${jsonl}:3`, "Let there be light"]);

const common = ["--temperatures", "1", "--eps", "0.1", "--quiet"];
const experiment = (out, ...texts) =>
  run(["experiment", "gradient", "--model", model, ...texts.flatMap((t) => ["--text", t]), "--out", out, ...common]);

const corpusOut = path.join(tmp, "corpus-out");
const r = experiment(corpusOut, folder, jsonl);
check(r.code === 0, "a folder and a JSONL file as one corpus", r.err);
const text = JSON.parse(readFileSync(path.join(corpusOut, "gradient.json"), "utf8")).text ?? {};
const listed = text.documents ?? [];
check(JSON.stringify(listed.map((d) => d.source)) === JSON.stringify(docs.map((d) => d[0])),
  "documents in order: the folder's .txt files by path, then the JSONL lines", JSON.stringify(listed.map((d) => d.source)));
check(listed.every((d, i) => d.sha256 === sha256(docs[i][1]) && d.bytes === Buffer.byteLength(docs[i][1])),
  "each document's SHA-256 and byte count");
const corpusHash = sha256(docs.map(([, t]) => `${sha256(t)} ${Buffer.byteLength(t)}\n`).join(""));
check(text.corpus_sha256 === corpusHash, "the corpus hash", `${text.corpus_sha256}, want ${corpusHash}`);
check(text.window?.document === 1 && text.path === docs[1][0] && text.sha256 === sha256(docs[1][1]),
  "the window is the first document with at least 2 tokens", JSON.stringify(text.window));
check(text.tokens_used === listed[1]?.tokens && text.tokens_used < 20,
  "the window stops at its document's end, not in the next one", `${text.tokens_used} tokens`);

// The same tables as a run over that one document.
const aloneOut = path.join(tmp, "alone-out");
const alone = experiment(aloneOut, docs[1][0]);
check(alone.code === 0, "the document alone", alone.err);
for (const file of ["gradient.csv", "gradient_summary.csv"]) {
  const same = readFileSync(path.join(corpusOut, file)).equals(readFileSync(path.join(aloneOut, file)));
  check(same, `${file}: byte for byte the run over the window's document alone`);
}
const aloneText = JSON.parse(readFileSync(path.join(aloneOut, "gradient.json"), "utf8")).text ?? {};
check(aloneText.corpus_sha256 !== corpusHash && aloneText.documents?.length === 1, "a different corpus, a different hash");

// Order matters to the hash.
const swappedOut = path.join(tmp, "swapped-out");
experiment(swappedOut, jsonl, folder);
const swapped = JSON.parse(readFileSync(path.join(swappedOut, "gradient.json"), "utf8")).text ?? {};
check(swapped.corpus_sha256 && swapped.corpus_sha256 !== corpusHash && swapped.window?.document === 0,
  "the same documents in another order: another hash, and the JSONL's long line is the window");

// Bad corpora: the message names the file (and the line).
const bad = (name, content) => {
  const p = path.join(tmp, name);
  writeFileSync(p, content);
  return p;
};
const empty = path.join(tmp, "empty-folder");
mkdirSync(empty);
const cases = [
  [[bad("number.jsonl", '{"text":"fine"}\n{"text":12}\n')], /number\.jsonl:2: .*string field "text"/, "a JSONL text that is not a string"],
  [[bad("broken.jsonl", '{"text":"fine"}\n{"text":\n')], /broken\.jsonl:2: not JSON/, "a JSONL line that is not JSON"],
  [[bad("array.jsonl", '["text"]\n')], /array\.jsonl:1: .*object/, "a JSONL line that is not an object"],
  [[bad("blank.jsonl", "\n\n")], /blank\.jsonl: the JSONL file has no lines/, "a JSONL file without lines"],
  [[empty], /empty-folder: the folder has no \.txt files/, "a folder without .txt files"],
  [[jsonl, path.join(tmp, "no-such.txt")], /no-such\.txt: cannot be opened/, "a missing second --text"],
  [[bad("short.txt", ".")], /short\.txt: the text has 1 tokens/, "a corpus without a window"],
];
for (const [texts, pattern, what] of cases) {
  const f = experiment(path.join(tmp, "bad-out"), ...texts);
  check(f.code === 1 && pattern.test(f.err) && !f.signal, what, `exit ${f.code}: ${f.err.trim()}`);
}

// normalizer-swap over the folder's b.txt and the JSONL's short line: a.txt's one token makes no
// window; windows of 8 tokens stay inside their document, so the corpus's unmodified NLL sums those
// of each document run alone (as one corpus of its own), weighted by their predicted tokens.
if (!process.argv.includes("--without-swap")) {
  const swapRun = (out, ...texts) => run(["experiment", "normalizer-swap", "--model", model, ...texts.flatMap((t) => ["--text", t]),
    "--out", out, "--max-tokens", "8", "--quiet"]);
  const summaryOf = (out) => { try { return JSON.parse(readFileSync(path.join(out, "normalizer-swap.json"), "utf8")); } catch { return null; } };
  const both = path.join(tmp, "swap-both"), one = path.join(tmp, "swap-b"), two = path.join(tmp, "swap-light");
  const lightFile = path.join(tmp, "light.txt");
  writeFileSync(lightFile, "Let there be light");
  const rs = [swapRun(both, folder, lightFile), swapRun(one, docs[1][0]), swapRun(two, lightFile)];
  const [sb, s1, s2] = [both, one, two].map(summaryOf);
  check(rs.every((x) => x.code === 0) && sb && s1 && s2, "normalizer-swap runs over a corpus and over each document alone", rs.map((x) => x.err).join(" "));
  if (sb && s1 && s2) {
    const windows = sb.text.windows, perDoc = s1.text.windows.length;
    const inside = windows.every(([d, at, n]) => at + n <= sb.text.documents[d].tokens && (at % 8) === 0 && n >= 2);
    check(inside && windows.every(([d]) => d === 1 || d === 2) && windows.length === perDoc + s2.text.windows.length,
      "its windows are cut inside each document, 8 tokens at a time, none from the 1-token one", JSON.stringify(windows));
    const n1 = s1.baseline.predicted_tokens, n2 = s2.baseline.predicted_tokens;
    const want = (s1.baseline.mean_nll * n1 + s2.baseline.mean_nll * n2) / (n1 + n2);
    check(sb.baseline.predicted_tokens === n1 + n2 && Math.abs(sb.baseline.mean_nll - want) < 1e-12,
      "the corpus's NLL is the token-weighted mean of the documents' own", `${sb.baseline.mean_nll} vs ${want}`);
  }
}

rmSync(tmp, { recursive: true, force: true });
finish("cli corpus");
