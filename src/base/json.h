#pragma once
// A strict JSON reader (RFC 8259) for the files AttnLab reads: safetensors headers,
// config.json, encoder.json and user-supplied analysis input. No I/O: it parses bytes it is
// handed. Errors name the byte offset, so a bad file can be found and fixed.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab::json {

class Value {
public:
    enum class Type { Null, Bool, Number, String, Array, Object };
    using Member = std::pair<std::string, Value>;

    Value() = default;
    static Value null() { return Value(); }
    static Value boolean(bool b);
    static Value number(double v, std::string raw);
    static Value string(std::string s);
    static Value array(std::vector<Value> items);
    static Value object(std::vector<Member> members);

    Type type() const { return type_; }
    bool is_null() const { return type_ == Type::Null; }
    bool is_bool() const { return type_ == Type::Bool; }
    bool is_number() const { return type_ == Type::Number; }
    bool is_string() const { return type_ == Type::String; }
    bool is_array() const { return type_ == Type::Array; }
    bool is_object() const { return type_ == Type::Object; }

    // Accessors assume the type was checked; on the wrong type they return an empty value.
    bool as_bool() const { return bool_; }
    double as_number() const { return number_; }
    const std::string& as_string() const { return string_; }  // strings; the literal text of numbers
    const std::vector<Value>& items() const { return items_; }
    const std::vector<Member>& members() const { return members_; }

    // The number as an exact non-negative integer, if it is one (digits only, fits 64 bits).
    std::optional<std::uint64_t> as_uint64() const;
    // The number as an exact integer in [lo, hi], if it is one.
    std::optional<std::int64_t> as_int(std::int64_t lo, std::int64_t hi) const;

    // Object member by key (the first, if repeated), or nullptr.
    const Value* find(std::string_view key) const;

    static const char* type_name(Type t);

private:
    Type type_ = Type::Null;
    bool bool_ = false;
    double number_ = 0.0;
    std::string string_;
    std::vector<Value> items_;
    std::vector<Member> members_;
};

struct ParseResult {
    std::optional<Value> value;  // set on success
    std::string error;           // "at byte N: ..." on failure
};

// Parses one JSON document (surrounding white space allowed). Nesting deeper than
// max_depth is an error rather than a stack overflow.
ParseResult parse(std::string_view text, int max_depth = 128);

// Writes s as a JSON string literal (with quotes), escaping what JSON requires.
std::string quote(std::string_view s);

// Writes a number; non-finite values become null, as JSON has no NaN or Infinity.
std::string number(double v);

// Builds one JSON object, member by member; nest with add_raw(key, other.str()).
class ObjectBuilder {
public:
    ObjectBuilder& add(std::string_view key, double v) { return add_raw(key, number(v)); }
    ObjectBuilder& add(std::string_view key, int v) { return add_raw(key, std::to_string(v)); }
    ObjectBuilder& add(std::string_view key, bool v) { return add_raw(key, v ? "true" : "false"); }
    ObjectBuilder& add(std::string_view key, const char* v) { return add_raw(key, quote(v)); }
    ObjectBuilder& add(std::string_view key, std::string_view v) { return add_raw(key, quote(v)); }
    ObjectBuilder& add_raw(std::string_view key, std::string_view json) {
        body_ += body_.empty() ? "" : ",";
        body_ += quote(key);
        body_ += ':';
        body_ += json;
        return *this;
    }
    std::string str() const { return "{" + body_ + "}"; }

private:
    std::string body_;
};

// Builds one JSON array, item by item.
class ArrayBuilder {
public:
    ArrayBuilder& add(double v) { return add_raw(number(v)); }
    ArrayBuilder& add(long long v) { return add_raw(std::to_string(v)); }
    ArrayBuilder& add(int v) { return add_raw(std::to_string(v)); }
    ArrayBuilder& add(std::string_view s) { return add_raw(quote(s)); }
    ArrayBuilder& add_raw(std::string_view json) {
        if (!body_.empty()) body_ += ',';
        body_ += json;
        return *this;
    }
    template <typename Range>
    ArrayBuilder& add_all(const Range& values) {
        for (const auto& v : values) add(v);
        return *this;
    }
    std::string str() const { return "[" + body_ + "]"; }

private:
    std::string body_;
};

}  // namespace attnlab::json
