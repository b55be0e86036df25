// Tokenizer::load_json: tokenizer.json and tokenizer_config.json into a TokenizerPipeline.
// Every field that changes what encoding gives is read; one we do not implement is refused
// with its path in the file ("tokenizer.json: pre_tokenizer.pretokenizers[0].type ...").
#include <algorithm>

#include "base/json.h"
#include "tokenizer/byte_aliases.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_pipeline.h"

namespace attnlab {

namespace {

using json::Value;

// Reading one file, with the path of the field being read for messages.
struct Reader {
    std::string file;  // "tokenizer.json"
    std::string error;

    bool fail(const std::string& path, const std::string& what) {
        if (error.empty()) error = file + ": " + path + " " + what;
        return false;
    }
    const Value* object_field(const Value& obj, const std::string& path, std::string_view key) {
        const Value* v = obj.find(key);
        if (!v) fail(path + "." + std::string(key), "is missing");
        return v;
    }
    bool string_field(const Value& obj, const std::string& path, std::string_view key, std::string& out) {
        const Value* v = object_field(obj, path, key);
        if (!v) return false;
        if (!v->is_string())
            return fail(path + "." + std::string(key), "should be a string, found " + std::string(Value::type_name(v->type())));
        out = v->as_string();
        return true;
    }
    // An optional boolean (absent or null: `dflt`).
    bool bool_field(const Value& obj, const std::string& path, std::string_view key, bool dflt, bool& out) {
        const Value* v = obj.find(key);
        out = dflt;
        if (!v || v->is_null()) return true;
        if (!v->is_bool()) return fail(path + "." + std::string(key), "should be true or false");
        out = v->as_bool();
        return true;
    }
    bool type_of(const Value& v, const std::string& path, std::string& type) {
        if (!v.is_object()) return fail(path, "should be an object, found " + std::string(Value::type_name(v.type())));
        return string_field(v, path, "type", type);
    }
    bool unsupported(const std::string& path, const std::string& type, const char* supported) {
        return fail(path + ".type", "is " + json::quote(type) + ", which is not supported (supported: " + supported + ")");
    }
    // A Sequence's list `key`: read_item(item, its path) for each, in order.
    template <class ReadItem>
    bool sequence(const Value& v, const std::string& path, std::string_view key, ReadItem read_item) {
        const Value* list = object_field(v, path, key);
        if (!list) return false;
        const std::string at = path + "." + std::string(key);
        if (!list->is_array()) return fail(at, "should be an array");
        for (size_t i = 0; i < list->items().size(); ++i)
            if (!read_item(list->items()[i], at + "[" + std::to_string(i) + "]")) return false;
        return true;
    }
};

bool read_normalizer(Reader& r, const Value& v, const std::string& path, std::vector<NormalizerStep>& out, std::string& space) {
    if (v.is_null()) return true;
    std::string type;
    if (!r.type_of(v, path, type)) return false;
    if (type == "Sequence")
        return r.sequence(v, path, "normalizers",
                          [&](const Value& item, const std::string& at) { return read_normalizer(r, item, at, out, space); });
    if (type == "NFC") {
        out.push_back({NormalizerStep::Kind::Nfc, "", ""});
        return true;
    }
    if (type == "Prepend") {
        NormalizerStep s{NormalizerStep::Kind::Prepend, "", ""};
        if (!r.string_field(v, path, "prepend", s.text)) return false;
        out.push_back(s);
        return true;
    }
    if (type == "Replace") {
        NormalizerStep s{NormalizerStep::Kind::Replace, "", ""};
        const Value* pattern = r.object_field(v, path, "pattern");
        if (!pattern) return false;
        if (!pattern->is_object() || !pattern->find("String"))
            return r.fail(path + ".pattern", "is not {\"String\": ...}; only literal Replace patterns are supported");
        if (!r.string_field(*pattern, path + ".pattern", "String", s.text) || !r.string_field(v, path, "content", s.replacement))
            return false;
        if (s.text.empty()) return r.fail(path + ".pattern.String", "is empty");
        if (s.text == " ") space = s.replacement;
        out.push_back(s);
        return true;
    }
    return r.unsupported(path, type, "NFC, Prepend, Replace with a String pattern, Sequence");
}

bool read_pre_tokenizer(Reader& r, const Value& v, const std::string& path, std::vector<PreTokenizerStep>& out) {
    if (v.is_null()) return true;
    std::string type;
    if (!r.type_of(v, path, type)) return false;
    if (type == "Sequence")
        return r.sequence(v, path, "pretokenizers",
                          [&](const Value& item, const std::string& at) { return read_pre_tokenizer(r, item, at, out); });
    PreTokenizerStep s;
    if (!out.empty() && out.back().kind == PreTokenizerStep::Kind::ByteLevel)
        return r.fail(path, "follows ByteLevel; ByteLevel is supported only as the last pre-tokenizer");
    if (type == "ByteLevel") {
        s.kind = PreTokenizerStep::Kind::ByteLevel;
        s.pattern = byte_level_pattern();
        if (!r.bool_field(v, path, "add_prefix_space", false, s.add_prefix_space) || !r.bool_field(v, path, "use_regex", true, s.use_regex))
            return false;
    } else if (type == "Digits") {
        s.kind = PreTokenizerStep::Kind::Digits;
        if (!r.bool_field(v, path, "individual_digits", false, s.individual_digits)) return false;
    } else if (type == "Split") {
        bool invert = false;
        std::string behavior;
        if (!r.bool_field(v, path, "invert", false, invert) || !r.string_field(v, path, "behavior", behavior)) return false;
        if (invert) return r.fail(path + ".invert", "is true, which is not supported");
        const Value* pattern = r.object_field(v, path, "pattern");
        if (!pattern) return false;
        if (pattern->is_object() && pattern->find("Regex")) {
            std::string regex;
            if (!r.string_field(*pattern, path + ".pattern", "Regex", regex)) return false;
            const auto known = recognize_split_pattern(regex);
            if (!known)
                return r.fail(path + ".pattern.Regex",
                              json::quote(regex) + " is not a pattern we implement (supported: GPT-2's, Llama 3's and Qwen2's, exactly)");
            if (behavior != "Isolated")
                return r.fail(path + ".behavior", "is " + json::quote(behavior) + "; a Regex split supports only \"Isolated\"");
            s.kind = PreTokenizerStep::Kind::Pattern;
            s.pattern = *known;
        } else if (pattern->is_object() && pattern->find("String")) {
            s.kind = PreTokenizerStep::Kind::Literal;
            if (!r.string_field(*pattern, path + ".pattern", "String", s.literal)) return false;
            if (s.literal.empty()) return r.fail(path + ".pattern.String", "is empty");
            if (behavior == "Isolated") s.behavior = PreTokenizerStep::Behavior::Isolated;
            else if (behavior == "MergedWithPrevious") s.behavior = PreTokenizerStep::Behavior::MergedWithPrevious;
            else return r.fail(path + ".behavior", "is " + json::quote(behavior) + " (supported: \"Isolated\", \"MergedWithPrevious\")");
        } else {
            return r.fail(path + ".pattern", "should be {\"Regex\": ...} or {\"String\": ...}");
        }
    } else {
        return r.unsupported(path, type, "ByteLevel, Split, Digits, Sequence");
    }
    out.push_back(s);
    return true;
}

// The id of a special token the post-processor names.
bool special_id(Reader& r, const TokenizerPipeline& p, const std::string& path, const std::string& content, int& id) {
    for (const AddedToken& t : p.added)
        if (t.content == content) {
            id = t.id;
            return true;
        }
    std::string bytes = content, why;
    if (p.model.options().byte_level && !unalias_bytes(content, bytes, why)) bytes.clear();
    id = p.model.find(bytes);
    return id >= 0 || r.fail(path, "names " + json::quote(content) + ", which is not a token");
}

bool read_post_processor(Reader& r, const Value& v, const std::string& path, TokenizerPipeline& p) {
    if (v.is_null()) return true;
    std::string type;
    if (!r.type_of(v, path, type)) return false;
    if (type == "ByteLevel") return true;  // adds no ids
    if (type == "Sequence")
        return r.sequence(v, path, "processors",
                          [&](const Value& item, const std::string& at) { return read_post_processor(r, item, at, p); });
    if (type != "TemplateProcessing") return r.unsupported(path, type, "TemplateProcessing, ByteLevel, Sequence");
    const Value* single = r.object_field(v, path, "single");
    if (!single) return false;
    if (!single->is_array()) return r.fail(path + ".single", "should be an array");
    std::vector<int> before, after;
    int sequences = 0;
    for (size_t i = 0; i < single->items().size(); ++i) {
        const Value& item = single->items()[i];
        const std::string at = path + ".single[" + std::to_string(i) + "]";
        if (const Value* sp = item.is_object() ? item.find("SpecialToken") : nullptr) {
            std::string content;
            int id = -1;
            if (!sp->is_object() || !r.string_field(*sp, at + ".SpecialToken", "id", content))
                return r.fail(at, "is not a SpecialToken with an id");
            if (!special_id(r, p, at + ".SpecialToken.id", content, id)) return false;
            (sequences ? after : before).push_back(id);
        } else if (const Value* seq = item.is_object() ? item.find("Sequence") : nullptr) {
            std::string which;
            if (!seq->is_object() || !r.string_field(*seq, at + ".Sequence", "id", which)) return false;
            if (which != "A") return r.fail(at + ".Sequence.id", "is " + json::quote(which) + "; a single text is sequence \"A\"");
            ++sequences;
        } else {
            return r.fail(at, "is neither a SpecialToken nor a Sequence");
        }
    }
    if (sequences != 1) return r.fail(path + ".single", "should hold sequence \"A\" once");
    p.prefix.insert(p.prefix.end(), before.begin(), before.end());
    p.suffix.insert(p.suffix.begin(), after.begin(), after.end());
    return true;
}

bool read_added_tokens(Reader& r, const Value& root, TokenizerPipeline& p) {
    const Value* list = root.find("added_tokens");
    if (!list || list->is_null()) return true;
    if (!list->is_array()) return r.fail("added_tokens", "should be an array");
    for (size_t i = 0; i < list->items().size(); ++i) {
        const Value& v = list->items()[i];
        const std::string path = "added_tokens[" + std::to_string(i) + "]";
        if (!v.is_object()) return r.fail(path, "should be an object");
        AddedToken t{};
        bool single_word = false;
        const Value* id = r.object_field(v, path, "id");
        if (!id || !r.string_field(v, path, "content", t.content)) return false;
        const auto n = id->as_int(0, (1 << 30) - 1);
        if (!id->is_number() || !n) return r.fail(path + ".id", "should be a whole number from 0");
        t.id = static_cast<int>(*n);
        if (t.content.empty()) return r.fail(path + ".content", "is empty");
        if (!r.bool_field(v, path, "special", false, t.special) || !r.bool_field(v, path, "lstrip", false, t.lstrip) ||
            !r.bool_field(v, path, "rstrip", false, t.rstrip) || !r.bool_field(v, path, "normalized", !t.special, t.normalized) ||
            !r.bool_field(v, path, "single_word", false, single_word))
            return false;
        if (single_word) return r.fail(path + ".single_word", "is true, which is not supported");
        p.added.push_back(t);
    }
    // Ids number the vocabulary and then the added tokens, without gaps past them.
    const int limit = p.model.size() + static_cast<int>(p.added.size());
    for (size_t i = 0; i < p.added.size(); ++i)
        if (p.added[i].id >= limit)
            return r.fail("added_tokens[" + std::to_string(i) + "].id", std::to_string(p.added[i].id) + " is past the vocabulary (" +
                                                                            std::to_string(p.model.size()) +
                                                                            " tokens) and the added tokens");
    return true;
}

// The model: BPE, its vocabulary and merges in either form ("a b" or ["a", "b"]).
bool read_bpe_model(Reader& r, const Value& v, bool byte_level, TokenizerPipeline& p) {
    std::string type;
    if (!r.type_of(v, "model", type)) return false;
    if (type != "BPE") return r.unsupported("model", type, "BPE");
    for (const char* key : {"dropout", "continuing_subword_prefix", "end_of_word_suffix"}) {
        const Value* f = v.find(key);
        const bool unset = !f || f->is_null() || (f->is_string() && f->as_string().empty()) || (f->is_number() && f->as_number() == 0.0);
        if (!unset) return r.fail(std::string("model.") + key, "is set, which is not supported");
    }
    BpeModel::Options o;
    o.byte_level = byte_level;
    if (!r.bool_field(v, "model", "byte_fallback", false, o.byte_fallback) || !r.bool_field(v, "model", "fuse_unk", false, o.fuse_unk) ||
        !r.bool_field(v, "model", "ignore_merges", false, o.ignore_merges))
        return false;
    const Value* vocab = r.object_field(v, "model", "vocab");
    const Value* merges = r.object_field(v, "model", "merges");
    if (!vocab || !merges) return false;
    if (!vocab->is_object() || vocab->members().empty()) return r.fail("model.vocab", "should be a non-empty object of token: id");
    if (!merges->is_array()) return r.fail("model.merges", "should be an array");
    const auto& members = vocab->members();
    const std::int64_t n = static_cast<std::int64_t>(members.size());
    std::vector<std::string> tokens(members.size());
    std::vector<char> seen(members.size(), 0);
    std::string bytes, why;
    for (const auto& [text, id] : members) {
        const auto k = id.as_int(0, n - 1);
        if (!id.is_number() || !k)
            return r.fail("model.vocab[" + json::quote(text) + "]", "should be an id from 0 to " + std::to_string(n - 1));
        if (seen[*k]) return r.fail("model.vocab", "gives id " + std::to_string(*k) + " to two tokens");
        seen[*k] = 1;
        if (byte_level && !unalias_bytes(text, bytes, why))
            return r.fail("model.vocab[" + json::quote(text) + "]", why + " (the model is byte-level)");
        tokens[*k] = byte_level ? bytes : text;
    }
    p.model.set_tokens(std::move(tokens));  // a text given twice keeps its first id, as a map's insert did
    const BpeModel& model = p.model;
    std::vector<std::pair<int, int>> pairs;
    pairs.reserve(merges->items().size());
    for (size_t i = 0; i < merges->items().size(); ++i) {
        const Value& m = merges->items()[i];
        const auto path = [i] { return "model.merges[" + std::to_string(i) + "]"; };
        std::string halves[2];
        if (m.is_string()) {
            const std::string& s = m.as_string();
            const size_t space = s.find(' ');
            if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
                return r.fail(path(), "should be two tokens separated by one space");
            halves[0] = s.substr(0, space);
            halves[1] = s.substr(space + 1);
        } else if (m.is_array() && m.items().size() == 2 && m.items()[0].is_string() && m.items()[1].is_string()) {
            halves[0] = m.items()[0].as_string();
            halves[1] = m.items()[1].as_string();
        } else {
            return r.fail(path(), "should be \"a b\" or [\"a\", \"b\"]");
        }
        int ids[2];
        for (int h = 0; h < 2; ++h) {
            if (byte_level && !unalias_bytes(halves[h], bytes, why)) return r.fail(path(), json::quote(halves[h]) + " " + why);
            ids[h] = model.find(byte_level ? bytes : halves[h]);
            if (ids[h] < 0) return r.fail(path(), json::quote(halves[h]) + " is not in the vocabulary");
        }
        pairs.emplace_back(ids[0], ids[1]);
    }
    o.unk_id = -1;
    if (const Value* unk = v.find("unk_token"); unk && !unk->is_null()) {
        if (!unk->is_string()) return r.fail("model.unk_token", "should be a string or null");
        std::string key = unk->as_string();
        if (byte_level && !unalias_bytes(key, key, why)) key.clear();
        o.unk_id = model.find(key);
        if (o.unk_id < 0) return r.fail("model.unk_token", json::quote(unk->as_string()) + " is not in the vocabulary");
    }
    std::string error;
    if (!p.model.set_merges(pairs, o, error)) return r.fail("model.merges:", error);
    return true;
}

// tokenizer_config.json: the fields that change `tokenizer(text)` beyond tokenizer.json.
bool check_config(Reader& r, const Value& config, const TokenizerPipeline& p) {
    if (!config.is_object()) return r.fail("the file", "should hold an object");
    for (const char* key : {"remove_space", "do_lowercase_and_remove_accent", "split_special_tokens", "add_prefix_space"}) {
        bool on = false;
        if (!r.bool_field(config, "", key, false, on)) return false;
        if (on) return r.fail(key, "is true, which is not supported");
    }
    // Llama's and Gemma's tokenizer classes rebuild the post-processor from add_bos_token and
    // add_eos_token (Hugging Face's update_post_processor): they must agree with the file's.
    std::string cls;
    if (const Value* c = config.find("tokenizer_class"); c && c->is_string()) cls = c->as_string();
    if (cls.rfind("Llama", 0) == 0 || cls.rfind("Gemma", 0) == 0 || cls.rfind("CodeLlama", 0) == 0) {
        bool bos = true, eos = false;
        if (!r.bool_field(config, "", "add_bos_token", true, bos) || !r.bool_field(config, "", "add_eos_token", false, eos)) return false;
        if (bos != !p.prefix.empty() || eos != !p.suffix.empty() || p.prefix.size() > 1 || p.suffix.size() > 1) {
            std::string why = bos ? "(true/" : "(false/";
            why += eos ? "true)" : "false)";
            why += " disagree with tokenizer.json's post_processor, which " + cls + " would rebuild; not supported";
            return r.fail("add_bos_token/add_eos_token", why);
        }
    }
    return true;
}

}  // namespace

bool Tokenizer::load_json(std::string_view tokenizer_json, std::string_view tokenizer_config_json, std::string& error) {
    p_.reset();
    Reader r{"tokenizer.json", ""};
    const json::ParseResult parsed = json::parse(tokenizer_json);
    if (!parsed.value) {
        error = "tokenizer.json: not valid JSON: " + parsed.error;
        return false;
    }
    const Value& root = *parsed.value;
    auto p = std::make_shared<TokenizerPipeline>();
    std::string space;
    bool ok = root.is_object() || r.fail("the file", "should hold an object");
    for (const char* key : {"truncation", "padding"}) {
        const Value* f = ok ? root.find(key) : nullptr;
        if (f && !f->is_null()) ok = r.fail(key, "is set, which is not supported");
    }
    const Value null_value;
    auto field = [&](const char* key) -> const Value& {
        const Value* f = ok ? root.find(key) : nullptr;
        return f ? *f : null_value;
    };
    ok = ok && read_normalizer(r, field("normalizer"), "normalizer", p->normalizer, space);
    ok = ok && read_pre_tokenizer(r, field("pre_tokenizer"), "pre_tokenizer", p->pre_tokenizer);
    const bool byte_level = ok && !p->pre_tokenizer.empty() && p->pre_tokenizer.back().kind == PreTokenizerStep::Kind::ByteLevel;
    const Value* model = ok ? r.object_field(root, "", "model") : nullptr;
    ok = ok && model && read_bpe_model(r, *model, byte_level, *p);
    ok = ok && read_added_tokens(r, root, *p);
    ok = ok && read_post_processor(r, field("post_processor"), "post_processor", *p);
    if (ok && !tokenizer_config_json.empty()) {
        Reader c{"tokenizer_config.json", ""};
        const json::ParseResult config = json::parse(tokenizer_config_json);
        if (!config.value) c.error = "tokenizer_config.json: not valid JSON: " + config.error;
        else check_config(c, *config.value, *p);
        r.error = c.error;
        ok = r.error.empty();
    }
    if (!ok) {
        error = r.error;
        return false;
    }
    index_pipeline(*p, space);
    p_ = std::move(p);
    return true;
}

}  // namespace attnlab
