// attnlab merge DIR... --out DIR: joins the folders of a sharded experiment (--shard K/N, one
// folder per K) into the files the one-process run writes (see cli_shard.h): the experiment runs
// again with every unit's record read from the shards. A set with a shard missing, repeated, or
// run on another model, text, plan or options is refused, naming the shard and what differs.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "base/json.h"
#include "main/cli/cli_args.h"
#include "main/cli/cli_commands.h"
#include "main/cli/cli_output.h"
#include "main/cli/experiments/cli_shard.h"
#include "platform/whole_file.h"

namespace attnlab {

namespace {

const char* const kHelp =
    "usage: attnlab merge DIR... --out DIR\n"
    "\n"
    "Joins the output folders of `attnlab experiment NAME --shard K/N` (one per K = 1..N, in any order)\n"
    "into DIR: the same CSV tables and JSON summary that the run without --shard writes, byte for byte\n"
    "apart from the summary's timing. Refuses a set with a shard missing or given twice, or shards that\n"
    "ran another experiment, model, corpus, attention plan or options, and names the shard.\n"
    "The shards hold each unit's results (units.txt: a head's, or a window's): the merge runs the\n"
    "experiment again from them, so it reads the model and the text the shards read.\n";

int fail(const std::string& message, int code = 1) { return command_failed("merge", message, code); }

struct ShardFolder {
    std::filesystem::path dir;
    json::Value manifest;
    int index = 0, count = 0;
};

bool read_json(const std::filesystem::path& path, json::Value& value, std::string& text, std::string& error) {
    if (!read_whole_file(path.string(), text, error)) return false;
    json::ParseResult r = json::parse(text);
    if (!r.value || !r.value->is_object()) {
        error = path.string() + ": not a JSON object" + (r.error.empty() ? "" : " (" + r.error + ")");
        return false;
    }
    value = std::move(*r.value);
    return true;
}

bool same_json(const json::Value& a, const json::Value& b) {
    if (a.type() != b.type()) return false;
    if (a.is_array()) {
        if (a.items().size() != b.items().size()) return false;
        for (size_t i = 0; i < a.items().size(); ++i)
            if (!same_json(a.items()[i], b.items()[i])) return false;
        return true;
    }
    if (a.is_object()) {
        if (a.members().size() != b.members().size()) return false;
        for (size_t i = 0; i < a.members().size(); ++i)
            if (a.members()[i].first != b.members()[i].first || !same_json(a.members()[i].second, b.members()[i].second)) return false;
        return true;
    }
    return a.as_bool() == b.as_bool() && a.as_string() == b.as_string();  // numbers compare by their literal text
}

bool read_shard(const std::filesystem::path& dir, ShardFolder& s, std::string& error) {
    s.dir = dir;
    std::string text;
    if (!std::filesystem::exists(dir / "shard.json")) {
        error = dir.string() + ": no shard.json (not the output of a run with --shard K/N, or the run did not finish)";
        return false;
    }
    if (!read_json(dir / "shard.json", s.manifest, text, error)) return false;
    const json::Value *k = s.manifest.find("shard"), *n = s.manifest.find("of");
    const json::Value* arguments = s.manifest.find("arguments");
    if (!s.manifest.find("records")) {
        error = (dir / "shard.json").string() + ": names no records file (a shard of an older AttnLab, whose normalizer-swap shards held " +
                "table rows: run it again)";
        return false;
    }
    if (!arguments || !arguments->is_array() || arguments->items().empty()) {
        error = (dir / "shard.json").string() + ": a records shard without its arguments (the run the merge repeats)";
        return false;
    }
    if (!k || !n || !k->as_int(1, 1 << 20) || !n->as_int(1, 1 << 20)) {
        error = (dir / "shard.json").string() + ": lacks shard or of";
        return false;
    }
    s.index = static_cast<int>(*k->as_int(1, 1 << 20));
    s.count = static_cast<int>(*n->as_int(1, 1 << 20));
    return true;
}

std::string manifest_string(const ShardFolder& s, const char* key) {
    const json::Value* v = s.manifest.find(key);
    return v && v->is_string() ? v->as_string() : "";
}

// What a records shard `s` ran that differs from shard `ref`: the experiment, the model, the
// corpus, the plan or an option, with both values; or "".
std::string records_difference(const ShardFolder& ref, const ShardFolder& s) {
    const char* const fields[][2] = {
        {"experiment", "experiment"}, {"model_sha256", "model (SHA-256)"}, {"corpus_sha256", "corpus (SHA-256)"}, {"plan", "plan"}};
    for (const auto& [key, label] : fields)
        if (manifest_string(ref, key) != manifest_string(s, key))
            return std::string(label) + ": \"" + manifest_string(s, key) + "\" where shard 1 has \"" + manifest_string(ref, key) + "\"";
    const json::Value *a = ref.manifest.find("arguments"), *b = s.manifest.find("arguments");
    if (!a || !b || !same_json(*a, *b)) {
        const auto& x = a ? a->items() : std::vector<json::Value>{};
        const auto& y = b ? b->items() : std::vector<json::Value>{};
        size_t i = 0;
        while (i < x.size() && i < y.size() && x[i].as_string() == y[i].as_string()) ++i;
        auto word = [](const std::vector<json::Value>& v, size_t at) { return at < v.size() ? v[at].as_string() : "(end)"; };
        const std::string option = i > 0 && word(y, i - 1).rfind("--", 0) == 0 ? word(y, i - 1) + " " : "";
        return "options: \"" + option + word(y, i) + "\" where shard 1 has \"" + option + word(x, i) + "\"";
    }
    const json::Value *u = ref.manifest.find("units"), *v = s.manifest.find("units");
    if (!u || !v || !same_json(*u, *v)) return "units";
    return "";
}

// Checks the set is shards 1..N of one run, each once; orders `shards` by K.
bool check_set(std::vector<ShardFolder>& shards, std::string& error) {
    std::map<int, const ShardFolder*> by_index;
    const int n = shards[0].count;
    for (const ShardFolder& s : shards) {
        if (s.count != n) {
            error = s.dir.string() + ": shard " + std::to_string(s.index) + "/" + std::to_string(s.count) + ", but " +
                    shards[0].dir.string() + " is one of " + std::to_string(n);
            return false;
        }
        if (s.index > n) {
            error = s.dir.string() + ": shard " + std::to_string(s.index) + " of " + std::to_string(n) + " is out of range";
            return false;
        }
        auto [it, fresh] = by_index.emplace(s.index, &s);
        if (!fresh) {
            error = "shard " + std::to_string(s.index) + "/" + std::to_string(n) + " is given twice: " + it->second->dir.string() +
                    " and " + s.dir.string();
            return false;
        }
    }
    std::string missing;
    for (int k = 1; k <= n; ++k)
        if (!by_index.count(k)) missing += (missing.empty() ? "" : ", ") + std::to_string(k);
    if (!missing.empty()) {
        error = "shard(s) " + missing + " of " + std::to_string(n) + " missing";
        return false;
    }
    std::sort(shards.begin(), shards.end(), [](const ShardFolder& a, const ShardFolder& b) { return a.index < b.index; });
    for (const ShardFolder& s : shards) {
        const std::string differs = records_difference(shards[0], s);
        if (!differs.empty()) {
            error = s.dir.string() + ": shard " + std::to_string(s.index) + "/" + std::to_string(n) + " differs from shard 1 (" +
                    shards[0].dir.string() + ") in the " + differs;
            return false;
        }
    }
    return true;
}

// Reads every shard's records and runs the experiment again from them, in the shards' folder
// (cwd in shard.json), so that paths on its command line mean what they meant to the shards.
int merge_records(const std::vector<ShardFolder>& shards, const std::string& out) {
    UnitRecords records;
    std::string error;
    for (const ShardFolder& s : shards)
        if (!read_unit_records(s.dir / manifest_string(s, "records"), records, error)) return fail(error);
    ShardRun run{manifest_string(shards[0], "experiment"),
                 manifest_string(shards[0], "model_sha256"),
                 manifest_string(shards[0], "corpus_sha256"),
                 manifest_string(shards[0], "plan"),
                 {}};
    for (const json::Value& a : shards[0].manifest.find("arguments")->items()) run.arguments.push_back(a.as_string());
    std::error_code ec;
    const std::filesystem::path out_dir = std::filesystem::absolute(out, ec);
    const std::string cwd = manifest_string(shards[0], "cwd");
    if (!cwd.empty() && (std::filesystem::current_path(cwd, ec), ec))
        return fail("cannot enter " + cwd + ", the folder the shards ran in (their paths are relative to it): " + ec.message());
    const int code = rerun_with_records(run, out_dir.string(), records);
    if (code == 0)
        std::printf("merged %zu shards of %s into %s\n", shards.size(), manifest_string(shards[0], "experiment").c_str(), out.c_str());
    return code;
}

}  // namespace

int cli_merge(int argc, char** argv, int first) {
    if (printed_help(argc, argv, first, kHelp)) return 0;
    std::vector<std::string> dirs;
    std::string out;
    for (int i = first; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--out") {
            if (i + 1 >= argc) return fail("--out needs a folder", 2);
            out = argv[++i];
        } else if (a.rfind("--", 0) == 0) {
            return fail("unknown option " + a + "\n" + kHelp, 2);
        } else {
            dirs.push_back(a);
        }
    }
    if (out.empty()) return fail(std::string("--out is required\n") + kHelp, 2);
    if (dirs.empty()) return fail(std::string("name the shards' folders\n") + kHelp, 2);
    std::string error;
    std::vector<ShardFolder> shards(dirs.size());
    for (size_t i = 0; i < dirs.size(); ++i)
        if (!read_shard(dirs[i], shards[i], error)) return fail(error);
    if (!check_set(shards, error) || !make_output_folder(out, error)) return fail(error);
    return merge_records(shards, out);
}

}  // namespace attnlab
