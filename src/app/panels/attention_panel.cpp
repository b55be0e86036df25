#include "app/panels/attention_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/selection.h"
#include "app/panels/pane_layout.h"
#include "app/panels/temperature_slider.h"
#include "app/panels/text_panel.h"
#include "app/plot/plot.h"
#include "app/work/model_tasks.h"
#include "base/json.h"
#include "base/timing.h"

namespace attnlab {

namespace {

// The normalizers the selector offers (kNormalizerNames without the general-alpha "entmax").
constexpr const char* kNormalizers[] = {"softmax", "sparsemax", "entmax-1.5", "ssmax", "sa-softmax"};
constexpr int kTopK = 10;

// One head's setting in words: "sparsemax", "ssmax:0.43 at T = 2".
std::string setting_in_words(const HeadPlan& h) {
    std::string out = normalizer_spec(h.normalizer);
    if (h.temperature != 1.0f) {
        char buf[32];
        std::snprintf(buf, sizeof buf, " at T = %.3g", static_cast<double>(h.temperature));
        out += buf;
    }
    return out;
}

// The row plot's key axis, a choice over the plot: positions, or a log axis (distance back from
// the query, or position), where the keys near the query and far from it both have room at 8,192.
void draw_row_axis_choice(AttentionPanel& p, PanelContext& ctx) {
    constexpr const char* kAxes[] = {"key position", "log distance from the query", "log key position"};
    int axis = static_cast<int>(p.row_axis);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14.0f);
    if (ImGui::Combo("key axis", &axis, kAxes, 3)) p.row_axis = static_cast<AttentionPanel::RowAxis>(axis);
    remember_last_item(ctx.widgets, "attention.row_axis");
}

// The chosen query's weights over the keys, top-N highlighted, with the 1/L reference: against the
// key's position, or on a log axis against its distance back from the query + 1 (1 = the query
// itself, i + 1 = key 0) or its position + 1.
void draw_row(const Session& s, const QuerySlice& slice, AttentionPanel::RowAxis axis, ImVec2 size) {
    const int n = static_cast<int>(slice.weights.size());
    const std::vector<int> order = selection_order(slice.weights);
    const int N = std::clamp(s.view.N, 1, std::max(1, n));
    std::vector<char> selected(static_cast<size_t>(n), 0);
    for (int i = 0; i < std::min(N, n); ++i) selected[static_cast<size_t>(order[static_cast<size_t>(i)])] = 1;
    using RowAxis = AttentionPanel::RowAxis;
    const auto x_of = [&](int j) { return axis == RowAxis::Position ? j : axis == RowAxis::LogDistance ? n - j : j + 1; };
    std::vector<double> x_rest, y_rest, x_top, y_top;
    for (int j = 0; j < n; ++j) {
        (selected[static_cast<size_t>(j)] ? x_top : x_rest).push_back(x_of(j));
        (selected[static_cast<size_t>(j)] ? y_top : y_rest).push_back(slice.weights[static_cast<size_t>(j)]);
    }
    char title[160], top_label[48], ref_label[48];
    std::snprintf(title, sizeof title, "Query %d ('%s'): its weights over the %d keys it sees", slice.query,
                  short_token_label(s, slice.query).c_str(), n);
    std::snprintf(top_label, sizeof top_label, "top-%d (N)", N);
    std::snprintf(ref_label, sizeof ref_label, "1/L = %.3g (uniform)", 1.0 / n);
    const bool log = axis != RowAxis::Position;
    // On a log axis a bar of width 0.8 at x covers x - 0.4 .. x + 0.4: the axis starts at 0.5.
    const double lo = log ? 0.5 : -0.5, hi = n + (log ? 0.5 : -0.5);
    const std::vector<double> ref_x = {lo, hi}, ref_y(2, 1.0 / n);
    const char* x_label = axis == RowAxis::Position      ? "key position"
                          : axis == RowAxis::LogDistance ? "distance from the query + 1 (1 = the query itself; log)"
                                                         : "key position + 1 (log)";
    if (!plot::begin("##row", size, {x_label, log ? plot::Scale::Log : plot::Scale::Linear, lo, hi}, {"weight", plot::Scale::Linear, 0.0},
                     title))
        return;
    plot::bars("other keys", x_rest, y_rest, 0.8, plot::colors::blue);
    plot::bars(top_label, x_top, y_top, 0.8, plot::colors::vermillion);
    plot::line(ref_label, ref_x, ref_y, {plot::colors::black, plot::Dash::Dashed, 1.5f});
    plot::end();
}

// The map's title, and a note when the selector previews a setting the model does not run.
std::string map_preview_note(const Session& s) {
    const HeadPlan& runs = s.forward->plan.at(s.view.layer, s.view.head);
    Normalizer shown;
    std::string unused;
    if (parse_normalizer(s.view.normalizer, shown, unused) && shown == runs.normalizer && static_cast<float>(s.view.T) == runs.temperature)
        return "";
    return "(a preview: the model runs this head with " + setting_in_words(runs) + "; \"Apply to the model\" runs it so)";
}

// The normalizer selector: a kind, and for SSMax and general entmax its parameter. The view keeps
// the normalizer as the plan's text writes it ("ssmax:0.43"), so "Apply" applies exactly it.
void draw_normalizer_selector(PanelContext& ctx) {
    Session& s = ctx.session;
    const float font = ImGui::GetFontSize();
    Normalizer n;
    std::string unused;
    const bool known = parse_normalizer(s.view.normalizer, n, unused);
    ImGui::SetNextItemWidth(font * 8);
    if (ImGui::BeginCombo("normalizer", known ? normalizer_name(n).c_str() : s.view.normalizer.c_str())) {
        for (const char* name : kNormalizers) {
            Normalizer pick = n;  // keeps SSMax's s when switching back to it
            if (!parse_normalizer(name, pick, unused)) continue;
            if (ImGui::Selectable(name, known && normalizer_name(n) == name)) s.view.normalizer = normalizer_spec(pick);
        }
        ImGui::EndCombo();
    }
    remember_last_item(ctx.widgets, "attention.normalizer");
    if (!known) return;
    // General entmax keeps its alpha field when a drag passes alpha = 1.5 ("entmax:1.5", not
    // "entmax-1.5", which has no field), so the field does not vanish under the pointer.
    const bool general_entmax = n.kind == NormalizerKind::Entmax && (n.alpha != 1.5 || s.view.normalizer.starts_with("entmax:"));
    if (n.kind == NormalizerKind::Ssmax || general_entmax) {
        const bool ssmax = n.kind == NormalizerKind::Ssmax;
        same_line_if_fits(labelled_width(font * 6, ssmax ? "s" : "alpha"));
        ImGui::SetNextItemWidth(font * 6);
        // In double: a float's 0.43f would reach the plan and the link as 0.4300000071525574. The
        // drag rounds to the 3 digits shown, so the text stays "ssmax:0.44".
        double& v = ssmax ? n.scale : n.alpha;
        const double lo = ssmax ? -10.0 : 1.0, hi = 10.0;
        if (ImGui::DragScalar(ssmax ? "s##ssmax" : "alpha##entmax", ImGuiDataType_Double, &v, 0.01f, &lo, &hi, "%.3g",
                              ImGuiSliderFlags_AlwaysClamp))
            s.view.normalizer = ssmax || v != 1.5 ? normalizer_spec(n) : "entmax:1.5";
        remember_last_item(ctx.widgets, "attention.normalizer_parameter");
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(ssmax ? "SSMax's s: the logits are scaled by s log n, n the keys a query sees."
                                    : "Entmax's alpha (1 = softmax, 2 = sparsemax).");
    }
}

void draw_controls(AttentionPanel& p, PanelContext& ctx) {
    Session& s = ctx.session;
    const float font = ImGui::GetFontSize();
    draw_normalizer_selector(ctx);
    same_line_if_fits(labelled_width(font * 12, "temperature T"));
    ImGui::SetNextItemWidth(font * 12);
    temperature_slider("temperature T", s.view.T);
    remember_last_item(ctx.widgets, "attention.temperature");
    same_line_if_fits(labelled_width(font * 8, "N"));
    ImGui::SetNextItemWidth(font * 8);
    const int n_max = std::max(1, static_cast<int>(s.forward ? s.forward->tokens.size() : s.tokens.size()) - 1);
    ImGui::SliderInt("N", &s.view.N, 1, n_max, "%d", ImGuiSliderFlags_AlwaysClamp);
    remember_last_item(ctx.widgets, "attention.N");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Top-N: how many keys count as selected (highlighted in the bars).");
    same_line_if_fits(button_width("T = 1"));
    if (ImGui::SmallButton("T = 1")) s.view.T = 1.0;
    // Apply: the selector's normalizer at T, to the open head, its layer, or every head.
    ImGui::BeginDisabled(!s.model);
    static constexpr const char* kScopes[] = {"this head", "this layer", "every head"};
    same_line_if_fits(font * 7);
    ImGui::SetNextItemWidth(font * 7);
    int scope = static_cast<int>(p.apply_scope);
    if (ImGui::Combo("##apply_scope", &scope, kScopes, 3)) p.apply_scope = static_cast<ApplyScope>(scope);
    remember_last_item(ctx.widgets, "attention.apply_scope");
    same_line_if_fits(button_width("Apply to the model"));
    if (ImGui::Button("Apply to the model")) {
        p.apply_error.clear();
        apply_to_model(s, p.apply_scope, p.apply_error);
    }
    ImGui::EndDisabled();
    remember_last_item(ctx.widgets, "attention.apply");
    const bool apply_hovered = ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled);
    if (apply_hovered)
        ImGui::SetTooltip(
            "Runs the model with the selected normalizer at T in %s (layer %d%s),\n"
            "inside the forward pass: the later layers see what the changed heads compute.\n"
            "Every panel then shows the changed model; \"Model changes\" compares it with the model as trained.",
            kScopes[scope], s.view.layer, p.apply_scope == ApplyScope::Head ? (", head " + std::to_string(s.view.head)).c_str() : "");
    draw_twin_toggle(ctx);
    // Notes wrap at the window's edge when they do not fit beside the buttons.
    ImGui::PushTextWrapPos(0.0f);
    if (!p.apply_error.empty()) {
        same_line_if_fits(ImGui::CalcTextSize(p.apply_error.c_str()).x);
        ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(plot::colors::vermillion), "%s", p.apply_error.c_str());
    }
    ImGui::PopTextWrapPos();
}

