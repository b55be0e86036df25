// GPT-2 tokenizer, checked against ids from independent implementations: PAPER.md §8 and, for
// everything else, js-tiktoken 1.0.21 (getEncoding("gpt2"), special tokens allowed) and
// gpt-3-encoder 1.1.4, which agree on every case here (gpt-3-encoder has no "<|endoftext|>"
// special token, so those cases come from js-tiktoken alone). The expected text of invalid
// UTF-8 is what Python's bytes.decode('utf-8', errors='replace') returns. The bulk comparison
// on >= 1 MB of text is tests/tokenizer/reference/compare.mjs.
//
// The vocabulary is read from ATTNLAB_ASSETS_DIR/gpt2 (in the wasm build, files embedded there;
// without the definition the suite has one failing test that says so).
#include <catch2/catch.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "base/utf8.h"
#include "platform/whole_file.h"
#include "tokenizer/gpt2_tokenizer.h"
#include "tokenizer/unicode_classes.h"

// Facts from the Unicode Character Database (general categories) and ECMAScript (\s).
TEST_CASE("tokenizer: letter, number and white-space classes", "[tokenizer]") {
    using attnlab::is_js_space;
    using attnlab::is_letter;
    using attnlab::is_number;
    const char32_t letters[] = {U'A',
                                U'Z',
                                U'a',
                                U'z',
                                0xAA /* ª Lo */,
                                0xB5 /* µ Ll */,
                                0xBA,
                                0xC0,
                                0xD6,
                                0xD8,
                                0xF6,
                                0xF8,
                                0x2C6 /* ˆ Lm */,
                                0x370,
                                0x3A9,
                                0x416,
                                0x5D0,
                                0x627,
                                0x915,
                                0xD04 /* Malayalam, Unicode 13 */,
                                0xE01,
                                0x10D0,
                                0x3005 /* 々 Lm */,
                                0x3041,
                                0x4E00,
                                0x4E07 /* 万 */,
                                0x9FFF,
                                0xAC00,
                                0xD7A3,
                                0xFB01 /* ﬁ */,
                                0xFF21,
                                0x10330,
                                0x1D400,
                                0x20000,
                                0x2A6DF};
    const char32_t numbers[] = {U'0',
                                U'9',
                                0xB2 /* ² No */,
                                0xB9,
                                0xBD /* ½ */,
                                0x660,
                                0x6F9,
                                0x966,
                                0xE50,
                                0x16EE /* runic Nl */,
                                0x2070,
                                0x2160 /* Ⅰ Nl */,
                                0x2189,
                                0x2460 /* ① */,
                                0x3007 /* 〇 Nl */,
                                0xFF10,
                                0x10107,
                                0x1D7CE,
                                0x1F100};
    const char32_t spaces[] = {0x09,   0x0A,   0x0B,   0x0C,   0x0D,   0x20,   0xA0,   0x1680, 0x2000,
                               0x2005, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF};
    // Marks, symbols, punctuation, format and private-use characters, noncharacters, and
    // U+0085 / U+180E / U+200B, which some regex flavours count as white space but JavaScript does not.
    const char32_t others[] = {
        0x00,           0x1F,   U'!',   U'\'',  U'_',   0x7F,    0x85,    0xD7 /* × */, 0xF7,    0x300 /* combining grave */,
        0x903 /* Mc */, 0x93F,  0xE31,  0x180E, 0x200B, 0x200D,  0x2060,  0x20AC,       0x2019,  0x3001,
        0xE000,         0xFE0F, 0xFFFD, 0xFFFE, 0xFFFF, 0x1F3FD, 0x1F600, 0xE0067,      0x10FFFF};
    for (char32_t c : letters) {
        INFO("U+" << std::hex << static_cast<unsigned>(c));
        CHECK(is_letter(c));
        CHECK_FALSE(is_number(c));
        CHECK_FALSE(is_js_space(c));
    }
    for (char32_t c : numbers) {
        INFO("U+" << std::hex << static_cast<unsigned>(c));
        CHECK_FALSE(is_letter(c));
        CHECK(is_number(c));
        CHECK_FALSE(is_js_space(c));
    }
    for (char32_t c : spaces) {
        INFO("U+" << std::hex << static_cast<unsigned>(c));
        CHECK_FALSE(is_letter(c));
        CHECK_FALSE(is_number(c));
        CHECK(is_js_space(c));
    }
    for (char32_t c : others) {
        INFO("U+" << std::hex << static_cast<unsigned>(c));
        CHECK_FALSE(is_letter(c));
        CHECK_FALSE(is_number(c));
        CHECK_FALSE(is_js_space(c));
    }
    // JavaScript's \s is exactly the 25 code points above (with 0x2001..0x2009), and no code
    // point is in two classes.
    int n_spaces = 0, n_overlaps = 0;
    for (char32_t c = 0; c <= 0x10FFFF; ++c) {
        n_spaces += is_js_space(c);
        n_overlaps += (is_letter(c) + is_number(c) + is_js_space(c)) > 1;
    }
    CHECK(n_spaces == 25);
    CHECK(n_overlaps == 0);
}

