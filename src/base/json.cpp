#include "base/json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/utf8.h"

namespace attnlab::json {

Value Value::boolean(bool b) {
    Value v;
    v.type_ = Type::Bool;
    v.bool_ = b;
    return v;
}
Value Value::number(double x, std::string raw) {
    Value v;
    v.type_ = Type::Number;
    v.number_ = x;
    v.string_ = std::move(raw);
    return v;
}
Value Value::string(std::string s) {
    Value v;
    v.type_ = Type::String;
    v.string_ = std::move(s);
    return v;
}
Value Value::array(std::vector<Value> items) {
    Value v;
    v.type_ = Type::Array;
    v.items_ = std::move(items);
    return v;
}
Value Value::object(std::vector<Member> members) {
    Value v;
    v.type_ = Type::Object;
    v.members_ = std::move(members);
    return v;
}

std::optional<std::uint64_t> Value::as_uint64() const {
    if (type_ != Type::Number || string_.empty() || string_.size() > 20) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : string_) {
        if (c < '0' || c > '9') return std::nullopt;  // a sign, fraction or exponent
        const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
        if (v > (UINT64_MAX - d) / 10) return std::nullopt;
        v = v * 10 + d;
    }
    return v;
}

std::optional<std::int64_t> Value::as_int(std::int64_t lo, std::int64_t hi) const {
    if (type_ != Type::Number) return std::nullopt;
    const std::string_view digits = (!string_.empty() && string_[0] == '-') ? std::string_view(string_).substr(1) : string_;
    if (digits.empty() || digits.size() > 18) return std::nullopt;
    std::int64_t v = 0;
    for (char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + (c - '0');
    }
    if (string_[0] == '-') v = -v;
    if (v < lo || v > hi) return std::nullopt;
    return v;
}

const Value* Value::find(std::string_view key) const {
    for (const Member& m : members_)
        if (m.first == key) return &m.second;
    return nullptr;
}

const char* Value::type_name(Type t) {
    switch (t) {
        case Type::Null: return "null";
        case Type::Bool: return "a boolean";
        case Type::Number: return "a number";
        case Type::String: return "a string";
        case Type::Array: return "an array";
        case Type::Object: return "an object";
    }
    return "?";
}

namespace {

class Parser {
public:
    Parser(std::string_view text, int max_depth) : s_(text), max_depth_(max_depth) {}

    ParseResult run() {
        skip_ws();
        std::optional<Value> v = value(0);
        if (v) {
            skip_ws();
            if (pos_ != s_.size()) fail("unexpected text after the JSON value");
        }
        if (!error_.empty()) return {std::nullopt, error_};
        return {std::move(v), {}};
    }

private:
    std::string_view s_;
    size_t pos_ = 0;
    int max_depth_;
    std::string error_;

