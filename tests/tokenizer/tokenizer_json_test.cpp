// The tokenizer.json reader on small hand-made files whose ids are worked out by hand below,
// the split patterns and NFC on cases from the patterns' and Unicode's definitions, and the
// refusals. The bulk comparison against Hugging Face's JavaScript tokenizer on the real files
// is tests/tokenizer/reference/compare_hf.mjs (ctest tokenizer:identical-to-hugging-face-*).
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/split_patterns.h"
#include "tokenizer/token_index.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode_nfc.h"

using attnlab::Tokenizer;

namespace {

// A SentencePiece-style model: "▁" for space (Prepend + Replace), byte fallback for two bytes
// only, the unknown token fused, BOS from the template.
std::string sentencepiece_json(std::string_view normalizer = "", std::string_view model_type = "BPE", std::string_view merges = "") {
    const std::string norm = normalizer.empty() ? R"({"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "▁"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}]})"
                                                : std::string(normalizer);
    const std::string m = merges.empty() ? R"(["▁ a", "a b", "▁a b"])" : std::string(merges);
    return R"({"version": "1.0", "truncation": null, "padding": null,
      "added_tokens": [
        {"id": 0, "content": "<unk>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
        {"id": 1, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true},
        {"id": 2, "content": "</s>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}],
      "normalizer": )" +
           norm + R"(, "pre_tokenizer": null,
      "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
        {"Sequence": {"id": "A", "type_id": 0}}], "pair": [], "special_tokens": {}},
      "decoder": null,
      "model": {"type": ")" +
           std::string(model_type) + R"(", "dropout": null, "unk_token": "<unk>", "fuse_unk": true, "byte_fallback": true,
        "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0xC3>": 3, "<0xA9>": 4, "▁": 5, "a": 6, "b": 7, "▁a": 8, "ab": 9, "▁ab": 10},
        "merges": )" +
           m + "}}";
}

std::vector<int> ids(const Tokenizer& t, std::string_view text) { return t.encode(text); }

}  // namespace

TEST_CASE("tokenizer.json: SentencePiece-style BPE, worked by hand", "[tokenizer]") {
    Tokenizer t;
    std::string error;
    REQUIRE(t.load_json(sentencepiece_json(), "", error));
    INFO(error);
    // "ab ab" -> "▁ab▁ab": "▁ a" (rank 0) merges at both places first, leftmost first; then
    // "▁a b" (rank 2); "a b" (rank 1) never finds its pair. BOS in front.
    CHECK(ids(t, "ab ab") == std::vector<int>{1, 10, 10});
    CHECK(ids(t, "ba") == std::vector<int>{1, 5, 7, 6});                     // "▁ba": no merge applies
    CHECK(ids(t, "\xC3\xA9") == std::vector<int>{1, 5, 3, 4});               // "é" is not a token: its bytes are
    CHECK(ids(t, "\xE2\x82\xAC") == std::vector<int>{1, 5, 0});              // "€": bytes missing, so <unk>
    CHECK(ids(t, "\xE2\x82\xAC\xE2\x82\xAC") == std::vector<int>{1, 5, 0});  // unknowns fused
    CHECK(ids(t, "<s>ab") == std::vector<int>{1, 1, 10});                    // an added token in the text
    CHECK(ids(t, "a</s>") == std::vector<int>{1, 8, 2});                     // each section gets its "▁"
    CHECK(ids(t, "") == std::vector<int>{1});
    CHECK(t.vocab_size() == 11);
    CHECK(t.decode(ids(t, "ab ab")) == "<s> ab ab");  // "▁" read back as a space
    CHECK(t.token_bytes(3) == "\xC3");
}

TEST_CASE("tokenizer.json: refusals name the field", "[tokenizer]") {
    struct Case {
        std::string json, config, expected;
    };
    const std::string base = sentencepiece_json();
    const Case cases[] = {
        {"{", "", "tokenizer.json: not valid JSON"},
        {"[]", "", "tokenizer.json: the file should hold an object"},
        {sentencepiece_json(R"({"type": "NFKC"})"), "", "tokenizer.json: normalizer.type is \"NFKC\", which is not supported"},
        {sentencepiece_json(R"({"type": "Sequence", "normalizers": [{"type": "Lowercase"}]})"), "",
         "normalizer.normalizers[0].type is \"Lowercase\""},
        {sentencepiece_json(R"({"type": "Replace", "pattern": {"Regex": " +"}, "content": "▁"})"), "",
         "normalizer.pattern is not {\"String\": ...}"},
        {sentencepiece_json("", "Unigram"), "", "model.type is \"Unigram\", which is not supported (supported: BPE)"},
        {sentencepiece_json("", "BPE", R"(["▁ b"])"), "", "makes a string that is not in the vocabulary"},
        {sentencepiece_json("", "BPE", R"(["▁ zz"])"), "", "model.merges[0] \"zz\" is not in the vocabulary"},
        {sentencepiece_json("", "BPE", R"(["▁ a", "▁ a"])"), "", "appears twice"},
        {sentencepiece_json("", "BPE", R"([7])"), "", "model.merges[0] should be"},
        {base, "{\"tokenizer_class\": \"LlamaTokenizer\", \"add_eos_token\": true}",
         "tokenizer_config.json: add_bos_token/add_eos_token (true/true) disagree"},
        {base, "{\"split_special_tokens\": true}", "tokenizer_config.json: split_special_tokens is true"},
        {base, "{", "tokenizer_config.json: not valid JSON"},
    };
    for (const Case& c : cases) {
        Tokenizer t;
        std::string error;
        INFO("expected: " << c.expected);
        CHECK_FALSE(t.load_json(c.json, c.config, error));
        INFO("error: " << error);
        CHECK(error.find(c.expected) != std::string::npos);
        CHECK_FALSE(t.loaded());
        CHECK(t.encode("ab").empty());
    }
}

