// libFuzzer target: arbitrary bytes as tokenizer.json. Loading either succeeds or gives a
// message; a loaded tokenizer then encodes fixed texts and the input itself, and traps if an
// id falls outside the vocabulary or two encodings of the same text differ. Built and run by
// scripts/fuzz.sh (seeds: fuzz/corpus/tokenizer_json/, small files of each kind we read).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

void check_encoding(const attnlab::Tokenizer& t, std::string_view text) {
    const std::vector<int> ids = t.encode(text);
    for (int id : ids) check(id >= 0 && id < t.vocab_size());
    check(ids == t.encode(text));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view json(reinterpret_cast<const char*>(data), size);
    attnlab::Tokenizer t;
    std::string error;
    if (!t.load_json(json, "", error)) {
        check(!error.empty() && !t.loaded());
        return 0;
    }
    static const char* const texts[] = {"", "Hello world, it's 2024!\n\n  x", "\xC3\xA9\xE2\x82\xAC \xF0\x9F\x98\x80 e\xCC\x81",
                                        "<s>a</s><|endoftext|>", "\xFF\xC3"};
    for (const char* text : texts) check_encoding(t, text);
    check_encoding(t, json);
    return 0;
}