    std::nullopt_t fail(const std::string& what) {
        if (error_.empty()) error_ = "at byte " + std::to_string(pos_) + ": " + what;
        return std::nullopt;
    }
    bool at_end() const { return pos_ >= s_.size(); }
    void skip_ws() {
        while (!at_end() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
    }
    bool literal(std::string_view word) {
        if (s_.substr(pos_, word.size()) != word) return false;
        pos_ += word.size();
        return true;
    }

    std::optional<Value> value(int depth) {
        if (depth > max_depth_) return fail("nested deeper than " + std::to_string(max_depth_) + " levels");
        if (at_end()) return fail("unexpected end of input, expected a value");
        const char c = s_[pos_];
        if (c == '{') return object(depth);
        if (c == '[') return array(depth);
        if (c == '"') {
            std::optional<std::string> str = string();
            if (!str) return std::nullopt;
            return Value::string(std::move(*str));
        }
        if (c == '-' || (c >= '0' && c <= '9')) return number();
        if (literal("true")) return Value::boolean(true);
        if (literal("false")) return Value::boolean(false);
        if (literal("null")) return Value::null();
        return fail(std::string("unexpected character '") + printable(c) + "', expected a value");
    }

    static std::string printable(char c) {
        if (static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f) return std::string(1, c);
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
        return buf;
    }

    std::optional<Value> object(int depth) {
        ++pos_;  // '{'
        std::vector<Value::Member> members;
        skip_ws();
        if (!at_end() && s_[pos_] == '}') {
            ++pos_;
            return Value::object(std::move(members));
        }
        for (;;) {
            skip_ws();
            if (at_end() || s_[pos_] != '"') return fail("expected a string key in the object");
            std::optional<std::string> key = string();
            if (!key) return std::nullopt;
            skip_ws();
            if (at_end() || s_[pos_] != ':') return fail("expected ':' after the key \"" + *key + "\"");
            ++pos_;
            skip_ws();
            std::optional<Value> v = value(depth + 1);
            if (!v) return std::nullopt;
            members.emplace_back(std::move(*key), std::move(*v));
            skip_ws();
            if (at_end()) return fail("unexpected end of input inside an object");
            if (s_[pos_] == ',') {
                ++pos_;
                continue;
            }
            if (s_[pos_] == '}') {
                ++pos_;
                return Value::object(std::move(members));
            }
            return fail("expected ',' or '}' in the object");
        }
    }

    std::optional<Value> array(int depth) {
        ++pos_;  // '['
        std::vector<Value> items;
        skip_ws();
        if (!at_end() && s_[pos_] == ']') {
            ++pos_;
            return Value::array(std::move(items));
        }
        for (;;) {
            skip_ws();
            std::optional<Value> v = value(depth + 1);
            if (!v) return std::nullopt;
            items.push_back(std::move(*v));
            skip_ws();
            if (at_end()) return fail("unexpected end of input inside an array");
            if (s_[pos_] == ',') {
                ++pos_;
                continue;
            }
            if (s_[pos_] == ']') {
                ++pos_;
                return Value::array(std::move(items));
            }
            return fail("expected ',' or ']' in the array");
        }
    }

    std::optional<Value> number() {
        const size_t start = pos_;
        bool whole = true;
        if (s_[pos_] == '-') ++pos_;
        if (at_end() || !digit(s_[pos_])) return fail("a number needs digits");
        if (s_[pos_] == '0') ++pos_;
        else
            while (!at_end() && digit(s_[pos_])) ++pos_;
        if (!at_end() && s_[pos_] == '.') {
            whole = false;
            ++pos_;
            if (at_end() || !digit(s_[pos_])) return fail("a number needs digits after '.'");
            while (!at_end() && digit(s_[pos_])) ++pos_;
        }
        if (!at_end() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            whole = false;
            ++pos_;
            if (!at_end() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
            if (at_end() || !digit(s_[pos_])) return fail("a number needs digits in its exponent");
            while (!at_end() && digit(s_[pos_])) ++pos_;
        }
        std::string raw(s_.substr(start, pos_ - start));
        // A whole number of up to 15 digits is exact in a double, as strtod would give it, and
        // vocabularies are tens of thousands of them.
        const bool negative = raw[0] == '-';
        if (whole && raw.size() - negative <= 15) {
            double v = 0;
            for (size_t i = negative; i < raw.size(); ++i) v = v * 10 + (raw[i] - '0');
            return Value::number(negative ? -v : v, std::move(raw));
        }
        // strtod on our own NUL-terminated copy; JSON numbers never depend on the locale's
        // decimal point because the C locale is never changed in this program.
        const double v = std::strtod(raw.c_str(), nullptr);
        if (!std::isfinite(v)) {
            pos_ = start;
            return fail("the number " + raw + " is out of range");
        }
        return Value::number(v, std::move(raw));
    }

    static bool digit(char c) { return c >= '0' && c <= '9'; }
    static bool plain_ascii(char c) {
        const auto u = static_cast<unsigned char>(c);
        return u >= 0x20 && u < 0x80 && c != '"' && c != '\\';
    }

    static int hex(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    }

    std::optional<std::uint32_t> hex4() {
        if (pos_ + 4 > s_.size()) return fail("a \\u escape needs four hex digits");
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            const int h = hex(s_[pos_ + i]);
            if (h < 0) return fail("a \\u escape needs four hex digits");
            v = v * 16 + static_cast<std::uint32_t>(h);
        }
        pos_ += 4;
        return v;
    }

    std::optional<std::string> string() {
        ++pos_;  // opening quote
        std::string out;
        for (;;) {
            if (at_end()) return fail("unterminated string");
            const char c = s_[pos_];
            if (c == '"') {
                ++pos_;
                return out;
            }
            if (static_cast<unsigned char>(c) < 0x20) return fail("control character in a string (escape it)");
            // A run of plain ASCII at once: vocabularies are 50,000-odd short keys, and a byte at a
            // time through utf8_next made up most of a tokenizer's load.
            size_t run = pos_;
            while (run < s_.size() && plain_ascii(s_[run])) ++run;
            if (run > pos_) {
                out.append(s_.substr(pos_, run - pos_));
                pos_ = run;
                continue;
            }
            if (c != '\\') {
                char32_t cp = 0;
                const int n = utf8_next(s_, pos_, cp);
                if (n <= 0) return fail("invalid UTF-8 in a string");
                out.append(s_.substr(pos_, static_cast<size_t>(n)));
                pos_ += static_cast<size_t>(n);
                continue;
            }
            ++pos_;
            if (at_end()) return fail("unterminated escape in a string");
            const char e = s_[pos_++];
            switch (e) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                case 'u': {
                    std::optional<std::uint32_t> cp = hex4();
                    if (!cp) return std::nullopt;
                    if (*cp >= 0xD800 && *cp <= 0xDBFF) {
                        // A high surrogate must be followed by an escaped low one.
                        if (s_.substr(pos_, 2) != "\\u") return fail("unpaired surrogate in a \\u escape");
                        pos_ += 2;
                        std::optional<std::uint32_t> lo = hex4();
                        if (!lo) return std::nullopt;
                        if (*lo < 0xDC00 || *lo > 0xDFFF) return fail("unpaired surrogate in a \\u escape");
                        *cp = 0x10000 + ((*cp - 0xD800) << 10) + (*lo - 0xDC00);
                    } else if (*cp >= 0xDC00 && *cp <= 0xDFFF) {
                        return fail("unpaired surrogate in a \\u escape");
                    }
                    append_utf8(out, *cp);
                    break;
                }
                default: --pos_; return fail(std::string("unknown escape '\\") + printable(e) + "' in a string");
            }
        }
    }
};

}  // namespace

ParseResult parse(std::string_view text, int max_depth) { return Parser(text, max_depth).run(); }

std::string quote(std::string_view s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

std::string number(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

}  // namespace attnlab::json
