// --shard K/N and the manifest a sharded run leaves for `attnlab merge`.
#include "main/cli/experiments/cli_shard.h"

#include "base/json.h"
#include "main/cli/cli_output.h"

namespace attnlab {

void ShardSpec::range(int total, int& first, int& end) const {
    // Block K-1 of N: units [total*(K-1)/N, total*K/N); the blocks cover 0..total once, in order.
    first = static_cast<int>(static_cast<long long>(total) * (index - 1) / count);
    end = static_cast<int>(static_cast<long long>(total) * index / count);
}

bool read_shard_option(const CliArgs& args, ShardSpec& shard, std::string& error) {
    const auto v = args.value("shard");
    if (!v) return true;
    const size_t slash = v->find('/');
    auto whole_number = [](const std::string& s, int& out) {
        if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return false;
        out = std::stoi(s);
        return true;
    };
    int k = 0, n = 0;
    if (slash == std::string::npos || !whole_number(v->substr(0, slash), k) || !whole_number(v->substr(slash + 1), n)) {
        error = "--shard wants K/N with whole numbers (the K-th of N slices, 1 <= K <= N), got '" + *v + "'";
        return false;
    }
    if (n < 1 || k < 1 || k > n) {
        error = "--shard " + *v + ": K must be between 1 and N, and N at least 1";
        return false;
    }
    shard.index = k;
    shard.count = n;
    shard.given = true;
    return true;
}

bool write_shard_manifest(const std::filesystem::path& dir, const std::string& experiment, const ShardSpec& shard, int total_units,
                          const std::vector<std::string>& tables, const std::string& summary, std::string& error) {
    int first = 0, end = 0;
    shard.range(total_units, first, end);
    json::ObjectBuilder m;
    m.add("experiment", experiment)
        .add("shard", shard.index)
        .add("of", shard.count)
        .add("units", total_units)
        .add("first_unit", first)
        .add("end_unit", end)
        .add_raw("tables", json::ArrayBuilder().add_all(tables).str())
        .add("summary", summary);
    return write_text_file(dir / "shard.json", m.str() + "\n", error);
}

}  // namespace attnlab
