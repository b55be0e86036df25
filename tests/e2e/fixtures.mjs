// Checkpoints for the browser test, made by the native CLI into a temporary folder (never the
// network): small random GPT-2s and a few broken files. Also the CLI's tokenizer, as the
// reference token count for typed text.
import { execFileSync } from "node:child_process";
import { mkdtemp, mkdir, writeFile, readFile, copyFile, rm } from "node:fs/promises";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";

function randomCheckpoint(cli, dir, shape) {
  const a = ["random-checkpoint", "--out", dir, "--layers", shape.layers, "--heads", shape.heads, "--embd", shape.embd,
             "--positions", shape.positions, "--seed", shape.seed ?? 1].map(String);
  try {
    execFileSync(cli, a, { stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    throw new Error(`'${cli} ${a.join(" ")}' failed: ${String(e.stderr || e.message).trim()}`);
  }
}

// The shapes the tests load. `small` is quick everywhere; `long` has a longer context and more
// layers, so that a forward pass over ~1000 tokens spans several frames (with 4 layers it took
// 0.3 s in the threaded page, one or two of SwiftShader's frames with the cores busy).
export const shapes = {
  small: { layers: 2, heads: 4, embd: 64, positions: 256, seed: 1 },
  long: { layers: 16, heads: 4, embd: 128, positions: 1024, seed: 2 },
};
// Made only when asked for (makeFixtures' `extra`): `big`, about 116 MB, for the phone suite's
// small-memory check (more than the 64 MB it lets the page's memory grow).
export const extraShapes = {
  big: { layers: 2, heads: 4, embd: 512, positions: 256, seed: 3 },
};

// Returns { dir, remove() }; dir holds small/, long/, notst/, wrongshape/, truncated/, and the
// `extra` ones of extraShapes. With `only`, just those of `shapes` (and none of the broken files).
export async function makeFixtures(cli, { only = null, extra = [] } = {}) {
  if (!existsSync(cli)) throw new Error(`no native CLI at ${cli} (build it, or pass --cli PATH)`);
  const dir = await mkdtemp(path.join(os.tmpdir(), "attnlab-e2e-"));
  const remove = () => rm(dir, { recursive: true, force: true });
  for (const name of extra) {
    await mkdir(path.join(dir, name));
    randomCheckpoint(cli, path.join(dir, name), extraShapes[name]);
  }
  if (only) {
    for (const name of only) {
      await mkdir(path.join(dir, name));
      randomCheckpoint(cli, path.join(dir, name), shapes[name]);
    }
    return { dir, remove };
  }
  for (const [name, shape] of Object.entries(shapes)) {
    await mkdir(path.join(dir, name));
    randomCheckpoint(cli, path.join(dir, name), shape);
  }
  const small = path.join(dir, "small");
  // An HTML page where a checkpoint should be (what a wrong link usually gives).
  await mkdir(path.join(dir, "notst"));
  await writeFile(path.join(dir, "notst", "model.safetensors"),
                  "<!doctype html><html><head><title>Sign in</title></head><body>Please sign in.</body></html>\n");
  // Tensors of the small model, a config.json that promises twice the width.
  await mkdir(path.join(dir, "wrongshape"));
  await copyFile(path.join(small, "model.safetensors"), path.join(dir, "wrongshape", "model.safetensors"));
  const config = JSON.parse(await readFile(path.join(small, "config.json"), "utf8"));
  await writeFile(path.join(dir, "wrongshape", "config.json"), JSON.stringify({ ...config, n_embd: config.n_embd * 2 }));
  // The small model cut off at 60%: the header promises tensors the file does not hold.
  await mkdir(path.join(dir, "truncated"));
  const bytes = await readFile(path.join(small, "model.safetensors"));
  await writeFile(path.join(dir, "truncated", "model.safetensors"), bytes.subarray(0, Math.floor(bytes.length * 0.6)));
  await copyFile(path.join(small, "config.json"), path.join(dir, "truncated", "config.json"));
  return { dir, remove };
}

// GPT-2 token ids of `text`, from the native tokenizer (the reference for the page's count).
export function tokenize(cli, text) {
  const out = execFileSync(cli, ["tokenize", "--json"], { input: text });
  return JSON.parse(out.toString());
}
