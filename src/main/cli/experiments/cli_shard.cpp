// --shard K/N and the manifest a sharded run leaves for `attnlab merge`.
#include "main/cli/experiments/cli_shard.h"

#include "base/json.h"
#include "main/cli/cli_commands.h"
#include "main/cli/cli_output.h"
#include "platform/whole_file.h"

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

namespace {
const UnitRecords* merging = nullptr;   // set while `attnlab merge` reruns an experiment
const ShardRun* merging_run = nullptr;  // the run the shards recorded, meanwhile
}  // namespace

std::vector<std::string> shard_run_arguments(int argc, char** argv, int name_at) {
    std::vector<std::string> out;
    for (int i = name_at; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--quiet" || a == "--json") continue;
        if (a == "--shard" || a == "--out" || a == "--threads") {
            ++i;
            continue;
        }
        out.push_back(a);
    }
    return out;
}

std::unique_ptr<UnitSlice> unit_slice_for(const ShardSpec& shard, int units) {
    if (merging) {
        auto slice = std::make_unique<UnitSlice>();
        slice->given = merging;
        return slice;
    }
    if (!shard.given) return nullptr;
    auto slice = std::make_unique<UnitSlice>();
    shard.range(units, slice->first, slice->end);
    return slice;
}

bool write_records_shard(const std::filesystem::path& dir, const ShardRun& run, const ShardSpec& shard, int total_units,
                         const UnitRecords& records, std::string& error) {
    if (!write_text_file(dir / "units.txt", format_unit_records(records), error)) return false;
    int first = 0, end = 0;
    shard.range(total_units, first, end);
    std::error_code ec;
    const std::string cwd = std::filesystem::current_path(ec).string();
    json::ObjectBuilder m;
    m.add("experiment", run.experiment)
        .add("shard", shard.index)
        .add("of", shard.count)
        .add("units", total_units)
        .add("first_unit", first)
        .add("end_unit", end)
        .add("model_sha256", run.model_sha256)
        .add("corpus_sha256", run.corpus_sha256)
        .add("plan", run.plan)
        .add_raw("arguments", json::ArrayBuilder().add_all(run.arguments).str())
        .add("cwd", cwd)
        .add("records", "units.txt");
    return write_text_file(dir / "shard.json", m.str() + "\n", error);
}

bool read_unit_records(const std::filesystem::path& file, UnitRecords& records, std::string& error) {
    std::string text;
    return read_whole_file(file.string(), text, error) && parse_unit_records(text, file.string(), records, error);
}

int rerun_with_records(const ShardRun& run, const std::string& out, const UnitRecords& records) {
    std::vector<std::string> words = {"attnlab", "experiment"};
    words.insert(words.end(), run.arguments.begin(), run.arguments.end());
    words.insert(words.end(), {"--out", out, "--quiet"});
    std::vector<char*> argv;
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    merging = &records;
    merging_run = &run;
    const int code = cli_experiment(static_cast<int>(words.size()), argv.data(), 2);
    merging = nullptr;
    merging_run = nullptr;
    return code;
}

bool rerunning_from_shards() { return merging_run != nullptr; }

bool same_as_merged_shards(const ShardRun& now, std::string& error) {
    if (!merging_run) return true;
    const std::pair<const char*, std::pair<std::string, std::string>> fields[] = {
        {"model (SHA-256)", {now.model_sha256, merging_run->model_sha256}},
        {"corpus (SHA-256)", {now.corpus_sha256, merging_run->corpus_sha256}},
        {"plan", {now.plan, merging_run->plan}}};
    for (const auto& [what, values] : fields)
        if (values.first != values.second) {
            error = std::string("the ") + what + " is now \"" + values.first + "\", but the shards ran \"" + values.second +
                    "\": a file changed since the shards ran; run them again";
            return false;
        }
    return true;
}

}  // namespace attnlab