// The heads `plan` changes from `trained`, grouped by setting: "sparsemax in every head",
// "ssmax:0.43 in layer 2 (every head); softmax at T = 0.5 in layer 0, head 3".
std::string plan_in_words(const AttentionPlan& plan, const AttentionPlan& trained) {
    const int L = plan.n_layer(), H = plan.n_head();
    std::vector<std::pair<std::string, std::vector<int>>> groups;  // setting -> changed heads (layer-major)
    for (int l = 0; l < L; ++l)
        for (int h = 0; h < H; ++h) {
            if (plan.at(l, h) == trained.at(l, h)) continue;
            const std::string what = setting_in_words(plan.at(l, h));
            auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == what; });
            if (it == groups.end()) it = groups.insert(groups.end(), {what, {}});
            it->second.push_back(l * H + h);
        }
    std::string out;
    for (const auto& [what, heads] : groups) {
        out.append(out.empty() ? "" : "; ").append(what).append(" in ");
        if (static_cast<int>(heads.size()) == L * H) {
            out += "every head";
            continue;
        }
        // Whole layers by number, the other heads one by one (at most a few, then a count).
        std::string parts;
        int listed = 0, more = 0;
        for (size_t i = 0; i < heads.size();) {
            const int l = heads[i] / H;
            size_t j = i;
            while (j < heads.size() && heads[j] / H == l) ++j;
            std::string part = static_cast<int>(j - i) == H ? "layer " + std::to_string(l) + " (every head)" : "";
            for (size_t k = i; part.empty() && k < j; ++k) {
                if (listed >= 6) {
                    ++more;
                    continue;
                }
                parts.append(parts.empty() ? "" : ", ").append("layer " + std::to_string(l) + ", head " + std::to_string(heads[k] % H));
                ++listed;
            }
            if (!part.empty()) parts.append(parts.empty() ? "" : ", ").append(part);
            i = j;
        }
        out += parts;
        if (more > 0) out += " and " + std::to_string(more) + " more heads";
    }
    return out;
}

