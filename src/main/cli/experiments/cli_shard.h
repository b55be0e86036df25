#pragma once
// --shard K/N: the K-th (1-based) of N deterministic slices of an experiment's work, so that a
// cluster can run the slices as a job array and `attnlab merge` can join them. A slice is a
// contiguous block of the experiment's units (plans, ...), so the merged tables are the shards'
// rows concatenated in shard order: byte for byte the rows of the one-process run.
#include <filesystem>
#include <string>
#include <vector>

#include "main/cli/cli_args.h"

namespace attnlab {

struct ShardSpec {
    int index = 1, count = 1;  // K and N of --shard K/N; 1/1 is the whole run
    bool given = false;        // --shard was on the command line (then the run writes DIR/shard.json)
    // The units [first, end) of `total` that this shard runs: N near-equal contiguous blocks.
    void range(int total, int& first, int& end) const;
};

// Reads --shard K/N (1 <= K <= N); false with a message that names the bad part.
bool read_shard_option(const CliArgs& args, ShardSpec& shard, std::string& error);

// DIR/shard.json: which experiment and slice the folder holds, the units it ran, and the files
// a merge joins (`tables`, concatenated) and copies (`summary`, equal in every shard but timing).
bool write_shard_manifest(const std::filesystem::path& dir, const std::string& experiment, const ShardSpec& shard, int total_units,
                          const std::vector<std::string>& tables, const std::string& summary, std::string& error);

}  // namespace attnlab
