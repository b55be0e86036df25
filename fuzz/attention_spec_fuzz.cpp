// libFuzzer target: arbitrary bytes as an attention plan's text (the CLI's --attention, share
// links, tours, a checkpoint's "attnlab_attention"). Besides crashes and sanitizer reports, it traps
// when the parsers break their promises: a refusal says why and leaves the plan untouched; the
// model-free check accepts whatever a model accepts, and refuses only with the same item named;
// an accepted plan keeps its parameters in their limits, writes back to a text that parses to the
// same plan, and its heads' normalizers give weights on the simplex. Built and run by scripts/fuzz.sh.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/attention_plan.h"
#include "model/normalize_rows.h"

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

// A plan that is not the default one, to see that a refusal leaves it as it was.
attnlab::AttentionPlan start_plan(int L, int H) {
    attnlab::AttentionPlan plan(L, H);
    attnlab::HeadPlan h;
    h.normalizer.kind = attnlab::NormalizerKind::SaSoftmax;
    h.temperature = 2.0f;
    plan.set(L - 1, H - 1, h);
    return plan;
}

bool in_limits(const attnlab::HeadPlan& h) {
    const attnlab::Normalizer& n = h.normalizer;
    return h.temperature >= 1e-4f && h.temperature <= 1e4f && n.alpha >= 1.0 && n.alpha <= 1000.0 && std::abs(n.scale) <= 1000.0;
}

// Every head's normalizer on a few rows: weights >= 0 that sum to 1.
void check_weights(const attnlab::HeadPlan& h) {
    static const float rows[][5] = {{0.0f, 1.0f, -2.0f, 1.0f, 3e38f}, {-1e30f, -1e30f, -1e30f, 7.0f, 0.5f}, {0.0f, 0.0f, 0.0f, 0.0f, 0.0f}};
    for (const auto& row : rows)
        for (int n : {1, 2, 5}) {
            float w[5];
            attnlab::normalize_row(h, row, n, w);
            double sum = 0.0;
            for (int i = 0; i < n; ++i) {
                check(w[i] >= 0.0f && w[i] <= 1.0f + 1e-6f);
                sum += w[i];
            }
            check(std::abs(sum - 1.0) < 1e-5);
        }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // An exact-size copy, so AddressSanitizer sees any read one past the end.
    const std::vector<char> bytes(data, data + size);
    const std::string_view text(bytes.data(), bytes.size());
    std::string check_error;
    const bool well_formed = attnlab::check_attention_spec(text, check_error);
    if (!well_formed) check(!check_error.empty());

    for (const auto& [L, H] : {std::pair{1, 1}, std::pair{3, 4}, std::pair{12, 12}}) {
        attnlab::AttentionPlan plan = start_plan(L, H);
        const attnlab::AttentionPlan before = plan;
        std::string error;
        if (!attnlab::parse_attention_spec(text, L, H, plan, error)) {
            check(!error.empty() && plan == before);
            // The check refused too, naming the same item, unless the model's size is at fault
            // (an item before the one the check names may be outside this model).
            const bool too_small =
                error.find("names no heads") != std::string::npos || error.find("is not * or a head from") != std::string::npos;
            check(too_small || (!well_formed && check_error.substr(0, check_error.find(": ")) == error.substr(0, error.find(": "))));
            continue;
        }
        check(well_formed);
        const std::string back = attnlab::attention_spec(plan);
        attnlab::AttentionPlan again(L, H);
        check(attnlab::parse_attention_spec(back, L, H, again, error) && again == plan);
        check(attnlab::attention_spec(again) == back);
        check(attnlab::check_attention_spec(back, error));
        std::vector<attnlab::HeadPlan> seen;
        for (int l = 0; l < L; ++l)
            for (int h = 0; h < H; ++h) {
                const attnlab::HeadPlan& hp = plan.at(l, h);
                check(in_limits(hp));
                bool known = false;
                for (const attnlab::HeadPlan& s : seen) known |= s == hp;
                if (known) continue;
                seen.push_back(hp);
                check_weights(hp);
            }
    }
    return 0;
}
