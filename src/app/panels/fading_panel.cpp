#include "app/panels/fading_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/softmax.h"
#include "app/panels/pane_layout.h"
#include "app/plot/plot.h"
#include "base/json.h"

namespace attnlab {

namespace {

// Log bins: a few dozen points on a log axis however long the text (thousands of markers would
// pass WebGL's 65,536 vertices a draw list).
constexpr int kBins = 96;

// One head's series, L entries, widened for the analysis functions.
std::vector<double> head_series(const std::vector<float>& all, int index, int L) {
    const auto* first = all.data() + static_cast<size_t>(index) * static_cast<size_t>(L);
    return std::vector<double>(first, first + L);
}

// Lemma 1's band for each query of a softmax head, from its largest and smallest weight: softmax
// is unchanged when every logit moves by the same amount, so the lemma holds with a = half the
// row's logit range, T ln(largest / smallest) / 2, the smallest a it can use.
void lemma1_series(const AttentionThumbnails& t, int index, double T, std::vector<double>& lower, std::vector<double>& upper) {
    const size_t L = static_cast<size_t>(t.L), head0 = static_cast<size_t>(index) * L;
    lower.resize(L);
    upper.resize(L);
    for (size_t i = 0; i < L; ++i) {
        const double hi = t.largest[head0 + i], lo = t.smallest[head0 + i];
        const double a = lo > 0 ? T * std::log(hi / lo) / 2 : INFINITY;
        const Lemma1Band band = lemma1_band(static_cast<int>(i) + 1, a, T);
        lower[i] = band.lower;
        upper[i] = std::min(band.upper, 1.0);  // no weight exceeds 1
    }
}

void make_needle(FadingPanel& p, const AttentionThumbnails& t) {
    const size_t n = t.probes.size(), heads = static_cast<size_t>(t.layers) * static_cast<size_t>(t.heads);
    p.distance.clear(), p.open_weight.clear(), p.best_weight.clear(), p.uniform.clear();
    p.best_layer = p.best_head = -1;
    if (n == 0 || heads == 0) return;
    // The best head: the largest mean weight on the needle over the probes.
    size_t best = 0;
    double best_mean = -1;
    for (size_t h = 0; h < heads; ++h) {
        double sum = 0;
        for (size_t k = 0; k < n; ++k) sum += t.probe_weights[h * n + k];
        if (sum / static_cast<double>(n) > best_mean) best_mean = sum / static_cast<double>(n), best = h;
    }
    p.best_layer = static_cast<int>(best) / t.heads;
    p.best_head = static_cast<int>(best) % t.heads;
    const size_t open = static_cast<size_t>(p.layer * t.heads + p.head);
    for (size_t k = 0; k < n; ++k) {
        p.distance.push_back(t.probes[k].distance());
        p.open_weight.push_back(t.probe_weights[open * n + k]);
        p.best_weight.push_back(t.probe_weights[best * n + k]);
        p.uniform.push_back(1.0 / (t.probes[k].query + 1));
    }
}

// The series for the open head, when the thumbnails or the head changed (not every frame).
void keep_series(FadingPanel& p, const std::shared_ptr<const AttentionThumbnails>& done, const Session& s) {
    const AttentionThumbnails& t = *done;
    // Compared as clamped: a view's head past this model's would otherwise remake the series every frame.
    const int layer = std::clamp(s.view.layer, 0, t.layers - 1), head = std::clamp(s.view.head, 0, t.heads - 1);
    if (p.made_for.lock() == done && p.layer == layer && p.head == head) return;
    p.made_for = done;
    p.layer = layer;
    p.head = head;
    const int index = p.layer * t.heads + p.head;
    p.head_bins = log_bins(head_series(t.largest, index, t.L), kBins);
    std::vector<double> mean(static_cast<size_t>(t.L), 0.0);
    const int heads = t.layers * t.heads;
    for (int h = 0; h < heads; ++h)
        for (int i = 0; i < t.L; ++i) mean[static_cast<size_t>(i)] += t.largest[static_cast<size_t>(h) * t.L + i] / heads;
    p.mean_bins = log_bins(mean, kBins);
    const HeadPlan& how = s.forward->plan.at(p.layer, p.head);
    p.softmax = how.normalizer.kind == NormalizerKind::Softmax;
    if (p.softmax) {
        std::vector<double> lower, upper;
        lemma1_series(t, index, how.temperature, lower, upper);
        p.band_lower = log_bins(lower, kBins);
        p.band_upper = log_bins(upper, kBins);
    } else {
        p.band_lower = p.band_upper = {};
    }
    make_needle(p, t);
}

void draw_fading_plot(const FadingPanel& p, const AttentionThumbnails& t, int query, ImVec2 size) {
    const double L = std::max(2, t.L);
    char title[96];
    std::snprintf(title, sizeof title, "Largest weight per query, L%d H%d", p.layer, p.head);
    if (!plot::begin("##fading", size, {"L, keys the query sees (log)", plot::Scale::Log, 1.0, L},
                     {"weight (log)", plot::Scale::Log, {}, 1.0, 6.0}, title))
        return;
    if (p.softmax) plot::band("Lemma 1's band", p.band_lower.L, p.band_lower.mean, p.band_upper.mean, plot::colors::sky);
    const std::vector<double> ref_x = {1.0, L}, ref_y = {1.0, 1.0 / L};
    plot::line("1/L (uniform)", ref_x, ref_y, {plot::colors::black, plot::Dash::Dashed, 1.5f});
    if (p.show_mean) plot::line("mean over heads", p.mean_bins.L, p.mean_bins.mean, {plot::colors::orange, plot::Dash::Solid, 2.0f});
    plot::line("this head", p.head_bins.L, p.head_bins.mean, {plot::colors::blue, plot::Dash::Solid, 2.0f});
    if (query >= 0 && query < t.L)
        plot::point("the chosen query", query + 1.0,
                    t.largest[static_cast<size_t>(p.layer * t.heads + p.head) * t.L + static_cast<size_t>(query)],
                    plot::colors::vermillion);
    plot::end();
}

void draw_needle_plot(const FadingPanel& p, ImVec2 size) {
    char title[96];
    std::snprintf(title, sizeof title, "Needle weight, L%d H%d (best: L%d H%d)", p.layer, p.head, p.best_layer, p.best_head);
    if (!plot::begin("##needle", size, {"distance to the needle, tokens (log)", plot::Scale::Log},
                     {"weight on it (log)", plot::Scale::Log, {}, 1.0, 6.0}, title))
        return;
    plot::line("uniform, 1/L", p.distance, p.uniform, {plot::colors::black, plot::Dash::Dashed, 1.5f});
    plot::line("best head", p.distance, p.best_weight, {plot::colors::purple, plot::Dash::Solid, 2.0f});
    plot::scatter("##best", p.distance, p.best_weight, plot::colors::purple, plot::Marker::Diamond, 4.0f);
    plot::line("this head", p.distance, p.open_weight, {plot::colors::blue, plot::Dash::Solid, 2.0f});
    plot::scatter("##open", p.distance, p.open_weight, plot::colors::blue, plot::Marker::Circle, 4.0f);
    plot::end();
}

}  // namespace

void draw_fading_panel(FadingPanel& p, HeadThumbnails& thumbnails, PanelContext& ctx) {
    Session& s = ctx.session;
    const AttentionThumbnails* t = thumbnails.done.get();
    if (!s.forward || !t || t->L == 0 || t->pass.lock() != s.forward) {
        if (thumbnails.work.busy()) {
            ImGui::TextUnformatted("Computing every head's rows, one block of queries at a time:");
            ImGui::ProgressBar(static_cast<float>(thumbnails.work.progress()), ImVec2(ImGui::GetFontSize() * 12, 0));
            ImGui::SameLine();
            if (ImGui::SmallButton("Cancel##fading")) thumbnails.work.cancel();
        } else {
            ImGui::TextDisabled(s.forward ? "Waiting for the pass's heads." : "Load a model and a text first.");
        }
        return;
    }
    keep_series(p, thumbnails.done, s);
    const Panes panes = begin_panes("##fading_panes", 22.0f, 26.0f);
    const float side_w = ImGui::GetFontSize() * 24.0f;
    begin_pane(panes, "##fading_main", p.distance.empty() ? 0.0f : -side_w - ImGui::GetStyle().ItemSpacing.x, false);
    text_wrapped(
        "Look for: a head whose largest weight follows the dashed 1/L line fades as the text grows (Lemma 1 keeps a softmax "
        "head with bounded logits inside the blue band); one that stays high keeps finding one key however many it sees.");
    ImGui::Checkbox("mean over all heads", &p.show_mean);
    remember_last_item(ctx.widgets, "fading.mean");
    const float w = ImGui::GetContentRegionAvail().x;
    const float h = panes.stacked ? stacked_plot_height(panes, w) : std::max(ImGui::GetFontSize() * 12, ImGui::GetContentRegionAvail().y);
    draw_fading_plot(p, *t, chosen_query(s), ImVec2(w, h));
    remember_last_item(ctx.widgets, "fading.plot");
    end_pane(panes);
    if (!p.distance.empty()) {
        beside(panes);
        begin_pane(panes, "##fading_needle", 0, true);
        text_wrapped(
            "The needle: a name planted near the start, its first half repeated at growing distances. Look for an induction head "
            "whose weight on the name's continuation stays far above the dashed uniform line however far back the needle is.");
        const float nw = ImGui::GetContentRegionAvail().x;
        draw_needle_plot(p, ImVec2(nw, panes.stacked ? stacked_plot_height(panes, nw) : std::max(ImGui::GetFontSize() * 12, nw * 0.9f)));
        remember_last_item(ctx.widgets, "fading.needle");
        end_pane(panes);
    }
    end_panes(panes);
}

std::string fading_status_json(const FadingPanel& p, const HeadThumbnails& thumbnails, const Session& s) {
    json::ObjectBuilder o;
    const AttentionThumbnails* t = thumbnails.done.get();
    const bool ready = s.forward && t && t->pass.lock() == s.forward && t->L > 0;
    o.add("ready", ready).add("progress", thumbnails.work.progress());
    if (!ready) return o.str();
    const int layer = std::clamp(s.view.layer, 0, t->layers - 1), head = std::clamp(s.view.head, 0, t->heads - 1);
    const int q = std::clamp(chosen_query(s), 0, t->L - 1);
    const size_t at = static_cast<size_t>(layer * t->heads + head) * t->L + static_cast<size_t>(q);
    o.add("L", t->L).add("layer", layer).add("head", head);
    json::ObjectBuilder query;
    query.add("position", q)
        .add("L", q + 1)
        .add("largest", static_cast<double>(t->largest[at]))
        .add("smallest", static_cast<double>(t->smallest[at]));
    o.add_raw("query", query.str());
    const bool drawn = p.made_for.lock().get() == t && p.layer == layer && p.head == head;
    o.add("drawn", drawn);
    if (drawn) {
        o.add("softmax", p.softmax);
        o.add_raw("bins", json::ObjectBuilder()
                              .add_raw("L", json::ArrayBuilder().add_all(p.head_bins.L).str())
                              .add_raw("mean", json::ArrayBuilder().add_all(p.head_bins.mean).str())
                              .str());
    }
    if (t->probes.empty()) {
        o.add_raw("needle", "null");
    } else {
        json::ArrayBuilder probes;
        for (const NeedleProbe& n : t->probes)
            probes.add_raw(json::ObjectBuilder().add("query", n.query).add("key", n.key).add("distance", n.distance()).str());
        json::ObjectBuilder needle;
        needle.add_raw("probes", probes.str());
        if (drawn)
            needle.add_raw("open", json::ArrayBuilder().add_all(p.open_weight).str())
                .add_raw("best", json::ArrayBuilder().add_all(p.best_weight).str())
                .add("best_layer", p.best_layer)
                .add("best_head", p.best_head);
        o.add_raw("needle", needle.str());
    }
    return o.str();
}

}  // namespace attnlab
