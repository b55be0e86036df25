// libFuzzer target: arbitrary bytes as a JSON document. Besides crashes, sanitizer reports
// and stack overflows, it traps when a parsed tree breaks the reader's promises: numbers
// keep their literal text, integer accessors agree with it, and strings survive a
// quote() -> parse() round trip. Built and run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

void walk(const attnlab::json::Value& v) {
    using attnlab::json::Value;
    switch (v.type()) {
        case Value::Type::Number: {
            check(!v.as_string().empty());
            if (const auto u = v.as_uint64()) check(std::to_string(*u) == v.as_string());
            if (const auto i = v.as_int(-1000000, 1000000))
                check(*i >= -1000000 && *i <= 1000000 && static_cast<double>(*i) == v.as_number());
            break;
        }
        case Value::Type::String: {
            const auto back = attnlab::json::parse(attnlab::json::quote(v.as_string()));
            check(back.value && back.value->is_string() && back.value->as_string() == v.as_string());
            break;
        }
        case Value::Type::Array:
            for (const Value& item : v.items()) walk(item);
            break;
        case Value::Type::Object:
            for (const Value::Member& m : v.members()) {
                check(v.find(m.first) != nullptr);
                walk(m.second);
            }
            break;
        default: break;
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // An exact-size copy, so AddressSanitizer sees any read one past the end.
    const std::vector<char> text(data, data + size);
    const auto r = attnlab::json::parse(std::string_view(text.data(), text.size()), 64);
    if (!r.value) {
        check(r.error.rfind("at byte ", 0) == 0);
        return 0;
    }
    check(r.error.empty());
    walk(*r.value);
    return 0;
}
