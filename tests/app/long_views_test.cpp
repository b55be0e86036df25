// The long views of issue 38: the chips' line layout, the needle sample and its probes, the
// log bins of the fading plot, and the fading series the grid's streaming pass keeps, each
// against a reference written here independently.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "analysis/fading.h"
#include "app/long_samples.h"
#include "app/token_chip.h"
#include "app/work/head_thumbnails.h"
#include "base/random.h"
#include "model/open_decoder.h"
#include "platform/whole_file.h"

using namespace attnlab;

namespace {

// Reference layout: place chips one by one at screen positions, as the panel did before it laid
// them out once (a chip joins the line when its right edge stays inside the box).
std::vector<int> placed_line_of_each(const std::vector<float>& widths, float gap, float box_right, float box_left) {
    std::vector<int> line(widths.size());
    float right = box_left;
    int current = 0;
    for (size_t i = 0; i < widths.size(); ++i) {
        if (i > 0 && right + gap + widths[i] <= box_right) {
            right += gap + widths[i];
        } else {
            if (i > 0) ++current;
            right = box_left + widths[i];
        }
        line[i] = current;
    }
    return line;
}

}  // namespace

TEST_CASE("chip_line_starts wraps chips as placing them one by one does", "[long_views]") {
    SplitMix64 g(7);
    for (int trial = 0; trial < 50; ++trial) {
        const int n = 1 + static_cast<int>(g.uniform() * 300);
        std::vector<float> widths(static_cast<size_t>(n));
        for (float& w : widths) w = 4.0f + static_cast<float>(g.uniform()) * 60.0f;
        const float gap = 2.5f, box = 30.0f + static_cast<float>(g.uniform()) * 400.0f;  // some chips wider than the box
        const std::vector<int> starts = chip_line_starts(widths, gap, box);
        const std::vector<int> line = placed_line_of_each(widths, gap, 100.0f + box, 100.0f);
        REQUIRE(static_cast<int>(starts.size()) == line.back() + 1);
        for (int i = 0; i < n; ++i) {
            REQUIRE(chip_line_of(starts, i) == line[static_cast<size_t>(i)]);
            if (i == 0 || line[static_cast<size_t>(i)] != line[static_cast<size_t>(i) - 1])
                REQUIRE(starts[static_cast<size_t>(line[static_cast<size_t>(i)])] == i);
        }
    }
    CHECK(chip_line_starts({}, 1.0f, 10.0f).empty());
}

TEST_CASE("needle_probes finds the planted phrase first and every later repeat", "[long_views]") {
    const std::vector<int> phrase = {7, 8, 9};
    // planted at 2..4 (key 5), repeats ending at 12 and 20; a partial match at 15..16 is not one.
    const std::vector<int> tokens = {1, 2, 7, 8, 9, 42, 3, 3, 3, 3, 7, 8, 9, 5, 5, 7, 8, 1, 7, 8, 9, 6};
    const std::vector<NeedleProbe> probes = needle_probes(tokens, phrase);
    REQUIRE(probes.size() == 2);
    CHECK(probes[0].query == 12);
    CHECK(probes[0].key == 5);
    CHECK(probes[0].distance() == 7);
    CHECK(probes[1].query == 20);
    CHECK(probes[1].key == 5);
    // Brute force: every window equal to the phrase after the first is a probe.
    int windows = 0;
    for (size_t i = 0; i + phrase.size() <= tokens.size(); ++i) windows += std::equal(phrase.begin(), phrase.end(), tokens.begin() + i);
    CHECK(static_cast<int>(probes.size()) == windows - 1);
    CHECK(needle_probes(std::vector<int>{1, 7, 8, 9}, phrase).empty());  // planted last: no key
    CHECK(needle_probes(tokens, std::vector<int>{}).empty());
}

TEST_CASE("needle_text plants the whole phrase once and its first half at growing distances", "[long_views]") {
    const std::string_view genesis = genesis_text();
    REQUIRE(genesis.substr(0, 10) == "Genesis 1\n");
    REQUIRE(genesis.size() == 31714);  // assets/texts/genesis-1-10.txt, as compiled in
    const std::string text = needle_text(genesis);
    const std::string whole = std::string(kNeedleFirstHalf) + std::string(kNeedleContinuation);
    size_t planted = text.find(whole);
    REQUIRE(planted != std::string::npos);
    CHECK(text.find(whole, planted + 1) == std::string::npos);
    CHECK(planted == genesis.find('\n'));  // after the first line
    std::vector<size_t> at;
    for (size_t i = text.find(kNeedleFirstHalf); i != std::string::npos; i = text.find(kNeedleFirstHalf, i + 1)) at.push_back(i);
    REQUIRE(at.size() == std::size(kNeedleRepeatBytes) + 2);    // the planted one, every distance, the end
    CHECK(text.size() - at.back() == kNeedleFirstHalf.size());  // the text ends with the first half
    for (size_t k = 1; k + 1 < at.size(); ++k) {
        CHECK(at[k] - planted >= static_cast<size_t>(kNeedleRepeatBytes[k - 1]));
        CHECK(text[at[k] + kNeedleFirstHalf.size()] == '\n');  // each repeat ends its line
    }
    // Without the needle the text is Genesis.
    std::string stripped = text;
    for (const std::string& cut : {whole, std::string(kNeedleFirstHalf)})
        for (size_t i = stripped.find(cut); i != std::string::npos; i = stripped.find(cut)) stripped.erase(i, cut.size());
    std::string trimmed(genesis);
    while (!trimmed.empty() && trimmed.back() == '\n') trimmed.pop_back();
    CHECK(stripped == trimmed);
}

