// Entry point of the attnlab command-line tool (native build).
#include <cstdio>
#include <cstring>

#include "main/cli/cli_checkpoint.h"
#include "main/cli/cli_commands.h"

namespace {

struct Command {
    const char* name;
    int (*run)(int, char**, int);
    const char* summary;
};

const Command kCommands[] = {
    {"tokenize", attnlab::cli_tokenize, "tokenize [--json] [--batch] [--vocab-dir DIR | --model DIR]   token ids of standard input"},
    {"logits", attnlab::cli_logits,
     "logits --model FILE --ids 1,2,3 [--attention SPEC] [--json [--all-positions]]   next-token logits at the last position\n"
     "                 (or at every position)"},
    {"attention", attnlab::cli_attention,
     "attention --model FILE --ids ... --layer L --head H [--attention SPEC] [--json]   one head's T x T weights"},
    {"generate", attnlab::cli_generate,
     "generate --model FILE --prompt TEXT -n N [--temperature T --top-k K --top-p P --seed S] [--attention SPEC]"},
    {"perplexity", attnlab::cli_perplexity,
     "perplexity --model FILE (--text FILE | --ids 1,2,3) [--attention SPEC] [--max-tokens n] [--json]\n"
     "                 [--capture]   exp of the mean -ln p(token | the tokens before it) over the text's predicted positions\n"
     "                 (--capture: keep what the page keeps of the pass, to measure its memory)"},
    {"analyze", attnlab::cli_analyze, "analyze --input FILE.json [--json]   the paper's quantities for one query's logits and vectors"},
    {"experiment", attnlab::cli_experiment,
     "experiment NAME --model FILE --text FILE --out DIR   the paper's experiments (NAME: distance-vs-L, distance-vs-N,\n"
     "                 critical-n, separability, gradient, all, normalizer-swap, fading); `attnlab experiment --help` lists the options"},
    {"merge", attnlab::cli_merge,
     "merge DIR... --out DIR   joins the folders of `experiment NAME --shard K/N` into the files of the run without --shard"},
    {"random-checkpoint", attnlab::cli_random_checkpoint,
     "random-checkpoint --out DIR [--arch gpt2|llama|qwen2|qwen3] [--layers 12 --heads 12 --embd 768 --positions 1024 --vocab 50257 --seed "
     "1]\n"
     "                 [--kv-heads N --head-dim D --intermediate I --tied 0|1 (llama, qwen2, qwen3)] [--dtype f32|f16|bf16] [--shards N]\n"
     "                 a checkpoint of that family with random weights (model.safetensors or its shards, config.json)"},
};

void usage(FILE* out) {
    std::fprintf(out, "usage: attnlab COMMAND [OPTIONS]\n\ncommands:\n");
    for (const Command& c : kCommands) std::fprintf(out, "  %s\n", c.summary);
    std::fprintf(out, "\nSPEC, an attention plan (the model's own by default):\n%s", attnlab::kAttentionOptionHelp);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    for (const Command& c : kCommands)
        if (!std::strcmp(argv[1], c.name)) return c.run(argc, argv, 2);
    std::fprintf(stderr, "attnlab: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
