#pragma once
// The 95% intervals over windows that the corpus experiments' tables carry (normalizer-swap,
// fading): --seed and --resamples, one resampling matrix per table, and a cell's two columns.
// The matrix and every interval come from the windows' values alone (analysis/bootstrap.h), so a
// merge from the shards' records and a one-process run write the same bytes.
#include <cstdint>
#include <string>
#include <vector>

#include "main/cli/cli_args.h"

namespace attnlab {

struct WindowBootstrap {
    std::uint64_t seed = 0;   // --seed (default 0)
    int resamples = 1000;     // --resamples
    std::vector<int> matrix;  // (resamples, windows); empty with fewer than 2 windows: no interval

    // Draws the matrix for `windows` windows of the table named by `table` (its own stream).
    void draw(int windows, std::uint64_t table);
    // "lower", "upper" of sum x / sum n over the windows (each mapped by f when given), or "nan", "nan".
    std::vector<std::string> cells(const std::vector<double>& x, const std::vector<double>& n, double (*f)(double) = nullptr) const;
};

// Reads --seed and --resamples; false with a message on a bad value.
bool read_bootstrap_options(const CliArgs& args, WindowBootstrap& b, std::string& error);

// How the intervals were made, for a summary's "intervals" member.
std::string bootstrap_json(const WindowBootstrap& b);

}  // namespace attnlab