TEST_CASE("log_bins: each bin's mean, least and largest, and every query in exactly one bin", "[fading]") {
    SplitMix64 g(3);
    for (int n : {1, 2, 7, 100, 5000}) {
        std::vector<double> v(static_cast<size_t>(n));
        for (double& x : v) x = g.uniform();
        const LogBins b = log_bins(v, 40);
        REQUIRE(b.L.size() <= 40);
        int next = 0;
        for (size_t k = 0; k < b.L.size(); ++k) {
            REQUIRE(b.first[k] == next);  // consecutive, in order, none left out
            double sum = 0, sum_L = 0, lo = 2, hi = -1;
            for (int i = b.first[k]; i < b.first[k] + b.count[k]; ++i) {
                sum += v[static_cast<size_t>(i)], sum_L += i + 1;
                lo = std::min(lo, v[static_cast<size_t>(i)]), hi = std::max(hi, v[static_cast<size_t>(i)]);
            }
            CHECK(b.mean[k] == Approx(sum / b.count[k]).epsilon(1e-12));
            CHECK(b.L[k] == Approx(sum_L / b.count[k]).epsilon(1e-12));
            CHECK(b.least[k] == lo);
            CHECK(b.most[k] == hi);
            // Log spacing: a bin spans at most a factor e^(ln(n + 1) / 40) in L, or one L.
            const double first_L = b.first[k] + 1, last_L = b.first[k] + b.count[k];
            CHECK((b.count[k] == 1 || last_L / first_L <= std::exp(std::log(n + 1.0) / 40) + 1e-12));
            next += b.count[k];
        }
        CHECK(next == n);
    }
}

TEST_CASE("the grid's streaming pass keeps each query's largest and smallest weight and the needle's weights", "[fading]") {
    // The numpy-made 2-layer x 4-head checkpoint (tests/fixtures/tiny-f32), 32 positions.
    const std::string dir = std::string(ATTNLAB_FIXTURES_DIR) + "/tiny-f32";
    auto bytes = std::make_shared<std::string>(read_whole_file(dir + "/model.safetensors"));
    ModelFiles files;
    files.bytes = ModelBytes{bytes, {reinterpret_cast<const std::uint8_t*>(bytes->data()), bytes->size()}};
    files.config_json = read_whole_file(dir + "/config.json");
    files.source = dir;
    std::string error;
    const std::shared_ptr<const LoadedModel> model = load_model(std::move(files), error);
    REQUIRE(model);
    // A phrase (11, 12) planted at 2..3 with key 4, repeated to end at 17 and 29.
    const std::vector<int> tokens = {5, 6,  11, 12, 40, 3,  9,  27, 81, 1,  2,  3,  4,  5,  6,
                                     7, 11, 12, 50, 51, 52, 53, 54, 55, 56, 57, 58, 11, 12, 9};
    const std::vector<NeedleProbe> probes = needle_probes(tokens, std::vector<int>{11, 12});
    REQUIRE(probes.size() == 2);
    auto pass = std::make_shared<ForwardResult>();
    pass->tokens = tokens;
    pass->plan = model->model->trained_plan();
    std::vector<float> logits;
    REQUIRE(model->model->new_state()->forward(tokens, logits, error, false, &pass->capture));
    std::shared_ptr<const AttentionThumbnails> done;
    {
        const std::unique_ptr<Task> task = thumbnail_task(pass, &done, probes);
        while (task->step()) {}
        Session unused;
        task->finish(unused);
    }
    REQUIRE(done);
    const int L = static_cast<int>(tokens.size()), d = pass->capture.head_dim();
    REQUIRE(done->L == L);
    for (int layer = 0; layer < done->layers; ++layer)
        for (int head = 0; head < done->heads; ++head) {
            const std::vector<float> q = pass->capture.queries(layer, head), k = pass->capture.keys(layer, head);
            // Reference: softmax of q.k / sqrt(d) in double, row by row, and fading_by_query
            // (what `attnlab experiment fading` sums) on those rows.
            std::vector<float> weights(static_cast<size_t>(L) * L, 0.0f), scores(static_cast<size_t>(L) * L, 0.0f);
            for (int i = 0; i < L; ++i) {
                double top = -1e300, sum = 0;
                std::vector<double> row(static_cast<size_t>(i) + 1);
                for (int j = 0; j <= i; ++j) {
                    double dot = 0;
                    for (int c = 0; c < d; ++c) dot += double(q[size_t(i) * d + c]) * k[size_t(j) * d + c];
                    row[size_t(j)] = dot / std::sqrt(double(d));
                    scores[size_t(i) * L + j] = static_cast<float>(row[size_t(j)]);
                    top = std::max(top, row[size_t(j)]);
                }
                for (double& x : row) sum += (x = std::exp(x - top));
                for (int j = 0; j <= i; ++j) weights[size_t(i) * L + j] = static_cast<float>(row[size_t(j)] / sum);
            }
            const std::vector<FadingSums> ref = fading_by_query(weights, scores, L, 1.0);
            const size_t index = static_cast<size_t>(layer * done->heads + head);
            for (int i = 0; i < L; ++i) {
                REQUIRE(done->largest[index * L + size_t(i)] == Approx(ref[size_t(i)].max_weight).margin(1e-6));
                const float least = *std::min_element(weights.begin() + i * L, weights.begin() + i * L + i + 1);
                REQUIRE(done->smallest[index * L + size_t(i)] == Approx(least).margin(1e-6));
            }
            for (size_t p = 0; p < probes.size(); ++p)
                REQUIRE(done->probe_weights[index * probes.size() + p] ==
                        Approx(weights[size_t(probes[p].query) * L + size_t(probes[p].key)]).margin(1e-6));
        }
}