// The model changes: the plan in words and as text, Reset, and the text's perplexity before -> after.
void draw_model_changes(AttentionPanel& p, const Session& s, PanelContext& ctx) {
    Session& ms = ctx.session;
    if (!s.model) return;
    const AttentionPlan& trained = s.model->model->trained_plan();
    if (p.words_plan != s.plan || p.words_trained != trained) {  // the words when the plan changes, not every frame
        p.words_plan = s.plan;
        p.words_trained = trained;
        p.plan_words = plan_in_words(s.plan, trained);
    }
    if (!s.plan_error.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, plot::colors::vermillion);
        ImGui::TextWrapped("%s", s.plan_error.c_str());
        ImGui::PopStyleColor();
    }
    const bool changed = s.plan != trained;
    ImGui::TextUnformatted("Model changes:");
    ImGui::SameLine();
    if (!changed) {
        ImGui::TextDisabled("none, the model as trained. \"Apply to the model\" changes heads.");
    } else {
        ImGui::TextWrapped("%s", p.plan_words.c_str());
        ImGui::TextDisabled("as text: %s", s.view.plan.c_str());
        ImGui::SameLine();
    }
    if (changed || !s.view.plan.empty()) {
        if (ImGui::SmallButton("Reset")) reset_model_changes(ms);
        remember_last_item(ctx.widgets, "attention.reset_plan");
    }
    // Perplexity of the text, before -> after.
    const TextPerplexity* before = find_perplexity(s, s.baseline);
    const TextPerplexity* after = s.forward && s.forward->plan == s.plan ? find_perplexity(s, s.forward) : nullptr;
    if (!s.forward || s.forward->tokens.size() < 2) return;
    const auto ppl = [](const TextPerplexity* result) {
        if (!result) return std::string("...");  // computing
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.4g", result->perplexity);
        return std::string(buf);
    };
    if (changed)
        ImGui::Text("Perplexity of the text: %s as trained -> %s changed (%d predicted tokens)", ppl(before).c_str(), ppl(after).c_str(),
                    static_cast<int>(s.forward->tokens.size()) - 1);
    else
        ImGui::Text("Perplexity of the text: %s (%d predicted tokens)", ppl(after).c_str(), static_cast<int>(s.forward->tokens.size()) - 1);
}

