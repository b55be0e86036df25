#pragma once
// "Compare with the twin", in the Attention map (issue 29): the open head of the built-in model
// beside the same head of its twin, AttnLab tiny and AttnLab tiny-SSMax, trained alike but for the
// normalizer, both under the same model changes (view.plan): both heatmaps on one colour scale, and the fading plot, each query's largest
// weight against the L keys it sees, for both models and the uniform 1/L. The twin is loaded and run by app/work/twin_compare.h; this file
// only draws it and takes the toggle's click.
#include <memory>
#include <string>
#include <vector>

#include "app/panel_context.h"
#include "app/panels/pane_layout.h"
#include "app/plot/heatmap.h"

namespace attnlab {

struct TwinPanel {
    // One model's side (0: the model loaded, 1: its twin), for the open head, recomputed when its
    // pass or the head changes.
    struct Side {
        std::weak_ptr<const ForwardResult> pass;
        std::string label;       // "AttnLab tiny-SSMax"
        bool ssmax = false;      // the twin trained with SSMax: its colour and marker, whichever side it is on
        std::string name;        // config.json's attnlab_name
        std::string normalizer;  // the head's setting in this pass, e.g. "ssmax:0.43"
        bool changed = false;    // by the model changes (view.plan), not as trained
        int L = 0;
        std::vector<float> weights;  // (L, L), 0 above the diagonal
        float max_weight = 0.0f;
        std::vector<double> keys, largest;  // the fading series: L = i + 1 and query i's largest weight
        // Retrieval by the last query (docs/science.md §14's needle probe on this text): per layer,
        // the head that puts the most weight on the key after the last token's first occurrence,
        // and that weight. Empty when the last token occurs only once. Per layer, not per head:
        // head h of two separately trained models is not the same head.
        struct Best {
            int head = -1;
            float weight = 0.0f;
        };
        int target = -1;  // that key's position
        std::vector<Best> retrieval;
    };
    Side sides[2];
    int layer = -1, head = -1;
    float runs_max = 0.0f;  // the colour scale both maps share
    heatmap::CellRuns runs[2];
};

// The toggle, beside the head's controls: disabled, with the reason, when the model has no twin.
void draw_twin_toggle(PanelContext& ctx);

// The comparison in the pane given (Panes from the Attention map): the two maps side by side, or
// one above the other when stacked, and the fading plot below them. Returns false (the panel draws
// its usual map) when the comparison is off, or asked for with a model that has no twin: then a
// line says why.
bool draw_twin_compare(TwinPanel& panel, PanelContext& ctx, const Panes& panes);

// window.attnlab.status().twin: {on (asked for, and the model has a twin), phase ("off", "unavailable", "loading", "computing", "ready",
// "failed"), reason, error, plan (the model changes both run under: view.plan, "" = as trained),
// model: {label, name, normalizer, changed}, twin: {...}, layer, head, L,
// fading: {keys: [L...], model: [largest...], twin: [largest...]}, last: {L, model, twin},
// retrieval: {target (the key after the last token's first occurrence; -1 when none), layers:
// [{model: {head, weight}, twin: {head, weight}}, ...]}}.
std::string twin_status_json(const TwinPanel& panel, const Session& s);

}  // namespace attnlab
