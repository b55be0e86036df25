// SafetensorsReader::open_shards (base/safetensors.h): every shard read as a file of its own,
// then checked against the index tensor by tensor.
#include <algorithm>
#include <unordered_map>

#include "base/safetensors.h"

namespace attnlab {

bool SafetensorsReader::open_shards(const ShardIndex& index, std::span<const Shard> shards, std::string& error) {
    source_ = index.source;
    data_.clear();
    sources_.clear();
    tensors_.clear();
    const auto fail = [&](const std::string& what) {
        error = what;
        data_.clear();
        sources_.clear();
        tensors_.clear();
        return false;
    };
    if (shards.size() != index.files.size())
        return fail(index.source + ": names " + std::to_string(index.files.size()) + " files but " + std::to_string(shards.size()) +
                    " were given");
    std::unordered_map<std::string, std::string> listed(index.weight_map.begin(), index.weight_map.end());  // tensor -> file
    std::unordered_map<std::string, const TensorInfo*> found;
    for (size_t s = 0; s < shards.size(); ++s) {
        SafetensorsReader one;
        if (!one.open(shards[s].bytes, shards[s].source, error)) return fail(error);
        for (TensorInfo t : one.tensors()) {
            const auto entry = listed.find(t.name);
            if (entry == listed.end())
                return fail(shards[s].source + ": holds tensor '" + t.name + "', which " + index.source + " does not list");
            if (entry->second != index.files[s])
                return fail(shards[s].source + ": holds tensor '" + t.name + "', which " + index.source + " lists in " + entry->second);
            t.shard = static_cast<int>(s);
            tensors_.push_back(std::move(t));
        }
        data_.push_back(one.data_.empty() ? std::span<const std::uint8_t>{} : one.data_.front());
        sources_.push_back(shards[s].source);
    }
    for (const TensorInfo& t : tensors_) found.emplace(t.name, &t);
    for (const auto& [tensor, file] : index.weight_map)
        if (!found.count(tensor)) return fail(index.source + ": lists tensor '" + tensor + "' in " + file + ", which has no such tensor");
    return true;
}

}  // namespace attnlab
