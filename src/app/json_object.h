#pragma once
// Just enough JSON writing for status reports: one flat object at a time, nested by
// add_raw(). Non-finite numbers become null, as JSON has no NaN or Infinity.
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace attnlab {

class JsonObject {
public:
    JsonObject& add(std::string_view key, double v) {
        char buf[32];
        if (std::isfinite(v)) std::snprintf(buf, sizeof buf, "%.17g", v);
        return add_raw(key, std::isfinite(v) ? buf : "null");
    }
    JsonObject& add(std::string_view key, int v) { return add_raw(key, std::to_string(v)); }
    JsonObject& add(std::string_view key, bool v) { return add_raw(key, v ? "true" : "false"); }
    JsonObject& add(std::string_view key, const char* v) { return add_raw(key, quote(v)); }
    JsonObject& add_raw(std::string_view key, std::string_view json) {
        body_ += body_.empty() ? "" : ",";
        body_ += quote(key);
        body_ += ':';
        body_ += json;
        return *this;
    }
    std::string str() const { return "{" + body_ + "}"; }

    static std::string quote(std::string_view s) {
        std::string out = "\"";
        for (unsigned char c : s) {
            if (c == '"' || c == '\\') { out += '\\'; out += static_cast<char>(c); }
            else if (c < 0x20) { char buf[8]; std::snprintf(buf, sizeof buf, "\\u%04x", c); out += buf; }
            else out += static_cast<char>(c);
        }
        return out + "\"";
    }

private:
    std::string body_;
};

}  // namespace attnlab