// The next-token lists, recomputed only when a pass changes (each is a few passes over the 50257
// logits: too much to redo every frame while a slider is dragged).
void update_top10(AttentionPanel& p, const Session& s) {
    const bool compare = s.baseline && s.baseline != s.forward && s.baseline->tokens == s.forward->tokens;
    if (p.top_pass.lock() == s.forward && p.top_baseline.lock() == (compare ? s.baseline : nullptr) && compare == !p.before.empty()) return;
    p.top_pass = s.forward;
    p.top_baseline = compare ? s.baseline : nullptr;
    p.after = top_probabilities(s.forward->next_logits, kTopK);
    p.before.clear();
    p.was_rank.clear();
    if (!compare) return;
    p.before = top_probabilities(s.baseline->next_logits, kTopK);
    for (const TokenProbability& a : p.after) p.was_rank.push_back(token_probability(s.baseline->next_logits, a.id).rank);
}

// One table of the top 10: the model as trained (`before`) and/or as changed (`after`, with each
// token's change of rank), each a "#" column and two of its own. Its cells never wrap: a number or a
// token split over lines reads as two (issue 35: one character a line on a phone).
void draw_top10_table(const char* id, const AttentionPanel& p, const Session& s, const std::vector<TokenProbability>* before,
                      const std::vector<TokenProbability>* after) {
    const ImGuiTableFlags flags = ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit;
    if (!ImGui::BeginTable(id, 1 + (before ? 2 : 0) + (after ? 3 : 0), flags)) return;
    ImGui::PushTextWrapPos(-1.0f);
    ImGui::TableSetupColumn("#");
    if (before) ImGui::TableSetupColumn("as trained"), ImGui::TableSetupColumn("p");
    if (after) ImGui::TableSetupColumn("changed"), ImGui::TableSetupColumn("p "), ImGui::TableSetupColumn("rank change");
    ImGui::TableHeadersRow();
    const auto token_text = [&](int token) { return chip_label(s.tokenizer.token_bytes(token)); };
    const size_t rows = before ? before->size() : after->size();
    for (size_t r = 0; r < rows; ++r) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::Text("%d", static_cast<int>(r) + 1);
        if (before) {
            ImGui::TableNextColumn();
            ImGui::TextUnformatted(token_text((*before)[r].id).c_str());
            ImGui::TableNextColumn();
            ImGui::Text("%.3g", (*before)[r].p);
        }
        if (!after || r >= after->size() || r >= p.was_rank.size()) continue;
        const TokenProbability& a = (*after)[r];
        const int was = p.was_rank[r];  // 0-based, as trained
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(token_text(a.id).c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%.3g", a.p);
        ImGui::TableNextColumn();
        if (was == a.rank) ImGui::TextDisabled("=");
        else if (was > a.rank)
            ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(plot::colors::green), "↑%d (was #%d)", was - a.rank, was + 1);
        else ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(plot::colors::vermillion), "↓%d (was #%d)", a.rank - was, was + 1);
    }
    ImGui::PopTextWrapPos();
    ImGui::EndTable();
}

