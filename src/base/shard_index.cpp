#include "base/shard_index.h"

#include <algorithm>
#include <unordered_map>

#include "base/json.h"

namespace attnlab {

namespace {

bool plain_file_name(const std::string& name) {
    return !name.empty() && name != "." && name != ".." && name.find_first_of("/\\") == std::string::npos &&
           name.find('\0') == std::string::npos;
}

}  // namespace

bool parse_shard_index(std::string_view text, std::string source, ShardIndex& index, std::string& error) {
    index = {};
    const auto fail = [&](const std::string& what) {
        error = source + ": " + what;
        return false;
    };
    const json::ParseResult parsed = json::parse(text);
    if (!parsed.value) return fail("not valid JSON (" + parsed.error + ")");
    const json::Value& root = *parsed.value;
    if (!root.is_object()) return fail("expected a JSON object with a \"weight_map\"");
    const json::Value* map = root.find("weight_map");
    if (!map) return fail("no \"weight_map\": not the index of a sharded checkpoint");
    if (!map->is_object()) return fail("\"weight_map\" is " + std::string(json::Value::type_name(map->type())) + ", it must be an object");
    if (const json::Value* metadata = root.find("metadata"); metadata && !metadata->is_object())
        return fail("\"metadata\" is " + std::string(json::Value::type_name(metadata->type())) + ", it must be an object");
    std::unordered_map<std::string, std::string> seen;  // tensor -> its file
    for (const json::Value::Member& m : map->members()) {
        const std::string& tensor = m.first;
        if (!m.second.is_string())
            return fail("tensor '" + tensor + "' maps to " + json::Value::type_name(m.second.type()) + ", not a file name");
        const std::string& file = m.second.as_string();
        if (!plain_file_name(file))
            return fail("tensor '" + tensor + "' maps to \"" + file + "\", which is not a file name in the index's folder");
        if (const auto [at, fresh] = seen.emplace(tensor, file); !fresh)
            return fail("the weight_map names tensor '" + tensor + "' twice (in " + at->second + " and in " + file + ")");
        if (std::find(index.files.begin(), index.files.end(), file) == index.files.end()) index.files.push_back(file);
        index.weight_map.emplace_back(tensor, file);
    }
    if (index.weight_map.empty()) return fail("the weight_map names no tensor");
    index.source = std::move(source);
    return true;
}

}  // namespace attnlab
