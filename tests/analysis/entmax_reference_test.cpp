// alpha-entmax against 50-digit weights from mpmath (tests/reference/make_entmax_fixtures.py, which
// shares nothing with src/): the analysis path in double and the model's fp32 rows, within 1e-6
// on every weight, for alpha from 1.0001 to 1000 and T from 1e-4 to 1e4, on adversarial rows
// (ties, near-ties 1e-7 apart, logit ranges of 6e4, rows of 1024 keys).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "analysis/normalizers.h"
#include "base/json.h"
#include "model/normalize_rows.h"
#include "platform/whole_file.h"

using namespace attnlab;

namespace {

constexpr double kTolerance = 1e-6;  // issue 36, point 5

struct EntmaxCase {
    std::string row;
    std::vector<double> logits;  // float32 values; -inf masks a key
    double alpha = 0.0, T = 0.0;
    std::vector<double> p;
};

// The fixture writes float32 values to 9 digits, which round back to the same float32: the very
// numbers the reference was computed for.
double as_float32(double v) { return static_cast<double>(static_cast<float>(v)); }

double number_or_minus_inf(const json::Value& v) {
    if (v.is_string() && v.as_string() == "-inf") return -std::numeric_limits<double>::infinity();
    REQUIRE(v.is_number());
    return as_float32(v.as_number());
}

std::vector<EntmaxCase> read_cases() {
    const std::string path = std::string(ATTNLAB_FIXTURES_DIR) + "/entmax/cases.json";
    const json::ParseResult parsed = json::parse(read_whole_file(path));
    REQUIRE(parsed.value);
    const json::Value& rows = *parsed.value->find("rows");
    std::vector<EntmaxCase> cases;
    for (const json::Value& c : parsed.value->find("cases")->items()) {
        const json::Value& row = rows.items().at(static_cast<size_t>(c.find("row")->as_number()));
        EntmaxCase e;
        e.row = row.find("name")->as_string();
        for (const json::Value& l : row.find("logits")->items()) e.logits.push_back(number_or_minus_inf(l));
        e.alpha = c.find("alpha")->as_number();
        e.T = as_float32(c.find("T")->as_number());
        for (const json::Value& p : c.find("p")->items()) e.p.push_back(p.as_number());
        REQUIRE(e.p.size() == e.logits.size());
        cases.push_back(std::move(e));
    }
    return cases;
}

// The keys a mask leaves (the engine never sees masked keys: a query's row is the keys it sees),
// after checking that the reference gives the masked ones 0.
void drop_masked(const EntmaxCase& c, std::vector<double>& logits, std::vector<double>& p) {
    for (size_t i = 0; i < c.logits.size(); ++i) {
        if (std::isinf(c.logits[i])) {
            CHECK(c.p[i] == 0.0);
            continue;
        }
        logits.push_back(c.logits[i]);
        p.push_back(c.p[i]);
    }
}

// worst = max(worst, err), where a NaN err makes worst NaN (std::max would drop it).
void raise_to(double& worst, double err) {
    if (!(err <= worst)) worst = err;
}

}  // namespace

TEST_CASE("entmax: the double and the fp32 weights are within 1e-6 of 50-digit references up to alpha 1000",
          "[normalizers][entmax-reference]") {
    const std::vector<EntmaxCase> cases = read_cases();
    REQUIRE(cases.size() > 1000);
    double worst_double = 0.0, worst_fp32 = 0.0, largest_alpha = 0.0;
    for (const EntmaxCase& c : cases) {
        std::vector<double> logits, ref;
        drop_masked(c, logits, ref);
        const Normalizer n{NormalizerKind::Entmax, c.alpha, 1.0};
        INFO(c.row << " (" << logits.size() << " keys), alpha " << c.alpha << ", T " << c.T);
        std::string why;
        REQUIRE(check_normalizer_input(n, logits, c.T, why));
        const std::vector<double> p = normalize(n, logits, c.T);

        HeadPlan head;
        head.normalizer = n;
        head.temperature = static_cast<float>(c.T);  // exact: c.T is a float32
        const std::vector<float> row(logits.begin(), logits.end());
        std::vector<float> w(row.size(), -1.0f);
        normalize_row(head, row.data(), static_cast<int>(row.size()), w.data());

        double err_double = 0.0, err_fp32 = 0.0;
        for (size_t i = 0; i < ref.size(); ++i) {
            raise_to(err_double, std::abs(p[i] - ref[i]));
            raise_to(err_fp32, std::abs(static_cast<double>(w[i]) - ref[i]));
            // Exact zeros off the support, both ways round.
            if (ref[i] == 0.0) CHECK(w[i] == 0.0f);
        }
        CHECK(err_double <= kTolerance);
        CHECK(err_fp32 <= kTolerance);
        worst_double = std::max(worst_double, err_double);
        worst_fp32 = std::max(worst_fp32, err_fp32);
        largest_alpha = std::max(largest_alpha, c.alpha);
    }
    WARN("entmax vs 50 digits over " << cases.size() << " cases: largest error " << worst_double << " (double), " << worst_fp32
                                     << " (fp32)");
    CHECK(largest_alpha == 1000.0);  // the parser's limit is covered
}