void draw_top10(AttentionPanel& p, const Session& s) {
    if (!s.forward) return;
    update_top10(p, s);
    const bool compare = !p.before.empty();
    ImGui::Spacing();
    ImGui::TextUnformatted("Next token after the text: top 10");
    if (!compare) ImGui::TextDisabled("\"Apply to the model\" adds the changed model's columns.");
    // Separate ids: a table keeps its column widths, and the layouts differ. The two models' columns
    // side by side need about 30 font sizes; on a phone the changed model's table goes under.
    if (!compare) return draw_top10_table("##top10", p, s, &p.after, nullptr);
    if (ImGui::GetContentRegionAvail().x >= ImGui::GetFontSize() * 30.0f)
        return draw_top10_table("##top10_after", p, s, &p.before, &p.after);
    draw_top10_table("##top10_trained", p, s, &p.before, nullptr);
    ImGui::Spacing();
    draw_top10_table("##top10_changed", p, s, nullptr, &p.after);
}

std::string top_json(std::span<const float> logits, const Gpt2Tokenizer& tokenizer) {
    json::ArrayBuilder a;
    for (const TokenProbability& t : top_probabilities(logits, kTopK)) {
        json::ObjectBuilder o;
        o.add("token", tokenizer.token_bytes(t.id)).add("id", t.id).add("p", t.p);
        a.add_raw(o.str());
    }
    return a.str();
}

