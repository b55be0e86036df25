#include "app/panels/twin_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "analysis/attention_map.h"
#include "analysis/fading.h"
#include "app/plot/plot.h"
#include "app/work/twin_compare.h"
#include "base/json.h"

namespace attnlab {

namespace {

constexpr const char* kNotTheSameHead =
    "The two models were trained separately: layer l, head h of one is not the same head as layer l, head h of "
    "the other, only the same place. Compare what heads do (the fading plot, the grid's marks), not one index.";

// [SECTION] The numbers -----------------------------------------------------------------------

// The pass each side shows: the model's and the twin's, both under the view's model changes.
// Null while either is missing, or made for other tokens or another plan.
std::shared_ptr<const ForwardResult> side_pass(const Session& s, int side) {
    if (side == 1) return twin_pass_current(s) ? s.twin_forward : nullptr;
    return pass_current(s) ? s.forward : nullptr;
}

// One side's head: its weights as the pass ran them (plan_attention_rows: the forward pass's
// normalizers, to fp32 rounding) and, query by query, the fading quantities (analysis/fading.h,
// as `attnlab experiment fading` computes them).
void fill_side(TwinPanel::Side& side, const LoadedModel& model, const std::shared_ptr<const ForwardResult>& pass, int layer, int head) {
    const AttentionCapture& cap = pass->capture;
    const HeadPlan how = pass->plan.at(layer, head);
    side.pass = pass;
    side.label = builtin_model_label(model.which);
    side.ssmax = model.which == BuiltinModel::TinySsmax;
    side.name = model.name;
    side.normalizer = normalizer_spec(how.normalizer);
    if (how.temperature != 1.0f) {
        char t[32];
        std::snprintf(t, sizeof t, " at T = %.3g", static_cast<double>(how.temperature));
        side.normalizer += t;
    }
    side.changed = !(how == model.model->trained_plan().at(layer, head));
    side.L = cap.length();
    plan_attention_rows(cap.queries(layer, head), cap.keys(layer, head), side.L, cap.head_dim(), 0, side.L, how, side.weights);
    side.max_weight = side.weights.empty() ? 0.0f : *std::max_element(side.weights.begin(), side.weights.end());
    const std::vector<FadingSums> q = fading_by_query(side.weights, cap.scores(layer, head), side.L, std::nullopt);
    side.keys.clear();
    side.largest.clear();
    for (int i = 0; i < side.L; ++i) {
        side.keys.push_back(i + 1);
        side.largest.push_back(q[static_cast<size_t>(i)].max_weight);
    }
}

// The side's retrieval by the last query: per layer, the best head's weight on its induction target.
void fill_retrieval(TwinPanel::Side& side, const ForwardResult& pass) {
    const AttentionCapture& cap = pass.capture;
    const std::vector<int> targets = induction_targets(pass.tokens);
    side.target = targets.empty() ? -1 : targets.back();
    side.retrieval.clear();
    if (side.target < 0) return;
    const int L = cap.length();
    std::vector<float> row;
    for (int l = 0; l < cap.layers(); ++l) {
        TwinPanel::Side::Best best;
        for (int h = 0; h < cap.n_head(); ++h) {
            plan_attention_rows(cap.queries(l, h), cap.keys(l, h), L, cap.head_dim(), L - 1, L, pass.plan.at(l, h), row);
            const float w = row[static_cast<size_t>(side.target)];
            if (best.head < 0 || w > best.weight) best = {h, w};
        }
        side.retrieval.push_back(best);
    }
}

// Brings both sides up to date with the view; false while a side has no pass yet.
bool update_sides(TwinPanel& p, const Session& s) {
    if (!s.model || !s.twin || s.twin->which != other_twin(s.model->which)) return false;
    const std::shared_ptr<const ForwardResult> passes[2] = {side_pass(s, 0), side_pass(s, 1)};
    if (!passes[0] || !passes[1]) return false;
    const AttentionCapture& cap = passes[0]->capture;
    const int layer = std::clamp(s.view.layer, 0, cap.layers() - 1), head = std::clamp(s.view.head, 0, cap.n_head() - 1);
    const LoadedModel* models[2] = {s.model.get(), s.twin.get()};
    bool changed = p.layer != layer || p.head != head;
    for (int k = 0; k < 2; ++k) {
        if (!changed && p.sides[k].pass.lock() == passes[k]) continue;
        if (p.sides[k].pass.lock() != passes[k]) fill_retrieval(p.sides[k], *passes[k]);
        fill_side(p.sides[k], *models[k], passes[k], layer, head);
        changed = true;
    }
    p.layer = layer;
    p.head = head;
    if (changed) p.runs_max = 0.0f;  // the maps' runs again (draw_maps)
    return true;
}

// [SECTION] Drawing ---------------------------------------------------------------------------

// The runs of both maps on one colour scale (the larger of the two largest weights).
void update_runs(TwinPanel& p) {
    const float vmax = std::max(p.sides[0].max_weight, p.sides[1].max_weight);
    if (p.runs_max == vmax) return;
    p.runs_max = vmax;
    for (int k = 0; k < 2; ++k) p.runs[k] = heatmap::cell_runs(p.sides[k].weights, p.sides[k].L, p.sides[k].L, vmax);
}

// A model's colour and marker follow the model (AttnLab tiny blue circles, tiny-SSMax vermillion
// triangles), not which of the two is loaded.
ImU32 side_color(const TwinPanel::Side& d) { return d.ssmax ? plot::colors::vermillion : plot::colors::blue; }
plot::Marker side_marker(const TwinPanel::Side& d) { return d.ssmax ? plot::Marker::Triangle : plot::Marker::Circle; }

// The room a map leaves left of it (query positions) and under it (key positions and the title).
float map_left(float font) { return font * 2.6f; }
float map_below(float font) { return font * 2.8f; }

// The two axes of a map p0..p1 of L x L cells: the kit's position ticks, cell j centred on j.
void draw_map_axes(ImDrawList* dl, ImVec2 p0, ImVec2 p1, int L) {
    const float font = ImGui::GetFontSize(), side = p1.x - p0.x;
    const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
    const plot::AxisRange keys{-0.5, L - 0.5, plot::Scale::Linear}, rows{L - 0.5, -0.5, plot::Scale::Linear};
    const std::vector<plot::Tick> ticks = plot::axis_ticks(keys, std::max(2, static_cast<int>(side / (font * 4))));
    plot::draw_axis(dl, keys, ticks, p0, p1, plot::Edge::Bottom, false);
    plot::draw_axis(dl, rows, ticks, p0, p1, plot::Edge::Left, false);
    const char* x_title = "key →, query ↓ (rows)";
    dl->AddText(ImVec2(p0.x + side * 0.5f - ImGui::CalcTextSize(x_title).x * 0.5f, p1.y + font * 1.4f), ink, x_title);
}

// One map in its own child window (a draw list holds one map's runs), `side` px square.
void draw_map(const TwinPanel& p, int k, PanelContext& ctx, float width, float side) {
    const TwinPanel::Side& d = p.sides[k];
    const float font = ImGui::GetFontSize();
    ImGui::PushID(k);
    ImGui::BeginChild("##twin_map", ImVec2(width, side + font * 4.0f + map_below(font)), false,
                      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(side_color(d)), "%s", d.label.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", d.name.c_str());
    ImGui::TextDisabled("layer %d, head %d: %s%s", p.layer, p.head, d.normalizer.c_str(), d.changed ? ", changed" : " as trained");
    const ImVec2 p0(ImGui::GetCursorScreenPos().x + map_left(font), ImGui::GetCursorScreenPos().y), p1(p0.x + side, p0.y + side);
    ImGui::SetCursorScreenPos(p0);
    ImGui::InvisibleButton("##map", ImVec2(side, side));
    remember_last_item(ctx.widgets, k == 0 ? "twin.map.model" : "twin.map.twin");
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(p0, p1, IM_COL32(242, 242, 242, 255));
    heatmap::draw_upper_hatch(dl, p0, p1, IM_COL32(200, 200, 200, 255), std::max(6.0f, font * 0.5f));
    heatmap::draw_runs(dl, p.runs[k], p0, p1);
    dl->AddRect(p0, p1, ImGui::GetColorU32(ImGuiCol_Text));
    draw_map_axes(dl, p0, p1, d.L);
    heatmap::draw_color_bar(dl, ImVec2(p1.x + font * 0.6f, p0.y), ImVec2(p1.x + font * 1.5f, p1.y), p.runs_max, "weight");
    if (ImGui::IsItemHovered() && d.L > 0) {
        const ImVec2 m = ImGui::GetIO().MousePos;
        const int q = std::clamp(static_cast<int>((m.y - p0.y) / side * d.L), 0, d.L - 1);
        const int key = std::clamp(static_cast<int>((m.x - p0.x) / side * d.L), 0, d.L - 1);
        if (key <= q)
            ImGui::SetTooltip("query %d -> key %d: %.4g", q, key, static_cast<double>(d.weights[static_cast<size_t>(q) * d.L + key]));
    }
    ImGui::EndChild();
    ImGui::PopID();
}

// Each query's largest weight against the keys it sees, both models, and 1/L.
void draw_fading(const TwinPanel& p, ImVec2 size) {
    const int L = std::max(p.sides[0].L, 1);
    const std::vector<double> ref_x = {1.0, static_cast<double>(L)}, ref_y = {1.0, 1.0 / L};
    char title[96];
    std::snprintf(title, sizeof title, "Layer %d, head %d: the largest weight of each query", p.layer, p.head);
    if (!plot::begin("##twin_fading", size, {"L, the keys a query sees", plot::Scale::Log, 1.0, std::max(2.0, static_cast<double>(L))},
                     {"largest weight", plot::Scale::Log, {}, 1.0, 4.0}, title))
        return;
    plot::line("1/L (uniform)", ref_x, ref_y, {plot::colors::black, plot::Dash::Dashed, 1.5f});
    for (const TwinPanel::Side& d : p.sides) plot::scatter(d.label.c_str(), d.keys, d.largest, side_color(d), side_marker(d), 3.0f);
    plot::end();
}

}  // namespace

namespace {

// Retrieval by the last query, per layer (head h of one model is not head h of the other): the
// best head's weight on the key after the last token's first occurrence, in each model.
void draw_retrieval(const TwinPanel& p) {
    const TwinPanel::Side &a = p.sides[0], &b = p.sides[1];
    ImGui::PushTextWrapPos(0.0f);
    if (a.target < 0) {
        ImGui::TextDisabled("Retrieval: the last token occurs nowhere earlier in this text, so there is nothing to look up.");
        ImGui::PopTextWrapPos();
        return;
    }
    ImGui::TextDisabled(
        "Retrieval: the last token occurred before; the weight its query puts on the token that followed it "
        "(position %d), best head of each layer (uniform attention: %.3g):",
        a.target, 1.0 / std::max(1, a.L));
    for (size_t l = 0; l < a.retrieval.size() && l < b.retrieval.size(); ++l)
        ImGui::TextDisabled("  layer %zu: %s %.3f (head %d), %s %.3f (head %d)", l, a.label.c_str(),
                            static_cast<double>(a.retrieval[l].weight), a.retrieval[l].head, b.label.c_str(),
                            static_cast<double>(b.retrieval[l].weight), b.retrieval[l].head);
    ImGui::PopTextWrapPos();
}

}  // namespace

void draw_twin_toggle(PanelContext& ctx) {
    Session& s = ctx.session;
    const std::string reason = twin_unavailable_reason(s);
    const char* label = "Compare with the twin";
    same_line_if_fits(ImGui::GetFrameHeight() + ImGui::CalcTextSize(label).x + ImGui::GetStyle().ItemInnerSpacing.x);
    ImGui::BeginDisabled(!reason.empty());
    bool on = s.view.compare && reason.empty();
    if (ImGui::Checkbox(label, &on)) s.view.compare = on;
    ImGui::EndDisabled();
    remember_last_item(ctx.widgets, "attention.compare_twin");
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("%s", !reason.empty() ? reason.c_str()
                                                : "The same head of AttnLab tiny and AttnLab tiny-SSMax side by side, on this text: "
                                                  "trained alike but for the normalizer. The other model is fetched once.");
}

bool draw_twin_compare(TwinPanel& p, PanelContext& ctx, const Panes& panes) {
    const Session& s = ctx.session;
    if (!s.view.compare) return false;
    // Asked for (a link, a tour's step) with a model that has no twin: say so above the usual map.
    if (const std::string reason = twin_unavailable_reason(s); !reason.empty()) {
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled("Compare with the twin: %s", reason.c_str());
        ImGui::PopTextWrapPos();
        return false;
    }
    const std::string phase = twin_phase(s);
    if (phase == "failed") {
        ImGui::PushStyleColor(ImGuiCol_Text, plot::colors::vermillion);
        ImGui::TextWrapped("%s", s.twin_error.c_str());
        ImGui::PopStyleColor();
        return true;
    }
    if (!update_sides(p, s)) {
        ImGui::TextDisabled(phase == "loading" ? "Loading %s (progress above)…" : "Running %s on the text…",
                            builtin_model_label(other_twin(s.model->which)));
        return true;
    }
    update_runs(p);
    const float font = ImGui::GetFontSize(), w = ImGui::GetContentRegionAvail().x;
    const PlotPair pair = plot_pair(w, 14.0f);
    const float map_w = panes.stacked || !pair.side_by_side ? w : pair.w;
    const float side =
        std::max(font * 6.0f, std::min(map_w - font * 5.0f - map_left(font),
                                       panes.stacked ? panes.view_h * 0.6f : ImGui::GetContentRegionAvail().y * 0.5f - map_below(font)));
    // Two separately trained networks share a shape, not their heads: the same index is no match.
    ImGui::PushTextWrapPos(0.0f);
    ImGui::TextDisabled("%s", kNotTheSameHead);
    ImGui::PopTextWrapPos();
    if (!s.view.plan.empty() && s.plan_error.empty()) {  // say that both maps are of the changed models
        ImGui::PushTextWrapPos(0.0f);
        ImGui::TextDisabled("Both models run under the same model changes: %s.", s.view.plan.c_str());
        ImGui::PopTextWrapPos();
    }
    draw_map(p, 0, ctx, map_w, side);
    if (pair.side_by_side && !panes.stacked) ImGui::SameLine();
    draw_map(p, 1, ctx, map_w, side);
    draw_retrieval(p);
    const float h = panes.stacked ? stacked_plot_height(panes, w) : std::max(font * 10.0f, ImGui::GetContentRegionAvail().y - font);
    draw_fading(p, ImVec2(0, h));
    return true;
}

namespace {

std::string retrieval_json(const TwinPanel& p) {
    const TwinPanel::Side &a = p.sides[0], &b = p.sides[1];
    json::ArrayBuilder layers;
    for (size_t l = 0; l < a.retrieval.size() && l < b.retrieval.size(); ++l) {
        const auto best = [](const TwinPanel::Side::Best& x) {
            return json::ObjectBuilder().add("head", x.head).add("weight", static_cast<double>(x.weight)).str();
        };
        layers.add_raw(json::ObjectBuilder().add_raw("model", best(a.retrieval[l])).add_raw("twin", best(b.retrieval[l])).str());
    }
    return json::ObjectBuilder().add("target", a.target).add_raw("layers", layers.str()).str();
}

}  // namespace

std::string twin_status_json(const TwinPanel&, const Session& s) {
    json::ObjectBuilder o;
    o.add("caveat", kNotTheSameHead)
        .add("on", s.view.compare && twin_unavailable_reason(s).empty())
        .add("phase", twin_phase(s))
        .add("reason", twin_unavailable_reason(s))
        .add("error", s.twin_error)
        .add("plan", s.view.plan);
    TwinPanel fresh;  // computed here, so that status() is current whichever panel is open
    if (!s.view.compare || !twin_unavailable_reason(s).empty() || !update_sides(fresh, s)) {
        o.add_raw("model", "null").add_raw("twin", "null").add_raw("fading", "null").add_raw("last", "null");
        return o.str();
    }
    const auto side_json = [](const TwinPanel::Side& d) {
        json::ObjectBuilder x;
        x.add("label", d.label).add("name", d.name).add("normalizer", d.normalizer).add("changed", d.changed);
        x.add("max_weight", static_cast<double>(d.max_weight));
        return x.str();
    };
    o.add_raw("model", side_json(fresh.sides[0])).add_raw("twin", side_json(fresh.sides[1]));
    o.add("layer", fresh.layer).add("head", fresh.head).add("L", fresh.sides[0].L);
    json::ObjectBuilder fading;
    fading.add_raw("keys", json::ArrayBuilder().add_all(fresh.sides[0].keys).str());
    fading.add_raw("model", json::ArrayBuilder().add_all(fresh.sides[0].largest).str());
    fading.add_raw("twin", json::ArrayBuilder().add_all(fresh.sides[1].largest).str());
    o.add_raw("fading", fading.str());
    json::ObjectBuilder last;  // the last query, which sees every key: what a caption quotes
    if (!fresh.sides[0].largest.empty() && !fresh.sides[1].largest.empty())
        last.add("L", fresh.sides[0].L)
            .add("model", fresh.sides[0].largest.back())
            .add("twin", fresh.sides[1].largest.back())
            .add("uniform", 1.0 / fresh.sides[0].L);
    o.add_raw("last", last.str());
    o.add_raw("retrieval", retrieval_json(fresh));
    return o.str();
}

}  // namespace attnlab
