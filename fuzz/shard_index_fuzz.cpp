// libFuzzer target: arbitrary bytes as model.safetensors.index.json. Besides crashes and
// sanitizer reports, it traps when an accepted index breaks the parser's promises (every file
// named once, plain file names, no tensor twice), or when shards written to match it are not
// accepted by SafetensorsReader::open_shards, or a shard missing one tensor is. Built and run
// by scripts/fuzz.sh.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/safetensors.h"
#include "base/safetensors_write.h"
#include "base/shard_index.h"

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnlab;
    ShardIndex index;
    std::string error;
    if (!parse_shard_index(std::string_view(reinterpret_cast<const char*>(data), size), "idx.json", index, error)) {
        check(error.rfind("idx.json: ", 0) == 0);
        return 0;
    }
    check(!index.weight_map.empty() && !index.files.empty());
    check(std::set<std::string>(index.files.begin(), index.files.end()).size() == index.files.size());
    std::set<std::string> tensors;
    for (const auto& [tensor, file] : index.weight_map) {
        check(tensors.insert(tensor).second);
        check(std::find(index.files.begin(), index.files.end(), file) != index.files.end());
        check(!file.empty() && file != "." && file != ".." && file.find_first_of("/\\") == std::string::npos);
    }
    if (index.weight_map.size() > 64 || tensors.count("__metadata__")) return 0;
    // Shards that hold exactly what the index says: accepted. The first shard short of its
    // first tensor: refused.
    std::vector<std::vector<std::uint8_t>> files;
    for (int drop = 0; drop < 2; ++drop) {
        files.clear();
        for (const std::string& file : index.files) {
            std::vector<TensorBytes> ts;
            for (const auto& [tensor, f] : index.weight_map)
                if (f == file && !(drop && ts.empty() && file == index.files.front() && tensor == index.weight_map.front().first))
                    ts.push_back({tensor, DType::F32, {1}, {0, 0, 128, 63}});
            files.push_back(safetensors_file(ts));
        }
        std::vector<SafetensorsReader::Shard> shards;
        for (size_t i = 0; i < files.size(); ++i) shards.push_back({index.files[i], files[i]});
        SafetensorsReader reader;
        const bool ok = reader.open_shards(index, shards, error);
        check(ok == (drop == 0));
        if (ok) check(reader.tensors().size() == index.weight_map.size());
    }
    return 0;
}