const std::string& cached_top_json(AttentionPanel::TopJson& cache, const std::shared_ptr<const ForwardResult>& pass,
                                   const Gpt2Tokenizer& tokenizer) {
    if (cache.pass.lock() != pass || cache.json.empty()) {
        cache.pass = pass;
        cache.json = top_json(pass->next_logits, tokenizer);
    }
    return cache.json;
}

// The chosen query's row, recomputed only when its place, pass, normalizer or T changed (it
// copies the head's queries, keys and values out of the capture). False, with
// p.slice_error, when there is none.
bool update_slice(AttentionPanel& p, const Session& s) {
    QuerySlice place;
    if (!chosen_query_place(s, place, p.slice_error)) {
        p.slice_key = {};
        return false;
    }
    const QueryKey key = query_key(s, place, kKeyN | kKeyEps);
    if (same_query(p.slice_key, key)) return p.slice_error.empty();
    p.slice_key = key;
    p.slice = std::move(place);
    p.slice_error.clear();
    return fill_query_slice(s, p.slice, p.slice_error);
}

}  // namespace

void draw_attention_panel(AttentionPanel& p, PanelContext& ctx) {
    Session& s = ctx.session;
    draw_controls(p, ctx);
    if (!update_slice(p, s)) {
        ImGui::Spacing();
        ImGui::TextDisabled("%s", p.slice_error.c_str());
        if (!s.model) ImGui::TextDisabled("The Softmax playground works without a model.");
        return;
    }
    const QuerySlice& slice = p.slice;
    keep_attention_map_view(p.map, s, slice.layer, slice.head);

    const float font = ImGui::GetFontSize();
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float left_w = std::clamp(avail.x * 0.42f, font * 20.0f, font * 40.0f);
    const Panes panes = begin_panes("##attention_panes", 20.0f, 30.0f);
    begin_pane(panes, "##attention_left", left_w, true);
    draw_model_changes(p, s, ctx);
    draw_head_grid(p.grid, ctx, ImGui::GetContentRegionAvail().x);
    draw_top10(p, s);
    end_pane(panes);
    beside(panes);
    begin_pane(panes, "##attention_right", 0, false);
    if (draw_twin_compare(p.twin, ctx, panes)) {  // the two models' maps and the fading plot instead
        end_pane(panes);
        end_panes(panes);
        return;
    }
    if (panes.stacked) {
        // The map as wide as the screen (less its labels), taller than the view when that is short.
        const float w = ImGui::GetContentRegionAvail().x;
        // (Its title, its controls, the axes' labels, the colour bar and the wrapped caption under it
        // take about 16 lines. A child shorter than its content scrolls by itself, and a swipe on
        // the map would then scroll the child, not the page.)
        draw_attention_map_view(p.map, ctx, ImVec2(0, std::clamp(w + font * 16.0f, font * 20.0f, std::max(panes.view_h, font * 24.0f))),
                                map_preview_note(s));
        draw_row_axis_choice(p, ctx);
        draw_row(s, slice, p.row_axis, ImVec2(0, stacked_plot_height(panes, w)));
    } else {
        const float h = ImGui::GetContentRegionAvail().y;
        draw_attention_map_view(p.map, ctx, ImVec2(0, std::max(font * 14.0f, h * 0.62f)), map_preview_note(s));
        draw_row_axis_choice(p, ctx);
        draw_row(s, slice, p.row_axis,
                 ImVec2(0, std::max(font * 10.0f, ImGui::GetContentRegionAvail().y - 2.0f * ImGui::GetFrameHeightWithSpacing())));
    }
    if (const std::shared_ptr<const HeadMap> m = p.map.work.done)
        ImGui::TextDisabled("Computed the map's %d rows in %.2f ms.", m->request.window.queries(), m->ms);
    end_pane(panes);
    end_panes(panes);
}

