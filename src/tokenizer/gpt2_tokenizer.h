#pragma once
// GPT-2's tokenizer is the one Tokenizer (tokenizer/tokenizer.h) loaded from GPT-2's
// encoder.json and vocab.bpe: the name stays for the code that says which vocabulary it means.
#include "tokenizer/tokenizer.h"

namespace attnlab {

using Gpt2Tokenizer = Tokenizer;

}  // namespace attnlab
