#include "main/cli/cli_vocabulary.h"

#include <filesystem>

#include "platform/whole_file.h"

namespace attnlab {

bool load_vocabulary(const std::optional<std::string>& dir, Gpt2Tokenizer& tokenizer, std::string& error) {
    const std::string folder = dir.value_or(std::string(ATTNLAB_ASSETS_DIR) + "/gpt2");
    std::string encoder, merges;
    if (!read_whole_file(folder + "/encoder.json", encoder, error) || !read_whole_file(folder + "/vocab.bpe", merges, error)) {
        error += " (pass --vocab-dir DIR holding encoder.json and vocab.bpe)";
        return false;
    }
    return tokenizer.load(encoder, merges, error);
}

bool load_model_tokenizer(const std::string& dir, Tokenizer& tokenizer, std::string& error) {
    std::string json, config;
    if (!read_whole_file(dir + "/tokenizer.json", json, error)) {
        std::string probe;
        if (read_whole_file(dir + "/encoder.json", probe, error)) return load_vocabulary(dir, tokenizer, error);
        error = dir + "/tokenizer.json: cannot be opened (nor is there a GPT-2 encoder.json and vocab.bpe)";
        return false;
    }
    std::string ignored;
    read_whole_file(dir + "/tokenizer_config.json", config, ignored);  // optional
    if (!tokenizer.load_json(json, config, error)) {
        error = dir + "/" + error;
        return false;
    }
    return true;
}

bool load_text_tokenizer(const CliArgs& args, Tokenizer& tokenizer, std::string& error) {
    if (args.value("vocab-dir") || !args.value("model")) return load_vocabulary(args.value("vocab-dir"), tokenizer, error);
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::path folder(*args.value("model"));
    if (!fs::is_directory(folder, ec)) folder = folder.parent_path();
    if (folder.empty()) folder = ".";
    if (fs::is_regular_file(folder / "tokenizer.json", ec)) return load_model_tokenizer(folder.string(), tokenizer, error);
    return load_vocabulary(std::nullopt, tokenizer, error);
}

}  // namespace attnlab