std::string model_changes_status_json(const Session& s) {
    json::ObjectBuilder o;
    o.add("spec", s.view.plan).add("error", s.plan_error);
    const bool model = s.model != nullptr;
    const AttentionPlan* trained = model ? &s.model->model->trained_plan() : nullptr;
    o.add("effective", model ? attention_spec(s.plan, *trained) : std::string());
    int changed = 0;
    json::ArrayBuilder heads;
    for (int l = 0; model && l < s.plan.n_layer(); ++l)
        for (int h = 0; h < s.plan.n_head(); ++h)
            if (!(s.plan.at(l, h) == trained->at(l, h))) {
                ++changed;
                heads.add_raw(json::ArrayBuilder().add(l).add(h).str());
            }
    o.add("changed_heads", changed).add_raw("heads", heads.str());
    o.add("words", model ? plan_in_words(s.plan, *trained) : std::string());
    // Whether the panels show the plan yet: the pass under it has finished.
    // (s.plan is read from view.plan at the next frame: until then it is not current either.)
    const bool plan_read = model && s.plan_model == s.model.get() && s.plan_text == s.view.plan;
    const bool current = plan_read && s.forward && s.forward->plan == s.plan && s.forward->tokens == s.tokens;
    o.add("forward_current", current);
    o.add("baseline_is_forward", s.forward && s.forward == s.baseline);
    const auto ppl = [&](const std::shared_ptr<const ForwardResult>& pass) {
        const TextPerplexity* p = find_perplexity(s, pass);
        if (!p) return std::string("null");
        json::ObjectBuilder x;
        x.add("tokens", p->tokens).add("mean_nll", p->mean_nll).add("perplexity", p->perplexity);
        return x.str();
    };
    // null until the pass for the current text (and plan) has its perplexity: a caption that reads
    // them waits rather than shows the numbers of the pass before.
    const bool baseline_current = s.baseline && s.baseline->tokens == s.tokens;
    o.add_raw("perplexity_before", baseline_current ? ppl(s.baseline) : "null")
        .add_raw("perplexity_after", current ? ppl(s.forward) : "null");
    return o.str();
}

std::string attention_status_json(const AttentionPanel& p, const Session& s) {
    json::ObjectBuilder o;
    o.add("layer", s.view.layer).add("head", s.view.head).add("query", chosen_query(s)).add("T", s.view.T);
    o.add("normalizer", s.view.normalizer).add("N", s.view.N);
    QuerySlice slice;
    std::string why;
    if (chosen_query_slice(s, slice, why)) {
        o.add_raw("row", json::ArrayBuilder().add_all(slice.weights).str());
        const std::vector<int> order = selection_order(slice.weights);
        json::ArrayBuilder selected;
        for (int i = 0; i < std::min<int>(s.view.N, static_cast<int>(order.size())); ++i)
            selected.add(static_cast<long long>(order[static_cast<size_t>(i)]));
        o.add_raw("selected", selected.str());
    } else {
        o.add_raw("row", "null").add_raw("selected", "null").add("reason", why);
    }
    add_head_grid_status(p.grid, s, o);
    // L, bins (block rows), max_weight (the largest block) and reshape_ms (the map's computation),
    // as before the blocks; map: what the map shows (attention_map_view.h).
    const std::shared_ptr<const HeadMap> m = p.map.work.done;
    o.add("L", s.forward ? s.forward->capture.length() : 0)
        .add("bins", m ? m->blocks.rows() : 0)
        .add("max_weight", m ? static_cast<double>(m->blocks.max) : 0.0)
        .add("reshape_ms", m ? m->ms : 0.0);
    o.add_raw("map", attention_map_status_json(p.map));
    // top10: the model as it runs now (under the plan); baseline_top10: as trained.
    o.add_raw("top10", s.forward ? cached_top_json(p.top_json_now, s.forward, s.tokenizer) : "null");
    o.add_raw("baseline_top10", s.baseline ? cached_top_json(p.top_json_trained, s.baseline, s.tokenizer) : "null");
    return o.str();
}

}  // namespace attnlab
