// libFuzzer target: arbitrary bytes as an attention plan's text (the CLI's --attention SPEC, share
// links, tours, a checkpoint's "attnlab_attention"), for a model whose shape the first byte picks.
// Besides crashes and sanitizer reports, it traps when the parser breaks its promises:
//  - a refusal leaves the plan untouched and says why; the grammar-only check (no model at hand)
//    says why exactly when it refuses, and accepts whatever the parser accepts;
//  - an accepted plan has finite parameters in their ranges, writes back to text that parses to
//    the same plan, and that text passes the grammar check;
//  - every normalizer and temperature it accepts gives weights >= 0 that sum to 1 on a fixed row
//    of scores (normalize_row, as the forward pass runs it).
// Built and run by scripts/fuzz.sh.
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

bool parameters_in_range(const attnlab::HeadPlan& h) {
    const attnlab::Normalizer& n = h.normalizer;
    if (!(std::isfinite(h.temperature) && h.temperature > 0)) return false;
    if (n.kind == attnlab::NormalizerKind::Entmax && !(n.alpha >= 1.0 && n.alpha <= 1000.0)) return false;
    if (n.kind == attnlab::NormalizerKind::Ssmax && !std::isfinite(n.scale)) return false;
    return true;
}

// Weights of a fixed row of 9 scores (and of its first 1 and 2) under the head's plan.
void check_weights(const attnlab::HeadPlan& h) {
    static const float scores[9] = {0.5f, -1.25f, 3.0f, 3.0f, -40.0f, 0.0f, 12.5f, -0.75f, 2.0f};
    for (int n : {1, 2, 9}) {
        float w[9];
        attnlab::normalize_row(h, scores, n, w);
        double sum = 0;
        for (int i = 0; i < n; ++i) {
            check(std::isfinite(w[i]) && w[i] >= 0.0f);
            sum += w[i];
        }
        check(std::fabs(sum - 1.0) < 1e-3);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    // Shapes from 1 x 1 to 16 x 16, GPT-2 small's 12 x 12 among them.
    const int n_layer = 1 + (data[0] & 15), n_head = 1 + (data[0] >> 4);
    // An exact-size copy, so AddressSanitizer sees any read one past the end.
    const std::vector<char> bytes(data + 1, data + size);
    const std::string_view text(bytes.data(), bytes.size());

    attnlab::AttentionPlan plan(n_layer, n_head);
    attnlab::HeadPlan marker;
    marker.temperature = 0.25f;
    plan.set(0, 0, marker);  // a refusal must leave this as it is
    const attnlab::AttentionPlan before = plan;
    std::string error, grammar_error;
    const bool grammar = attnlab::check_attention_spec(text, grammar_error);
    check(grammar == grammar_error.empty());
    if (!attnlab::parse_attention_spec(text, n_layer, n_head, plan, error)) {
        check(!error.empty() && plan == before);
        return 0;
    }
    check(error.empty() && grammar);
    for (int l = 0; l < n_layer; ++l)
        for (int h = 0; h < n_head; ++h) check(parameters_in_range(plan.at(l, h)));

    const std::string written = attnlab::attention_spec(plan);
    attnlab::AttentionPlan back(n_layer, n_head);
    check(attnlab::parse_attention_spec(written, n_layer, n_head, back, error));
    check(back == plan);
    check(attnlab::check_attention_spec(written, error));
    check(written.empty() == plan.is_default());

    // The distinct settings the plan holds (at most a few: the text is short), through the normalizers.
    std::vector<attnlab::HeadPlan> seen;
    for (int l = 0; l < n_layer; ++l)
        for (int h = 0; h < n_head; ++h) {
            const attnlab::HeadPlan& hp = plan.at(l, h);
            bool known = false;
            for (const attnlab::HeadPlan& s : seen) known = known || s == hp;
            if (!known) {
                seen.push_back(hp);
                check_weights(hp);
            }
        }
    return 0;
}
