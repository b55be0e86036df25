#include "main/cli/experiments/cli_intervals.h"

#include <climits>

#include "analysis/bootstrap.h"
#include "base/json.h"
#include "base/random.h"
#include "main/cli/cli_output.h"

namespace attnlab {

void WindowBootstrap::draw(int windows, std::uint64_t table) {
    matrix.clear();
    if (windows > 1) matrix = bootstrap_resamples(windows, resamples, derive_seed(seed, table));
}

std::vector<std::string> WindowBootstrap::cells(const std::vector<double>& x, const std::vector<double>& n, double (*f)(double)) const {
    if (matrix.empty()) return {"nan", "nan"};
    const Interval i = ratio_bootstrap(x, n, matrix);
    return {csv_number(f ? f(i.lower) : i.lower), csv_number(f ? f(i.upper) : i.upper)};
}

bool read_bootstrap_options(const CliArgs& args, WindowBootstrap& b, std::string& error) {
    std::optional<std::int64_t> seed, resamples;
    if (!args.get_int("seed", 0, INT64_MAX, seed, error) || !args.get_int("resamples", 1, 1000000, resamples, error)) return false;
    b.seed = static_cast<std::uint64_t>(seed.value_or(0));
    b.resamples = static_cast<int>(resamples.value_or(1000));
    return true;
}

std::string bootstrap_json(const WindowBootstrap& b) {
    return json::ObjectBuilder()
        .add("method",
             "percentile bootstrap over windows (resampled with replacement; one resampling per table, shared by its cells), the 2.5% "
             "and 97.5% quantiles by numpy's linear rule; nan with one window")
        .add("level", 0.95)
        .add("resamples", b.resamples)
        .add_raw("seed", std::to_string(b.seed))
        .str();
}

}  // namespace attnlab
