#pragma once
// Command-line options for the attnlab CLI: "--name value" pairs and bare "--flag"s,
// checked against what each subcommand accepts, so that a typo is an error, not a default.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace attnlab {

class CliArgs {
public:
    // Parses argv[first..] for a subcommand that accepts `valued` options (which take a value)
    // and `flags` (which do not). Returns false with a message on anything else.
    bool parse(int argc, char** argv, int first, const std::set<std::string>& valued, const std::set<std::string>& flags,
               std::string& error);

    bool flag(const std::string& name) const { return flags_.count(name) > 0; }
    std::optional<std::string> value(const std::string& name) const;  // the last one given
    // Every value of an option given more than once (e.g. --text a.txt --text b.txt), in order.
    std::vector<std::string> values(const std::string& name) const;

    // Typed getters: nullopt when absent; false with a message naming the option when malformed
    // or out of [lo, hi].
    bool get_int(const std::string& name, std::int64_t lo, std::int64_t hi, std::optional<std::int64_t>& out, std::string& error) const;
    bool get_double(const std::string& name, double lo, double hi, std::optional<double>& out, std::string& error) const;
    // A comma-separated list of integers in [lo, hi], e.g. --ids 464,3290.
    bool get_int_list(const std::string& name, std::int64_t lo, std::int64_t hi, std::vector<std::int64_t>& out, std::string& error) const;
    // A comma-separated list of finite numbers in [lo, hi], e.g. --eps 0.001,0.1,10.
    bool get_double_list(const std::string& name, double lo, double hi, std::vector<double>& out, std::string& error) const;

private:
    std::map<std::string, std::string> values_;
    std::map<std::string, std::vector<std::string>> repeated_;
    std::set<std::string> flags_;
};

}  // namespace attnlab
