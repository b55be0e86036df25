// attnlab random-checkpoint: a GPT-2 checkpoint of any shape with random weights, written as
// model.safetensors + config.json in the Hugging Face layout. The browser tests serve these
// from localhost (the real weights cannot be downloaded where the tests run).
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

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

}  // namespace

int cli_random_checkpoint(int argc, char** argv, int first) {
    CliArgs args;
    std::string error;
    if (!args.parse(argc, argv, first, {"out", "layers", "heads", "embd", "positions", "vocab", "seed", "dtype", "shards"}, {}, error))
        return fail(error, 2);
    if (!args.value("out")) return fail("--out DIR is required (an existing folder)", 2);
    Gpt2Config c;  // GPT-2 small unless told otherwise
    std::optional<std::int64_t> layers, heads, embd, positions, vocab, seed, shards;
    if (!args.get_int("layers", 1, 48, layers, error) || !args.get_int("heads", 1, 64, heads, error) ||
        !args.get_int("embd", 1, 4096, embd, error) || !args.get_int("positions", 1, 4096, positions, error) ||
        !args.get_int("vocab", 1, 1 << 20, vocab, error) || !args.get_int("seed", 0, INT64_MAX, seed, error) ||
        !args.get_int("shards", 1, 1000, shards, error))
        return fail(error, 2);
    DType dtype = DType::F32;
    if (const auto d = args.value("dtype")) {
        if (*d == "f16") dtype = DType::F16;
        else if (*d == "bf16") dtype = DType::BF16;
        else if (*d != "f32") return fail("--dtype must be f32, f16 or bf16, not '" + *d + "'", 2);
    }
    if (layers) c.n_layer = static_cast<int>(*layers);
    if (heads) c.n_head = static_cast<int>(*heads);
    if (embd) c.n_embd = static_cast<int>(*embd);
    if (positions) c.n_positions = static_cast<int>(*positions);
    if (vocab) c.vocab_size = static_cast<int>(*vocab);
    if (c.n_embd % c.n_head != 0)
        return fail("--embd (" + std::to_string(c.n_embd) + ") must be a multiple of --heads (" + std::to_string(c.n_head) + ")", 2);
    const int tensors = 4 + 12 * c.n_layer;
    if (shards && *shards > tensors)
        return fail("--shards " + std::to_string(*shards) + " is more than the checkpoint's " + std::to_string(tensors) + " tensors", 2);
    const std::vector<CheckpointFile> files =
        random_checkpoint_files(c, seed ? static_cast<std::uint64_t>(*seed) : 1, dtype, shards ? static_cast<int>(*shards) : 1);
    const std::string config = gpt2_config_json(c);
    const std::string dir = *args.value("out");
    double bytes = 0;
    for (const CheckpointFile& f : files) {
        if (!write_file(dir + "/" + f.name, f.bytes.data(), f.bytes.size()))
            return fail("cannot write into " + dir + " (does the folder exist?)");
        bytes += static_cast<double>(f.bytes.size());
    }
    if (!write_file(dir + "/config.json", config.data(), config.size()))
        return fail("cannot write into " + dir + " (does the folder exist?)");
    std::printf("wrote %s/%s (%.1f MB, %s, %zu file%s) and %s/config.json: %d layers, %d heads, n_embd %d, %d positions, vocabulary %d\n",
                dir.c_str(), files.size() == 1 ? "model.safetensors" : "model.safetensors.index.json", bytes / 1e6, dtype_name(dtype),
                files.size(), files.size() == 1 ? "" : "s", dir.c_str(), c.n_layer, c.n_head, c.n_embd, c.n_positions, c.vocab_size);
    return 0;
}

}  // namespace attnlab
