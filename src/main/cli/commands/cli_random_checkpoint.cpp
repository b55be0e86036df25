// attnlab random-checkpoint: a GPT-2, Llama, Qwen2 or Qwen3 checkpoint of any shape with random weights, written as
// model.safetensors + config.json in the Hugging Face layout. The browser tests serve these
// from localhost (the real weights cannot be downloaded where the tests run).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "main/cli/cli_args.h"
#include "main/cli/cli_commands.h"
#include "model/random_checkpoint.h"

namespace attnlab {

namespace {

int fail(const std::string& message, int code = 1) {
    std::fprintf(stderr, "attnlab random-checkpoint: %s\n", message.c_str());
    return code;
}

bool write_file(const std::string& path, const void* data, size_t size) {
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) return false;
    const bool ok = std::fwrite(data, 1, size, f) == size;
    return std::fclose(f) == 0 && ok;
}

std::string too_many_shards(int shards, int tensors) {
    return "--shards " + std::to_string(shards) + " is more than the checkpoint's " + std::to_string(tensors) + " tensors";
}

// The files, then config.json, into --out; what was written on stdout.
int write_checkpoint(const CliArgs& args, const std::vector<CheckpointFile>& files, const std::string& config, DType dtype,
                     const std::string& shape) {
    const std::string dir = *args.value("out");
    double bytes = 0;
    for (const CheckpointFile& f : files) {
        if (!write_file(dir + "/" + f.name, f.bytes.data(), f.bytes.size()))
            return fail("cannot write into " + dir + " (does the folder exist?)");
        bytes += static_cast<double>(f.bytes.size());
    }
    if (!write_file(dir + "/config.json", config.data(), config.size()))
        return fail("cannot write into " + dir + " (does the folder exist?)");
    std::printf("wrote %s/%s (%.1f MB, %s, %zu file%s) and %s/config.json: %s\n", dir.c_str(),
                files.size() == 1 ? "model.safetensors" : "model.safetensors.index.json", bytes / 1e6, dtype_name(dtype), files.size(),
                files.size() == 1 ? "" : "s", dir.c_str(), shape.c_str());
    return 0;
}

// --arch llama|qwen2|qwen3: the family's shape options over LlamaConfig's defaults.
int llama_checkpoint(const CliArgs& args, LlamaArch arch, std::uint64_t seed, DType dtype, int shards) {
    LlamaConfig c;
    c.arch = arch;
    std::string error;
    std::optional<std::int64_t> layers, heads, kv, embd, head_dim, inter, positions, vocab, tied;
    if (!args.get_int("layers", 1, 256, layers, error) || !args.get_int("heads", 1, 256, heads, error) ||
        !args.get_int("kv-heads", 1, 256, kv, error) || !args.get_int("embd", 1, 16384, embd, error) ||
        !args.get_int("head-dim", 2, 1024, head_dim, error) || !args.get_int("intermediate", 1, 65536, inter, error) ||
        !args.get_int("positions", 1, 1 << 20, positions, error) || !args.get_int("vocab", 1, 1 << 20, vocab, error) ||
        !args.get_int("tied", 0, 1, tied, error))
        return fail(error, 2);
    if (layers) c.num_hidden_layers = static_cast<int>(*layers);
    if (heads) c.num_attention_heads = static_cast<int>(*heads);
    c.num_key_value_heads = kv ? static_cast<int>(*kv) : c.num_attention_heads;
    if (embd) c.hidden_size = static_cast<int>(*embd);
    c.head_dim = head_dim ? static_cast<int>(*head_dim) : c.hidden_size / c.num_attention_heads;
    if (inter) c.intermediate_size = static_cast<int>(*inter);
    if (positions) c.max_position_embeddings = static_cast<int>(*positions);
    if (vocab) c.vocab_size = static_cast<int>(*vocab);
    c.tie_word_embeddings = tied.value_or(arch == LlamaArch::Qwen3) != 0;
    // The written config.json goes through the same checks a downloaded one does.
    LlamaConfig checked;
    const std::string config = llama_config_json(c);
    if (!parse_llama_config(config, "the options", checked, error)) return fail(error, 2);
    if (shards > random_checkpoint_tensors(c)) return fail(too_many_shards(shards, random_checkpoint_tensors(c)), 2);
    char shape[256];
    std::snprintf(shape, sizeof shape,
                  "%s, %d layers, %d heads on %d key/value heads, hidden %d, head_dim %d, intermediate %d, %d positions, vocabulary %d",
                  arch_name(arch), c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.hidden_size, c.head_dim,
                  c.intermediate_size, c.max_position_embeddings, c.vocab_size);
    return write_checkpoint(args, random_checkpoint_files(c, seed, dtype, shards), config, dtype, shape);
}

}  // namespace

