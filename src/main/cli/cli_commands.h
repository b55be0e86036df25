#pragma once
// The attnlab CLI's subcommands, one file each (cli_<name>.cpp). Each gets argv with
// argv[first] the first option after the subcommand's name, prints its result to stdout
// and errors to stderr, and returns the exit code (0 ok, 1 failure, 2 bad usage).
namespace attnlab {

int cli_tokenize(int argc, char** argv, int first);
int cli_logits(int argc, char** argv, int first);
int cli_attention(int argc, char** argv, int first);
int cli_generate(int argc, char** argv, int first);
int cli_analyze(int argc, char** argv, int first);
int cli_experiment(int argc, char** argv, int first);
int cli_perplexity(int argc, char** argv, int first);
// `experiment normalizer-swap`, with argv[first] the first option after its name.
int cli_normalizer_swap(int argc, char** argv, int first);
// `experiment fading`, likewise.
int cli_fading(int argc, char** argv, int first);
int cli_random_checkpoint(int argc, char** argv, int first);
// `merge DIR... --out DIR`: joins the folders of an experiment run with --shard K/N.
int cli_merge(int argc, char** argv, int first);

}  // namespace attnlab