#ifndef ATTNLAB_ASSETS_DIR
// Fail loudly rather than skip: every tokenizer check needs the vocabulary.
TEST_CASE("tokenizer: ATTNLAB_ASSETS_DIR names the vocabulary's folder", "[tokenizer]") {
    FAIL(
        "ATTNLAB_ASSETS_DIR is not defined for this test target; CMake must set it to the folder holding "
        "gpt2/encoder.json and gpt2/vocab.bpe");
}
#else

using attnlab::Gpt2Tokenizer;
using Ids = std::vector<int>;

namespace {

std::string read_asset(const std::string& name) { return attnlab::read_whole_file(std::string(ATTNLAB_ASSETS_DIR) + "/gpt2/" + name); }

const std::string& encoder_json() {
    static const std::string bytes = read_asset("encoder.json");
    return bytes;
}
const std::string& vocab_bpe() {
    static const std::string bytes = read_asset("vocab.bpe");
    return bytes;
}

// The real GPT-2 tokenizer, loaded once. A missing or broken file fails every test that uses it.
const Gpt2Tokenizer& gpt2() {
    static std::string error;
    static Gpt2Tokenizer tok;
    static const bool ok = tok.load(encoder_json(), vocab_bpe(), error);
    INFO("loading " << ATTNLAB_ASSETS_DIR << "/gpt2: " << error);
    REQUIRE(ok);
    return tok;
}

Ids encode(const std::string& text) { return gpt2().encode(text); }

// Ids as a run-length list {{id, count}, ...}, for long inputs.
Ids repeated(std::initializer_list<std::pair<int, int> > runs) {
    Ids ids;
    for (const auto& [id, count] : runs) ids.insert(ids.end(), static_cast<size_t>(count), id);
    return ids;
}

// Replaces the first occurrence of `from` in `s` (which must be there) by `to`.
std::string replaced(std::string s, const std::string& from, const std::string& to) {
    const size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("tokenizer: the vocabulary files are GPT-2's", "[tokenizer]") {
    // Sizes from PAPER.md §8 (the sha256 sums are checked in assets/README.md's recipe).
    CHECK(encoder_json().size() == 1042301);
    CHECK(vocab_bpe().size() == 456318);
    const Gpt2Tokenizer& tok = gpt2();
    CHECK(tok.vocab_size() == 50257);
    CHECK(tok.eot_id() == 50256);
    CHECK(tok.token_bytes(50256) == "<|endoftext|>");
    CHECK(tok.token_bytes(31373) == "hello");
    CHECK(tok.token_bytes(995) == " world");  // written "Ġworld" in the file
    CHECK(tok.token_bytes(220) == " ");
    CHECK(tok.token_bytes(198) == "\n");  // "Ċ"
    CHECK(tok.token_bytes(4210) == "\xEF\xBF\xBD");
    CHECK(tok.token_bytes(188) == std::string(1, '\0'));  // byte 0 is "Ā" (U+0100), id 188
    CHECK(tok.token_bytes(-1).empty());
    CHECK(tok.token_bytes(50257).empty());
}

TEST_CASE("tokenizer: PAPER.md section 8 examples", "[tokenizer]") {
    CHECK(encode("hello world") == Ids{31373, 995});
    CHECK(encode("Not all heroes wear capes.") == Ids{3673, 477, 10281, 5806, 1451, 274, 13});
    CHECK(encode("The quick brown fox.") == Ids{464, 2068, 7586, 21831, 13});
    CHECK(encode("0") == Ids{15});
    CHECK(encode("00") == Ids{405});
    CHECK(encode("000") == Ids{830});
    CHECK(encode("0000") == Ids{2388});
}

TEST_CASE("tokenizer: contractions, scripts, emoji, numbers, code", "[tokenizer]") {
    // Contractions are lower case with an ASCII apostrophe only; "'S" and "’ll" split.
    CHECK(encode("I'm sure they'll say it's fine, but we've I'd you're THEY'RE we\u2019ll") ==
          Ids{40, 1101, 1654, 484, 1183, 910, 340, 338, 3734, 11, 475, 356, 1053, 314, 1549, 345, 821, 33302, 6, 2200, 356, 447, 247, 297});
    CHECK(encode("'s's ''s 'S") == Ids{338, 338, 10148, 82, 705, 50});
    CHECK(encode("HE'Said") == Ids{13909, 6, 47638});
    CHECK(encode("'Sup") == Ids{6, 40784});
    CHECK(encode("\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440!") ==  // "Привет, мир!"
          Ids{140, 253, 21169, 18849, 38857, 16843, 20375, 11, 12466, 120, 18849, 21169, 0});
    CHECK(encode("\u4f60\u597d\uff0c\u4e16\u754c\u3002") ==  // "你好，世界。"
          Ids{19526, 254, 25001, 121, 171, 120, 234, 10310, 244, 45911, 234, 16764});
    // Devanagari vowel signs and the virama are marks, not letters: they split the word.
    CHECK(encode("\u0928\u092e\u0938\u094d\u0924\u0947") == Ids{11976, 101, 11976, 106, 11976, 116, 24231, 235, 11976, 97, 24231, 229});
    CHECK(encode("e\u0301te\u0301") == Ids{68, 136, 223, 660, 136, 223});  // combining acute accents
    // A ZWJ family, a skin tone, a flag.
    CHECK(encode("\U0001F468\u200D\U0001F469\u200D\U0001F467\u200D\U0001F466 \U0001F44D\U0001F3FD \U0001F1FA\U0001F1F8") ==
          Ids{41840, 101,   447, 235,  41840, 102, 447,   235, 41840, 100,  447, 235, 41840,
              99,    50169, 235, 8582, 237,   121, 12520, 229, 118,   8582, 229, 116});
    // \p{N} beyond ASCII: Arabic-Indic digits, a vulgar fraction, a Roman numeral, math digits.
    CHECK(encode("12345678 \u0663\u0664 \u00bd \u216b \U0001D7D9\U0001D7DA") ==
          Ids{10163, 2231, 30924, 18923, 96, 149, 97, 25208, 2343, 227, 104, 220, 47728, 253, 247, 47728, 253, 248});
    CHECK(encode("https://example.com/a?b=1&c=%20") == Ids{5450, 1378, 20688, 13, 785, 14, 64, 30, 65, 28, 16, 5, 66, 28, 4, 1238});
    CHECK(encode("int main() {\n    return 0;\n}\n") == Ids{600, 1388, 3419, 1391, 198, 220, 220, 220, 1441, 657, 26, 198, 92, 198});
    CHECK(encode("\xEF\xBF\xBD") == Ids{4210});
    CHECK(encode("aaa") == Ids{46071});
    CHECK(encode("aaaa") == Ids{24794});
    CHECK(encode("aaaaa") == Ids{24794, 64});
}

TEST_CASE("tokenizer: white space runs", "[tokenizer]") {
    // \s+(?!\S) leaves the last space of a run to the word after it.
    CHECK(encode("a  b") == Ids{64, 220, 275});
    CHECK(encode("hello   world\n\n") == Ids{31373, 220, 220, 995, 628});
    CHECK(encode("  \n\tx") == Ids{220, 220, 198, 197, 87});
    CHECK(encode("x \u00a0y") == Ids{87, 220, 1849, 88});  // NBSP is white space but not the optional " "
    CHECK(encode("end   ") == Ids{437, 220, 220, 220});
    CHECK(encode("\n\nThe") == Ids{198, 198, 464});
    CHECK(encode("a\r\n  b") == Ids{64, 201, 198, 220, 275});
    CHECK(encode("a\u3000\u3000b") == Ids{64, 5099, 222, 5099, 222, 65});
    // U+0085 (NEL) is white space to Python's re but not to JavaScript's \s, which we follow.
    CHECK(encode("a\u0085 b") == Ids{64, 126, 227, 275});
    CHECK(encode("x \u0085y") == Ids{87, 1587, 227, 88});  // " \u0085" is one piece; if NEL were space: 87 220 126 227 88
    // Long runs, one pre-token each.
    CHECK(encode(std::string(10000, ' ')) == repeated({{220, 10000}}));
    CHECK(encode("x" + std::string(1001, ' ') + "y") == repeated({{87, 1}, {220, 1000}, {331, 1}}));
    CHECK(encode(std::string(1000, '!')) == repeated({{34635, 125}}));
    CHECK(encode(std::string(1000, '0')) == repeated({{25645, 62}, {8269, 1}}));
    std::string abab;
    for (int i = 0; i < 500; ++i) abab += "ab";
    CHECK(encode(abab) == repeated({{397, 500}}));
}

TEST_CASE("tokenizer: <|endoftext|> is one token wherever it appears", "[tokenizer]") {
    CHECK(encode("<|endoftext|>") == Ids{50256});
    CHECK(encode("Hello<|endoftext|>world") == Ids{15496, 50256, 6894});
    CHECK(encode(" <|endoftext|><|endoftext|>\n") == Ids{220, 50256, 50256, 198});
    CHECK(encode("<|endoftext|>>") == Ids{50256, 29});
    CHECK(encode("<|endoftext") == Ids{27, 91, 437, 1659, 5239});  // incomplete: plain text
}

TEST_CASE("tokenizer: empty input", "[tokenizer]") {
    std::vector<std::string> warnings;
    CHECK(gpt2().encode("", &warnings).empty());
    CHECK(warnings.empty());
    CHECK(gpt2().decode(Ids{}).empty());
}

TEST_CASE("tokenizer: invalid UTF-8 is read as U+FFFD, with a warning", "[tokenizer]") {
    const Gpt2Tokenizer& tok = gpt2();
    struct Case {
        std::string bytes;
        std::string as_text;  // Python: bytes.decode('utf-8', errors='replace')
        Ids ids;              // js-tiktoken / gpt-3-encoder on as_text
        size_t first_bad;     // byte offset of the first invalid sequence
    };
    const std::string R = "\xEF\xBF\xBD";  // U+FFFD
    const Case cases[] = {
        {"\xFF", R, {4210}, 0},
        {"a\xE2\x82", "a" + R, {64, 4210}, 1},  // truncated by the end
        {"a\xE2\x82"
         "b",
         "a" + R + "b",
         {64, 4210, 65},
         1},                                              // truncated by a non-continuation
        {"\xC0\xAF", R + R, {6353}, 0},                   // overlong '/', C0 is never valid
        {"\xE0\x80\xAF", R + R + R, {48585}, 0},          // overlong, 3 bytes
        {"\xED\xA0\x80", R + R + R, {48585}, 0},          // the surrogate U+D800
        {"\xF4\x90\x80\x80", R + R + R + R, {12100}, 0},  // U+110000, past the end of Unicode
        {"\xF0\x9F\x98", R, {4210}, 0},                   // an emoji cut short
        {"\xF0\x9F\x98 x", R + " x", {4210, 2124}, 0},
        {"x\x80\x80y", "x" + R + R + "y", {87, 6353, 88}, 1},  // lone continuation bytes
        {"\xC3\xC3\xA9", R + "\xC3\xA9", {4210, 2634}, 0},     // the second C3 starts a valid "é"
        {"ok \xF5\xFF<|endoftext|>\xE2", "ok " + R + R + "<|endoftext|>" + R, {482, 220, 6353, 50256, 4210}, 3},
    };
    for (const Case& c : cases) {
        INFO("input bytes of length " << c.bytes.size() << ", first bad byte at " << c.first_bad);
        std::vector<std::string> warnings;
        CHECK(tok.encode(c.bytes, &warnings) == c.ids);
        CHECK(tok.encode(c.as_text) == c.ids);
        REQUIRE_FALSE(warnings.empty());
        CHECK(warnings[0].find("byte offset " + std::to_string(c.first_bad)) != std::string::npos);
        CHECK(tok.decode(c.ids) == c.as_text);
        // The replacement text itself is valid: no warning.
        std::vector<std::string> none;
        tok.encode(c.as_text, &none);
        CHECK(none.empty());
    }
    // One warning per invalid sequence, up to a cap, then a count.
    std::vector<std::string> warnings;
    CHECK(tok.encode(std::string(100, '\xFF'), &warnings).size() > 0);
    REQUIRE(warnings.size() == 11);
    CHECK(warnings[9].find("byte offset 9") != std::string::npos);
    CHECK(warnings[10].find("100 in all") != std::string::npos);
}

TEST_CASE("tokenizer: decoding gives back the exact bytes", "[tokenizer]") {
    const Gpt2Tokenizer& tok = gpt2();
    CHECK(tok.decode(Ids{31373, 995}) == "hello world");
    CHECK(tok.decode(Ids{15496, 50256, 6894}) == "Hello<|endoftext|>world");
    CHECK(tok.decode(Ids{31373, -5, 50257, 995}) == "hello world");  // ids outside the vocabulary add nothing

    // Every byte value and a spread of code points over all planes, as valid UTF-8.
    std::string text = "Not all heroes wear capes. \r\n\t\v\f\xC2\xA0<|endoftext|>\xF0\x9F\x91\xA8\xE2\x80\x8D";
    for (int b = 0; b < 0x80; ++b) text += static_cast<char>(b);
    std::uint32_t x = 12345;
    for (int i = 0; i < 20000; ++i) {
        x = x * 1664525u + 1013904223u;  // a plain LCG: varied code points, same every run
        char32_t c = (x >> 8) % 0x110000;
        if (c >= 0xD800 && c <= 0xDFFF) c = 0x20;
        attnlab::append_utf8(text, c);  // how the text is made does not matter: the round trip is checked
        if (i % 7 == 0) text += ' ';
    }
    std::vector<std::string> warnings;
    const Ids ids = tok.encode(text, &warnings);
    CHECK(warnings.empty());
    CHECK(tok.decode(ids) == text);
    int outside = 0;
    for (int id : ids) outside += (id < 0 || id >= tok.vocab_size());
    CHECK(outside == 0);
}

TEST_CASE("tokenizer: broken vocabulary files are errors that name the file", "[tokenizer]") {
    const std::string& enc = encoder_json();
    const std::string& bpe = vocab_bpe();
    struct Case {
        std::string encoder, vocab, expected;
    };
    const Case cases[] = {
        {"", bpe, "encoder.json: not valid JSON"},
        {enc.substr(0, enc.size() / 2), bpe, "encoder.json: not valid JSON"},
        {"[1, 2]", bpe, "encoder.json: expected an object"},
        {"{}", bpe, "encoder.json: holds no tokens"},
        {replaced(enc, "\"<|endoftext|>\": 50256", "\"<|endoftext|>\": 50257"), bpe,
         "encoder.json: token \"<|endoftext|>\" has id 50257, expected a whole number from 0 to 50256"},
        {replaced(enc, "\"<|endoftext|>\": 50256", "\"<|endoftext|>\": \"x\""), bpe,
         "encoder.json: token \"<|endoftext|>\" has a string for id"},
        {replaced(enc, "\"!\": 0", "\"!\": 1"), bpe, "encoder.json: id 1 is given to two tokens"},
        {replaced(enc, "\"!\": 0", "\"\\\"\": 0"), bpe, "encoder.json: token \"\\\"\" appears twice"},  // '"' is also id 1
        {replaced(enc, "\"<|endoftext|>\": 50256", "\"<|endoftext|>!\": 50256"), bpe, "encoder.json: no \"<|endoftext|>\" token"},
        {replaced(enc, "\"!\": 0", "\" \": 0"), bpe, "encoder.json: token \" \" has the character U+0020"},  // space is written "Ġ"
        {replaced(enc, "\"!\": 0", "\"\": 0"), bpe, "encoder.json: has an empty token"},
        {enc, "", "vocab.bpe: holds no merges"},
        {enc, bpe + "zzqqzz t\n", "vocab.bpe line 50002: \"zzqqzz\" is not a token of encoder.json"},
        {enc, bpe + "Ġ\n", "vocab.bpe line 50002: expected two tokens separated by one space"},
        {enc, bpe + "a  b\n", "vocab.bpe line 50002: expected two tokens"},
        {enc, bpe + "\x01 a\n", "has the character U+0001, which stands for no byte"},
        {enc, bpe + "\xFF a\n", "is not valid UTF-8"},
        {enc, bpe + "Ġthe Ġthe\n", "vocab.bpe line 50002: the merge makes \"ĠtheĠthe\", which is not a token"},
        {enc, replaced(bpe, "\nĠ t\n", "\nĠ t\nĠ t\n"), "vocab.bpe line 3: the merge \"Ġ t\" appears twice"},
    };
    for (const Case& c : cases) {
        INFO("expected: " << c.expected);
        Gpt2Tokenizer tok;
        std::string error;
        CHECK_FALSE(tok.load(c.encoder, c.vocab, error));
        INFO("error: " << error);
        CHECK(error.find(c.expected) != std::string::npos);
        CHECK_FALSE(tok.loaded());
        CHECK(tok.encode("hello").empty());
        CHECK(tok.vocab_size() == 0);
    }
}

#endif  // ATTNLAB_ASSETS_DIR
