#include "main/cli_vocabulary.h"

#include <fstream>
#include <sstream>

namespace attnlab {

static bool read_whole_file(const std::string& path, std::string& out, std::string& error) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        error = path + ": cannot be opened (pass --vocab-dir DIR holding encoder.json and vocab.bpe)";
        return false;
    }
    std::ostringstream s;
    s << in.rdbuf();
    out = s.str();
    return true;
}

bool load_vocabulary(const std::optional<std::string>& dir, Gpt2Tokenizer& tokenizer, std::string& error) {
    const std::string folder = dir.value_or(std::string(ATTNLAB_ASSETS_DIR) + "/gpt2");
    std::string encoder, merges;
    return read_whole_file(folder + "/encoder.json", encoder, error) && read_whole_file(folder + "/vocab.bpe", merges, error) &&
           tokenizer.load(encoder, merges, error);
}

}  // namespace attnlab
