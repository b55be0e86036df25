#pragma once
// model.safetensors.index.json, the index of a sharded checkpoint as Hugging Face writes it:
//
//   {"metadata": {"total_size": N, ...}, "weight_map": {"tensor name": "file name", ...}}
//
// Parsed from text (no I/O): the caller then maps the files it names and hands their bytes to
// SafetensorsReader::open_shards (base/safetensors.h).
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab {

struct ShardIndex {
    std::string source;                                           // the index file's name, for messages
    std::vector<std::string> files;                               // every file it names, each once, in order of first mention
    std::vector<std::pair<std::string, std::string>> weight_map;  // tensor -> file, in the index's order
};

// Fails with a message naming `source` and what is wrong: not JSON, no "weight_map" object, a
// file name that is not a plain name in the index's folder (empty, with a '/' or '\', "." or
// ".."), a tensor named twice, an index that names no tensor.
bool parse_shard_index(std::string_view text, std::string source, ShardIndex& index, std::string& error);

}  // namespace attnlab
