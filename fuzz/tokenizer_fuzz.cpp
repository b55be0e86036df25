// libFuzzer target: arbitrary bytes through GPT-2's tokenizer. Traps when it breaks a promise:
// every id is inside the vocabulary, valid UTF-8 comes back byte for byte from decode(), and
// a warning is given exactly when the input is not valid UTF-8. Built and run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "platform/whole_file.h"
#include "tokenizer/gpt2_tokenizer.h"

namespace {

attnlab::Gpt2Tokenizer g_tokenizer;

void check(bool ok) {
    if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    std::string error;
    const std::string dir = std::string(ATTNLAB_ASSETS_DIR) + "/gpt2/";
    check(g_tokenizer.load(attnlab::read_whole_file(dir + "encoder.json"), attnlab::read_whole_file(dir + "vocab.bpe"), error));
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::vector<std::string> warnings;
    const std::vector<int> ids = g_tokenizer.encode(text, &warnings);
    for (int id : ids) check(id >= 0 && id < g_tokenizer.vocab_size());
    check(ids.empty() == text.empty());
    if (warnings.empty()) check(g_tokenizer.decode(ids) == text);
    else check(g_tokenizer.decode(ids) != text);  // U+FFFD replaced something
    return 0;
}