TEST_CASE("tokenizer.json: an unknown split pattern is refused, not approximated", "[tokenizer]") {
    std::string json = sentencepiece_json();
    const std::string split =
        R"("pre_tokenizer": {"type": "Split", "pattern": {"Regex": "\\p{L}+|\\s+"}, "behavior": "Isolated", "invert": false})";
    json.replace(json.find(R"("pre_tokenizer": null)"), std::string_view(R"("pre_tokenizer": null)").size(), split);
    Tokenizer t;
    std::string error;
    CHECK_FALSE(t.load_json(json, "", error));
    CHECK(error.find("pre_tokenizer.pattern.Regex \"\\\\p{L}+|\\\\s+\" is not a pattern we implement") != std::string::npos);
}

namespace {

std::vector<std::string> split(const attnlab::SplitPattern& p, std::string_view text) {
    std::vector<std::string_view> pieces;
    attnlab::split_by_pattern(p, text, pieces);
    return std::vector<std::string>(pieces.begin(), pieces.end());
}

}  // namespace

// Pieces worked out from the patterns' alternatives (first match wins, in order).
TEST_CASE("tokenizer: Llama 3, Qwen2 and GPT-2 split patterns", "[tokenizer]") {
    const auto llama3 = attnlab::recognize_split_pattern(
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)");
    const auto qwen2 = attnlab::recognize_split_pattern(
        R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)");
    REQUIRE(llama3);
    REQUIRE(qwen2);
    CHECK(split(*llama3, "Hello world's 12345\n\n  x") ==
          std::vector<std::string>{"Hello", " world", "'s", " ", "123", "45", "\n\n", " ", " x"});
    CHECK(split(*llama3, "IT'S ((x !!\r\n") == std::vector<std::string>{"IT", "'S", " ((", "x", " !!\r\n"});
    CHECK(split(*llama3, "\thello-world") == std::vector<std::string>{"\thello", "-world"});
    CHECK(split(*qwen2, "2024") == std::vector<std::string>{"2", "0", "2", "4"});
    // \s is \p{White_Space} here: U+0085 is white space, U+FEFF is not.
    CHECK(split(*qwen2,
                "a\xC2\x85\xC2\x85"
                "b") == std::vector<std::string>{"a", "\xC2\x85",
                                                 "\xC2\x85"
                                                 "b"});
    CHECK(split(*qwen2,
                "a\xEF\xBB\xBF"
                "b") == std::vector<std::string>{"a",
                                                 "\xEF\xBB\xBF"
                                                 "b"});
    // GPT-2's own pattern inside ByteLevel reads JavaScript's \s: U+FEFF is white space.
    const auto gpt2 = attnlab::byte_level_pattern();
    CHECK(split(gpt2,
                "a\xEF\xBB\xBF"
                "b") == std::vector<std::string>{"a", "\xEF\xBB\xBF", "b"});
    CHECK(split(gpt2, "I'm  fine") == std::vector<std::string>{"I", "'m", " ", " fine"});
    CHECK_FALSE(attnlab::recognize_split_pattern(R"(\p{L}+)"));
}

// NFC, from the Unicode Standard's definitions (UAX #15 examples and ch. 3.12 for Hangul).
TEST_CASE("tokenizer: NFC", "[tokenizer]") {
    using attnlab::nfc;
    CHECK(nfc("e\xCC\x81") == "\xC3\xA9");                                 // e + U+0301 -> U+00E9
    CHECK(nfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8") == "\xEA\xB0\x81");  // U+1100 U+1161 U+11A8 -> U+AC01
    CHECK(nfc("a\xCC\x87\xCC\xA3") == "\xE1\xBA\xA1\xCC\x87");             // a + dot above + dot below -> U+1EA1 U+0307
    CHECK(nfc("\xE2\x84\xAB") == "\xC3\x85");                              // U+212B ANGSTROM SIGN -> U+00C5
    CHECK(nfc("\xCD\x84") == "\xCC\x88\xCC\x81");                          // U+0344 is excluded from composition
    CHECK(nfc("\xCC\x81"
              "a") ==
          "\xCC\x81"
          "a");  // a mark with no starter stays
    CHECK(nfc("plain ASCII, caf\xC3\xA9") == "plain ASCII, caf\xC3\xA9");
}

TEST_CASE("tokenizer: the token index finds every token and names the first repeat", "[tokenizer]") {
    // Enough tokens to fill many probe runs: every 1- and 2-byte string over 40 letters.
    std::vector<std::string> tokens;
    for (char a = '0'; a < '0' + 40; ++a) {
        tokens.emplace_back(1, a);
        for (char b = '0'; b < '0' + 40; ++b) tokens.push_back(std::string{a, b});
    }
    attnlab::TokenIndex index;
    CHECK(index.find("0", tokens) == -1);  // nothing built yet
    REQUIRE(index.build(tokens) == -1);
    for (size_t id = 0; id < tokens.size(); ++id) CHECK(index.find(tokens[id], tokens) == static_cast<int>(id));
    CHECK(index.find("", tokens) == -1);
    CHECK(index.find("000", tokens) == -1);
    CHECK(index.find(std::string_view("0\0", 2), tokens) == -1);
    tokens.push_back("01");  // a repeat of id 2
    tokens.push_back("05");  // and of id 6
    CHECK(index.build(tokens) == static_cast<int>(tokens.size()) - 2);
    CHECK(index.find("01", tokens) == 2);  // the first id keeps the text
    CHECK(index.find("05", tokens) == 6);
    CHECK(attnlab::TokenIndex().find("x", {}) == -1);
}
