#pragma once
// Unicode Normalization Form C of UTF-8 text, as JavaScript's normalize('NFC') computes it
// (the tables come from node: tools/gen_unicode_nfc.mjs). Used by tokenizer.json's "NFC"
// normalizer.
#include <string>
#include <string_view>

namespace attnlab {

// NFC of valid UTF-8 text.
std::string nfc(std::string_view utf8);

}  // namespace attnlab
