#pragma once
// Panel: the Softmax playground. Synthetic logits, no model: how the largest weight fades
// with context length (Lemma 1) and how the Jacobian grows as the temperature falls (Lemma 2).
#include <string>
#include <vector>

#include "analysis/normalizers.h"
#include "analysis/softmax.h"
#include "analysis/softmax_sweeps.h"
#include "analysis/synthetic_logits.h"
#include "app/widget_rects.h"

namespace attnlab {

struct SoftmaxPlayground {
    // What the user sets.
    LogitSpec spec;
    int L = 128;
    double T = 1.0;

    // What the analysis made of it; recomputed only when an input above changes.
    LogitSpec fade_spec{}, sensitivity_spec{};
    double fade_T = -1.0;
    int sensitivity_L = -1;
    FadeCurve fade;
    SensitivityCurve sensitivity;
    std::vector<double> logits, weights;  // at (spec, L, T)
    double max_weight = 0.0, a = 0.0, jacobian_norm = 0.0;
    Lemma1Band band{};

    // The same logits under each normalizer (softmax first), at (spec, L, T).
    struct Compared {
        std::string name;
        std::vector<double> top;  // weights of the 32 largest logits, largest logit first
        double max_weight = 0.0;
        int support = 0;            // weights that are not exactly 0
        double jacobian_norm = -1;  // -1: not computed (SA-softmax's needs O(L^3); skipped above L = 256)
    };
    std::vector<Compared> compared;
    LogitSpec compared_spec{};
    int compared_L = -1;
    double compared_T = -1.0;
};

// Brings the derived numbers up to date with the inputs. Pure computation.
void update(SoftmaxPlayground& p);

void draw_softmax_playground(SoftmaxPlayground& p, WidgetRects& widgets);

// The panel's current numbers as a JSON object, for window.attnlab.status().
std::string playground_status_json(const SoftmaxPlayground& p);

}  // namespace attnlab
