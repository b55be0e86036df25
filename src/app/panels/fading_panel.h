#pragma once
// The Fading panel (PAPER.md §2, Lemma 1; issue 38): for the loaded model, up to its context, each
// query's largest weight against L, the keys it sees, for the open head and the mean over heads,
// with 1/L (uniform attention) and Lemma 1's band. And, when the text holds the needle sample,
// the needle's weight against its distance, for the open head and the best one. Everything is
// read off the head grid's streaming pass (app/work/head_thumbnails.h): no (L, L) map is kept.
#include <memory>
#include <string>
#include <vector>

#include "analysis/fading.h"
#include "app/panel_context.h"
#include "app/work/head_thumbnails.h"

namespace attnlab {

struct FadingPanel {
    bool show_mean = true;  // the mean over heads beside the open head
    // What the series below were made from, recomputed when any of it changes.
    std::weak_ptr<const AttentionThumbnails> made_for;
    int layer = -1, head = -1;
    bool softmax = false;  // the open head runs softmax (Lemma 1's band applies)
    LogBins head_bins, mean_bins, band_lower, band_upper;
    // The needle: each probe's distance, the open head's and the best head's weight on its key,
    // and uniform attention's weight there (1 / L).
    std::vector<double> distance, open_weight, best_weight, uniform;
    int best_layer = -1, best_head = -1;
};

void draw_fading_panel(FadingPanel& panel, HeadThumbnails& thumbnails, PanelContext& ctx);

// For window.attnlab.status(): {ready, progress, L, layer, head, softmax, query: {position, L,
// largest, smallest}, bins: {L, mean}, needle: null or {probes: [{query, key, distance}], open,
// best, best_layer, best_head}}.
std::string fading_status_json(const FadingPanel& panel, const HeadThumbnails& thumbnails, const Session& s);

}  // namespace attnlab
