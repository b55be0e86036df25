#include "main/cli_args.h"

#include <cerrno>
#include <cmath>
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

static bool parse_int(const std::string& text, std::int64_t& out) {
    if (text.empty()) return false;
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end != text.c_str() + text.size()) return false;
    out = v;
    return true;
}

bool CliArgs::get_int(const std::string& name, std::int64_t lo, std::int64_t hi, std::optional<std::int64_t>& out,
                      std::string& error) const {
    const auto text = value(name);
    if (!text) return true;
    std::int64_t v = 0;
    if (!parse_int(*text, v) || v < lo || v > hi) {
        error = "--" + name + " wants a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got '" +
                *text + "'";
        return false;
    }
    out = v;
    return true;
}

bool CliArgs::get_double(const std::string& name, double lo, double hi, std::optional<double>& out, std::string& error) const {
    const auto text = value(name);
    if (!text) return true;
    char* end = nullptr;
    const double v = std::strtod(text->c_str(), &end);
    if (text->empty() || end != text->c_str() + text->size() || !std::isfinite(v) || v < lo || v > hi) {
        error = "--" + name + " wants a number from " + std::to_string(lo) + " to " + std::to_string(hi) + ", got '" + *text + "'";
        return false;
    }
    out = v;
    return true;
}

// "a,b,c" -> {"a", "b", "c"}; empty items stay, so that "1,,2" is reported, not skipped.
static std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> items;
    size_t start = 0;
    for (;;) {
        const size_t comma = text.find(',', start);
        items.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos) return items;
        start = comma + 1;
    }
}

bool CliArgs::get_int_list(const std::string& name, std::int64_t lo, std::int64_t hi, std::vector<std::int64_t>& out,
                           std::string& error) const {
    const auto text = value(name);
    out.clear();
    if (!text) return true;
    for (const std::string& item : split_commas(*text)) {
        std::int64_t v = 0;
        if (!parse_int(item, v)) {
            error = "--" + name + " wants comma-separated whole numbers; '" + item + "' is not one";
            return false;
        }
        if (v < lo || v > hi) {
            error = "--" + name + ": " + item + " is outside " + std::to_string(lo) + ".." + std::to_string(hi);
            return false;
        }
        out.push_back(v);
    }
    return true;
}

bool CliArgs::get_double_list(const std::string& name, double lo, double hi, std::vector<double>& out, std::string& error) const {
    const auto text = value(name);
    out.clear();
    if (!text) return true;
    for (const std::string& item : split_commas(*text)) {
        char* end = nullptr;
        const double v = std::strtod(item.c_str(), &end);
        if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(v)) {
            error = "--" + name + " wants comma-separated numbers; '" + item + "' is not one";
            return false;
        }
        if (v < lo || v > hi) {
            error = "--" + name + ": " + item + " is outside " + std::to_string(lo) + ".." + std::to_string(hi);
            return false;
        }
        out.push_back(v);
    }
    return true;
}

}  // namespace attnlab
