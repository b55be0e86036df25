#include "main/cli/cli_checkpoint.h"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <vector>

#include "platform/whole_file.h"

namespace attnlab {

bool open_checkpoint(const std::string& path, Checkpoint& ck, std::string& error) {
    namespace fs = std::filesystem;
    fs::path file = path;
    std::error_code ec;
    if (fs::is_directory(file, ec)) file /= "model.safetensors";
    ck.path = file.string();
    if (!ck.file.open(file.string(), error)) return false;
    if (!ck.reader.open(ck.file.bytes(), file.string(), error)) return false;

    const fs::path config_path = file.parent_path() / "config.json";
    std::optional<Gpt2Config> config;
    if (fs::exists(config_path, ec)) {
        std::string text;
        if (!read_whole_file(config_path.string(), text, error)) return false;
        const std::string type = config_model_type(text);
        if (!type.empty() && type != "gpt2") {
            LlamaConfig c;
            if (!parse_llama_config(text, config_path.string(), c, error) || !ck.llama.load(ck.reader, c, error)) return false;
            ck.decoder = &ck.llama;
            return true;
        }
        Gpt2Config c;
        if (!parse_gpt2_config(text, config_path.string(), c, error)) return false;
        config = c;
    }
    std::vector<std::string> warnings;
    if (!ck.model.load(ck.reader, config ? &*config : nullptr, error, &warnings)) return false;
    for (const std::string& w : warnings) std::fprintf(stderr, "attnlab: warning: %s\n", w.c_str());
    ck.decoder = &ck.model;
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
