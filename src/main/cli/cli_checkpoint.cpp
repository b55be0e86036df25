#include "main/cli/cli_checkpoint.h"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <vector>

#include "model/open_decoder.h"
#include "platform/whole_file.h"

namespace attnlab {

namespace {

constexpr const char* kIndexName = "model.safetensors.index.json";

// The index, then every file it names, mapped, then the reader over them all.
bool open_shards(const std::filesystem::path& index_path, Checkpoint& ck, std::string& error) {
    std::string text;
    ShardIndex index;
    if (!read_whole_file(index_path.string(), text, error) || !parse_shard_index(text, index_path.string(), index, error)) return false;
    std::vector<SafetensorsReader::Shard> shards;
    ck.shards.resize(index.files.size());
    for (size_t i = 0; i < index.files.size(); ++i) {
        const std::string path = (index_path.parent_path() / index.files[i]).string();
        if (!ck.shards[i].open(path, error)) {
            std::string tensor;
            for (const auto& [name, file] : index.weight_map)
                if (file == index.files[i]) tensor = name;
            error = index_path.string() + ": shard " + index.files[i] + " (holding tensor '" + tensor +
                    "' among others) cannot be read: " + error;
            return false;
        }
        shards.push_back({path, ck.shards[i].bytes()});
    }
    return ck.reader.open_shards(index, shards, error);
}

// The loaded model holds packed copies of most weights (linear.h, with AVX-512): the file's pages
// read to make them need not stay resident beside them (SmolLM2-135M's 269 MB, Qwen2.5-0.5B's
// 988 MB). What the model reads in place loads again as it is touched.
void drop_read_pages(const Checkpoint& ck) {
    ck.file.drop_resident_pages();
    for (const MappedFile& shard : ck.shards) shard.drop_resident_pages();
}

}  // namespace

bool open_checkpoint(const std::string& path, Checkpoint& ck, std::string& error) {
    namespace fs = std::filesystem;
    fs::path file = path;
    std::error_code ec;
    if (fs::is_directory(file, ec))
        file /= fs::exists(file / "model.safetensors", ec) || !fs::exists(file / kIndexName, ec) ? "model.safetensors" : kIndexName;
    ck.path = file.string();
    if (file.filename() == kIndexName) {
        if (!open_shards(file, ck, error)) return false;
    } else if (!ck.file.open(file.string(), error) || !ck.reader.open(ck.file.bytes(), file.string(), error)) {
        return false;
    }

    const fs::path config_path = file.parent_path() / "config.json";
    std::string text;
    if (fs::exists(config_path, ec) && !read_whole_file(config_path.string(), text, error)) return false;
    DecoderConfig config;
    if (!parse_decoder_config(text, config_path.string(), config, error)) return false;
    if (config.llama) {
        if (!ck.llama.load(ck.reader, *config.llama, error)) return false;
        ck.decoder = &ck.llama;
        drop_read_pages(ck);
        return true;
    }
    std::vector<std::string> warnings;
    if (!ck.model.load(ck.reader, config.gpt2 ? &*config.gpt2 : nullptr, error, &warnings)) return false;
    for (const std::string& w : warnings) std::fprintf(stderr, "attnlab: warning: %s\n", w.c_str());
    ck.decoder = &ck.model;
    drop_read_pages(ck);
    return true;
}
bool attention_plan_option(const std::optional<std::string>& spec, const DecoderModel& model, AttentionPlan& plan, std::string& error) {
    plan = model.trained_plan();
    if (!spec) return true;
    std::string why;
    if (!parse_attention_spec(*spec, model.shape().n_layer, model.shape().n_head, plan, why)) {
        error = "--attention: " + why;
        return false;
    }
    return true;
}

}  // namespace attnlab
