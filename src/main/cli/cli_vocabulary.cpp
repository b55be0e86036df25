#include "main/cli/cli_vocabulary.h"

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

}  // namespace attnlab