int cli_random_checkpoint(int argc, char** argv, int first) {
    CliArgs args;
    std::string error;
    if (!args.parse(argc, argv, first,
                    {"out", "arch", "layers", "heads", "kv-heads", "embd", "head-dim", "intermediate", "positions", "vocab", "tied", "seed",
                     "dtype", "shards"},
                    {}, error))
        return fail(error, 2);
    if (!args.value("out")) return fail("--out DIR is required (an existing folder)", 2);
    // Asked before the weights are drawn: a billion of them take most of a minute.
    std::error_code not_there;
    if (!std::filesystem::is_directory(*args.value("out"), not_there))
        return fail("--out " + *args.value("out") + " is not an existing folder", 2);
    std::optional<std::int64_t> seed_option, shards_option;
    if (!args.get_int("seed", 0, INT64_MAX, seed_option, error) || !args.get_int("shards", 1, 1000, shards_option, error))
        return fail(error, 2);
    const std::uint64_t seed = seed_option ? static_cast<std::uint64_t>(*seed_option) : 1;
    const int shards = shards_option ? static_cast<int>(*shards_option) : 1;
    DType dtype = DType::F32;
    if (const auto d = args.value("dtype")) {
        if (*d == "f16") dtype = DType::F16;
        else if (*d == "bf16") dtype = DType::BF16;
        else if (*d != "f32") return fail("--dtype must be f32, f16 or bf16, not '" + *d + "'", 2);
    }
    const std::string arch = args.value("arch").value_or("gpt2");
    if (arch != "gpt2") {
        if (arch == "llama") return llama_checkpoint(args, LlamaArch::Llama, seed, dtype, shards);
        if (arch == "qwen2") return llama_checkpoint(args, LlamaArch::Qwen2, seed, dtype, shards);
        if (arch == "qwen3") return llama_checkpoint(args, LlamaArch::Qwen3, seed, dtype, shards);
        return fail("--arch " + arch + " is not supported; supported: gpt2, llama, qwen2, qwen3", 2);
    }
    for (const char* option : {"kv-heads", "head-dim", "intermediate", "tied"})
        if (args.value(option)) return fail(std::string("--") + option + " is for --arch llama, qwen2 or qwen3", 2);
    Gpt2Config c;  // GPT-2 small unless told otherwise
    std::optional<std::int64_t> layers, heads, embd, positions, vocab;
    if (!args.get_int("layers", 1, 48, layers, error) || !args.get_int("heads", 1, 64, heads, error) ||
        !args.get_int("embd", 1, 4096, embd, error) || !args.get_int("positions", 1, 1 << 20, positions, error) ||
        !args.get_int("vocab", 1, 1 << 20, vocab, error))
        return fail(error, 2);
    if (layers) c.n_layer = static_cast<int>(*layers);
    if (heads) c.n_head = static_cast<int>(*heads);
    if (embd) c.n_embd = static_cast<int>(*embd);
    if (positions) c.n_positions = static_cast<int>(*positions);
    if (vocab) c.vocab_size = static_cast<int>(*vocab);
    if (c.n_embd % c.n_head != 0)
        return fail("--embd (" + std::to_string(c.n_embd) + ") must be a multiple of --heads (" + std::to_string(c.n_head) + ")", 2);
    if (shards > random_checkpoint_tensors(c)) return fail(too_many_shards(shards, random_checkpoint_tensors(c)), 2);
    char shape[160];
    std::snprintf(shape, sizeof shape, "%d layers, %d heads, n_embd %d, %d positions, vocabulary %d", c.n_layer, c.n_head, c.n_embd,
                  c.n_positions, c.vocab_size);
    return write_checkpoint(args, random_checkpoint_files(c, seed, dtype, shards), gpt2_config_json(c), dtype, shape);
}

}  // namespace attnlab
