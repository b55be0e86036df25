#pragma once
// --shard K/N: the K-th (1-based) of N deterministic slices of an experiment's work, so that a
// cluster can run the slices as a job array and `attnlab merge` can join them. A slice is a
// contiguous block of the experiment's units (the five experiments: heads; fading and
// normalizer-swap: windows). A shard keeps each unit's result as a record of doubles
// (analysis/unit_slice.h), and the merge runs the experiment again with every unit's record taken
// from the shards instead of computed, so that the tables, means, KS tests and intervals over
// windows come from the same code on the same doubles: byte for byte the one-process run's files.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "analysis/unit_slice.h"
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

// What a records shard's folder says about its run, for the merge to check and repeat it.
struct ShardRun {
    std::string experiment;  // as named on the command line ("all", "fading", ...)
    std::string model_sha256, corpus_sha256, plan;
    // argv from the experiment's name on, without --shard, --out, --threads, --quiet, --json
    // (which change no output file): the run the merge repeats.
    std::vector<std::string> arguments;
};

// The arguments of ShardRun from argv[name_at] (the experiment's name) on.
std::vector<std::string> shard_run_arguments(int argc, char** argv, int name_at);

// A slice of `units` units for this run: null without --shard and outside a merge (compute
// everything); the shard's block; or, under `attnlab merge`, every record of the shards.
std::unique_ptr<UnitSlice> unit_slice_for(const ShardSpec& shard, int units);

// DIR/units.txt (one record a line: stage, unit, values, in %.17g) and DIR/shard.json.
bool write_records_shard(const std::filesystem::path& dir, const ShardRun& run, const ShardSpec& shard, int total_units,
                         const UnitRecords& records, std::string& error);
bool read_unit_records(const std::filesystem::path& file, UnitRecords& records, std::string& error);

// `attnlab merge`: runs `attnlab experiment ARGUMENTS --out OUT` (the shards' run.arguments) with
// every unit's record from `records` (unit_slice_for hands them to the experiment); its exit code.
int rerun_with_records(const ShardRun& run, const std::string& out, const UnitRecords& records);

// Under `attnlab merge`: false with a message when the model, the corpus or the plan the rerun
// read is not what the shards ran (a file changed since); true otherwise.
bool same_as_merged_shards(const ShardRun& now, std::string& error);
bool rerunning_from_shards();  // whether `attnlab merge` is running the experiment now

}  // namespace attnlab
