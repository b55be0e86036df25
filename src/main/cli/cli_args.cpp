#include "main/cli/cli_args.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace attnlab {

bool CliArgs::parse(int argc, char** argv, int first, const std::set<std::string>& valued, const std::set<std::string>& flags,
                    std::string& error) {
    for (int i = first; i < argc; ++i) {
        const std::string arg = argv[i];
        // "--name", or "-x" for a one-letter option such as -n.
        const bool long_form = arg.rfind("--", 0) == 0;
        const bool short_form = !long_form && arg.size() == 2 && arg[0] == '-';
        if (!long_form && !short_form) {
            error = "unexpected argument '" + arg + "' (options start with --)";
            return false;
        }
        const std::string name = arg.substr(long_form ? 2 : 1);
        if (flags.count(name)) {
            flags_.insert(name);
        } else if (valued.count(name)) {
            if (i + 1 >= argc) {
                error = "option --" + name + " needs a value";
                return false;
            }
            values_[name] = argv[++i];
            repeated_[name].push_back(values_[name]);
        } else {
            error = "unknown option '" + arg + "'";
            return false;
        }
    }
    return true;
}

std::optional<std::string> CliArgs::value(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

std::vector<std::string> CliArgs::values(const std::string& name) const {
    auto it = repeated_.find(name);
    return it == repeated_.end() ? std::vector<std::string>{} : it->second;
}

namespace {

bool parse_int(const std::string& text, std::int64_t& out) {
    if (text.empty()) return false;
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end != text.c_str() + text.size()) return false;
    out = v;
    return true;
}

}  // namespace

bool CliArgs::get_int(const std::string& name, std::int64_t lo, std::int64_t hi, std::optional<std::int64_t>& out,
                      std::string& error) const {
    const auto text = value(name);
    if (!text) return true;
    std::int64_t v = 0;
    if (!parse_int(*text, v) || v < lo || v > hi) {
        error = "--" + name + " wants a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got '" + *text + "'";
        return false;
    }
    out = v;
    return true;
}

namespace {

// Bounds in messages: "1e-12", not std::to_string's "0.000000".
std::string bound_text(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}
std::string bound_text(std::int64_t v) { return std::to_string(v); }

// A finite number written out in full ("1e-3" yes, "1e-3x" and "inf" no).
bool parse_double(const std::string& text, double& out) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v)) return false;
    out = v;
    return true;
}

}  // namespace

bool CliArgs::get_double(const std::string& name, double lo, double hi, std::optional<double>& out, std::string& error) const {
    const auto text = value(name);
    if (!text) return true;
    double v = 0;
    if (!parse_double(*text, v) || v < lo || v > hi) {
        error = "--" + name + " wants a number from " + bound_text(lo) + " to " + bound_text(hi) + ", got '" + *text + "'";
        return false;
    }
    out = v;
    return true;
}

namespace {

// "a,b,c" -> {"a", "b", "c"}; empty items stay, so that "1,,2" is reported, not skipped.
std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> items;
    size_t start = 0;
    for (;;) {
        const size_t comma = text.find(',', start);
        items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) return items;
        start = comma + 1;
    }
}

// The items of a comma-separated list, each read by `parse` (false: not a `kind`) and checked
// against [lo, hi].
template <typename T, typename Parse>
bool parse_list(const std::optional<std::string>& text, const std::string& name, T lo, T hi, const char* kind, Parse parse,
                std::vector<T>& out, std::string& error) {
    out.clear();
    if (!text) return true;
    for (const std::string& item : split_commas(*text)) {
        T v{};
        if (!parse(item, v)) {
            error = "--" + name + " wants comma-separated " + kind + "; '" + item + "' is not one";
            return false;
        }
        if (v < lo || v > hi) {
            error = "--" + name + ": " + item + " is outside " + bound_text(lo) + ".." + bound_text(hi);
            return false;
        }
        out.push_back(v);
    }
    return true;
}

}  // namespace

bool CliArgs::get_int_list(const std::string& name, std::int64_t lo, std::int64_t hi, std::vector<std::int64_t>& out,
                           std::string& error) const {
    return parse_list(value(name), name, lo, hi, "whole numbers", parse_int, out, error);
}

bool CliArgs::get_double_list(const std::string& name, double lo, double hi, std::vector<double>& out, std::string& error) const {
    return parse_list(value(name), name, lo, hi, "numbers", parse_double, out, error);
}

}  // namespace attnlab
