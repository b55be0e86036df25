#include "app/panels/softmax_playground.h"

#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "app/panels/pane_layout.h"
#include "app/panels/temperature_slider.h"
#include "app/plot/plot.h"
#include "base/json.h"

namespace attnlab {

namespace {

bool same(const LogitSpec& x, const LogitSpec& y) { return x.preset == y.preset && x.seed == y.seed && x.spread == y.spread; }

}  // namespace

constexpr int kMaxL = 4096;

void update(SoftmaxPlayground& p) {
    // The fade curve spans every L, so it depends on T but not on the chosen L; the
    // sensitivity curve spans every T, so it depends on L but not on the chosen T.
    if (!same(p.fade_spec, p.spec) || p.fade_T != p.T) {
        p.fade = fade_curve(p.spec, p.T, log_grid_int(2, kMaxL, 72));
        p.fade_spec = p.spec;
        p.fade_T = p.T;
        p.sensitivity_L = -1;  // the logits may have changed too
    }
    if (!same(p.sensitivity_spec, p.spec) || p.sensitivity_L != p.L) {
        p.logits = synthetic_logits(p.spec, p.L);
        p.sensitivity = sensitivity_curve(p.logits, log_grid(kMinTemperature, kMaxTemperature, 161));
        p.sensitivity_spec = p.spec;
        p.sensitivity_L = p.L;
    }
    p.weights = softmax(p.logits, p.T);
    p.max_weight = *std::max_element(p.weights.begin(), p.weights.end());
    p.a = max_abs(p.logits);
    p.band = lemma1_band(p.L, p.a, p.T);
    p.jacobian_norm = softmax_jacobian_norm(p.weights, p.T);

    if (same(p.compared_spec, p.spec) && p.compared_L == p.L && p.compared_T == p.T) return;
    p.compared_spec = p.spec;
    p.compared_L = p.L;
    p.compared_T = p.T;
    // The comparison follows the logits' order, so that sparsity shows as weights dropping to 0.
    std::vector<int> order(p.logits.size());
    std::iota(order.begin(), order.end(), 0);
    const size_t n_top = std::min<size_t>(32, order.size());
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n_top), order.end(),
                      [&](int i, int j) { return p.logits[static_cast<size_t>(i)] > p.logits[static_cast<size_t>(j)]; });
    p.compared.clear();
    for (std::string_view name : {"softmax", "sparsemax", "entmax-1.5", "ssmax", "sa-softmax"}) {
        Normalizer n;
        std::string error;
        parse_normalizer(name, n, error);
        SoftmaxPlayground::Compared c;
        c.name = std::string(name);
        const std::vector<double> w = normalize(n, p.logits, p.T);
        for (size_t k = 0; k < n_top; ++k) c.top.push_back(w[static_cast<size_t>(order[k])]);
        c.max_weight = *std::max_element(w.begin(), w.end());
        c.support = static_cast<int>(std::count_if(w.begin(), w.end(), [](double x) { return x != 0.0; }));
        if (n.kind != NormalizerKind::SaSoftmax || p.L <= 256) c.jacobian_norm = normalizer_jacobian_norm(n, p.logits, p.T);
        p.compared.push_back(std::move(c));
    }
}

namespace {

void draw_controls(SoftmaxPlayground& p, WidgetRects& widgets) {
    ImGui::TextWrapped("Synthetic logits l₁ … l_L, weights α = softmax(l / T).");
    ImGui::Spacing();

    ImGui::SetNextItemWidth(-1);
    if (ImGui::BeginCombo("##preset", preset_name(p.spec.preset))) {
        for (LogitPreset preset : {LogitPreset::RandomGaussian, LogitPreset::RandomUniform, LogitPreset::OneStrong, LogitPreset::TwoTied})
            if (ImGui::Selectable(preset_name(preset), preset == p.spec.preset)) p.spec.preset = preset;
        ImGui::EndCombo();
    }
    remember_last_item(widgets, "playground.preset");
    const bool random = p.spec.preset == LogitPreset::RandomGaussian || p.spec.preset == LogitPreset::RandomUniform;
    ImGui::BeginDisabled(!random);
    int seed = static_cast<int>(p.spec.seed);
    if (ImGui::InputInt("seed", &seed)) p.spec.seed = static_cast<std::uint64_t>(std::max(0, seed));
    remember_last_item(widgets, "playground.seed");
    ImGui::SameLine();
    if (ImGui::Button("New")) p.spec.seed = (p.spec.seed * 6364136223846793005ULL + 1442695040888963407ULL) % 1000000;
    ImGui::EndDisabled();

    float spread = static_cast<float>(p.spec.spread);
    if (ImGui::SliderFloat("spread", &spread, 0.0f, 10.0f, "%.2f")) p.spec.spread = spread;
    remember_last_item(widgets, "playground.spread");
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Random: the scale of the logits. Presets: the leaders' logit (the others are 0).");

    ImGui::SliderInt("length L", &p.L, 2, kMaxL, "%d", ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp);
    remember_last_item(widgets, "playground.length");
    temperature_slider("temperature T", p.T);
    remember_last_item(widgets, "playground.temperature");
    ImGui::TextDisabled("Ctrl+click a slider to type a value.");

    update(p);

    ImGui::Separator();
    ImGui::TextDisabled("At this L and T");
    if (plot::begin_values_table("##now", ImGuiTableFlags_None)) {
        plot::table_row("largest weight", "%.6g", p.max_weight);
        plot::table_row("1/L", "%.6g", 1.0 / p.L);
        plot::table_row("a = max |l_i|", "%.4g", p.a);
        plot::table_row("Lemma 1 band", "[%.2g, %.2g]", p.band.lower, p.band.upper);
        plot::table_row("exact ‖J‖₂", "%.6g", p.jacobian_norm);
        plot::table_row("tight bound 1/(2T)", "%.6g", jacobian_bound_tight(p.T));
        plot::table_row("paper: min{1/(4T), √2}", "%.6g", jacobian_bound_paper(p.T));
        ImGui::EndTable();
    }
    const double excess = p.jacobian_norm / jacobian_bound_paper(p.T);
    if (excess > 1.0 + 1e-9) {
        ImGui::PushStyleColor(ImGuiCol_Text, plot::colors::vermillion);
        text_wrapped("‖J‖₂ exceeds the paper's bound here, by a factor of %.3g.", excess);
        ImGui::PopStyleColor();
    }
    ImGui::Spacing();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetColorU32(ImGuiCol_TextDisabled));
    ImGui::TextWrapped(
        "T = 1 is plain softmax. In a model the logits are q·k/√d_head, so the paper's T is √d_head × ours: 8 × on GPT-2 small "
        "(d_head = 64), √32 ≈ 5.66 × on AttnLab tiny (d_head = 32).");
    ImGui::PopStyleColor();
}

void draw_fade_plot(const SoftmaxPlayground& p, ImVec2 size) {
    const FadeCurve& f = p.fade;
    char title[96];
    std::snprintf(title, sizeof title, "Attention fades as 1/L (Lemma 1), T = %.3g", p.T);
    if (!plot::begin("##fade", size, {"context length L", plot::Scale::Log}, {"weight", plot::Scale::Log, {}, 1.5, 8.0}, title)) return;
    plot::band("Lemma 1 band (1/L)·e^(±2a/T)", f.L, f.band_lower, f.band_upper, plot::colors::sky);
    plot::line("1/L", f.L, f.uniform, {plot::colors::grey, plot::Dash::Dashed, 1.5f});
    plot::line("largest weight", f.L, f.max_weight, {plot::colors::blue, plot::Dash::Solid, 2.0f});
    plot::vline("##L", p.L);
    plot::point("current L", p.L, p.max_weight, plot::colors::vermillion);
    plot::end();
}

void draw_sensitivity_plot(const SoftmaxPlayground& p, ImVec2 size) {
    const SensitivityCurve& s = p.sensitivity;
    char title[96];
    std::snprintf(title, sizeof title, "Sensitivity vs temperature (Lemma 2), L = %d", p.L);
    if (!plot::begin("##sensitivity", size, {"temperature T", plot::Scale::Log}, {"‖J‖₂", plot::Scale::Log}, title)) return;
    plot::line("paper: min{1/(4T), √2}", s.T, s.bound_paper, {plot::colors::orange, plot::Dash::Dashed, 2.0f});
    plot::line("tight: 1/(2T)", s.T, s.bound_tight, {plot::colors::green, plot::Dash::Dotted, 2.5f});
    plot::line("exact ‖J‖₂", s.T, s.jacobian_norm, {plot::colors::blue, plot::Dash::Solid, 2.0f});
    plot::vline("##T", p.T);
    plot::point("current T", p.T, p.jacobian_norm, plot::colors::vermillion);
    plot::end();
}

void draw_weights_plot(const SoftmaxPlayground& p, ImVec2 size) {
    // The distribution itself under each normalizer: the weights of the 32 largest logits.
    if (p.compared.empty()) return;
    const size_t n = p.compared.front().top.size();
    std::vector<double> rank(n);
    std::iota(rank.begin(), rank.end(), 1.0);
    const std::vector<double> ref_x = {0.5, n + 0.5}, ref_y(2, 1.0 / p.L);
    if (!plot::begin("##weights", size, {"rank of the logit"}, {"weight", plot::Scale::Linear, 0.0}, "The largest weights, by normalizer"))
        return;
    const ImU32 colors[] = {plot::colors::blue, plot::colors::vermillion, plot::colors::green, plot::colors::orange, plot::colors::purple};
    const plot::Dash dashes[] = {plot::Dash::Solid, plot::Dash::Solid, plot::Dash::Dashed, plot::Dash::Dotted, plot::Dash::Dashed};
    for (size_t k = 0; k < p.compared.size(); ++k)
        plot::line(p.compared[k].name.c_str(), rank, p.compared[k].top, {colors[k % 5], dashes[k % 5], 2.0f, true});
    plot::line("1/L", ref_x, ref_y, {plot::colors::grey, plot::Dash::Dashed, 1.5f});
    plot::end();
}

// The normalizers side by side at this L and T: how peaked, how sparse, how sensitive.
void draw_normalizer_table(const SoftmaxPlayground& p) {
    if (!ImGui::BeginTable("##normalizers", 4, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) return;
    ImGui::TableSetupColumn("normalizer");
    ImGui::TableSetupColumn("largest");
    ImGui::TableSetupColumn("non-zero");
    ImGui::TableSetupColumn("exact ‖J‖₂");
    ImGui::TableHeadersRow();
    for (const SoftmaxPlayground::Compared& c : p.compared) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(c.name.c_str());
        ImGui::TableNextColumn();
        ImGui::Text("%.4g", c.max_weight);
        ImGui::TableNextColumn();
        ImGui::Text("%d / %d", c.support, p.L);
        ImGui::TableNextColumn();
        if (c.jacobian_norm >= 0) ImGui::Text("%.4g", c.jacobian_norm);
        else ImGui::TextDisabled("L > 256");
        if (c.jacobian_norm < 0 && ImGui::IsItemHovered())
            ImGui::SetTooltip("SA-softmax's Jacobian is not symmetric: its norm needs a dense O(L^3) solve, skipped above L = 256.");
    }
    ImGui::EndTable();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetColorU32(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("SA-softmax is renormalised to sum to 1 (see Help).");
    ImGui::PopStyleColor();
}

}  // namespace

void draw_softmax_playground(SoftmaxPlayground& p, WidgetRects& widgets) {
    const float controls_w = ImGui::GetFontSize() * 21.0f;
    const Panes panes = begin_panes("##playground_panes", 21.0f, 28.0f);
    begin_pane(panes, "##controls", controls_w, true);
    draw_controls(p, widgets);
    ImGui::Separator();
    draw_normalizer_table(p);
    end_pane(panes);
    beside(panes);
    begin_pane(panes, "##plots", 0, false);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float gap = ImGui::GetStyle().ItemSpacing.y;
    const float h = panes.stacked ? stacked_plot_height(panes, avail.x) : (avail.y - 2 * gap) / 3.0f;
    draw_fade_plot(p, ImVec2(avail.x, h));
    draw_sensitivity_plot(p, ImVec2(avail.x, h));
    draw_weights_plot(p, ImVec2(avail.x, h));
    end_pane(panes);
    end_panes(panes);
}

std::string playground_status_json(const SoftmaxPlayground& p) {
    json::ObjectBuilder o;
    o.add("preset", preset_name(p.spec.preset));
    o.add("seed", static_cast<double>(p.spec.seed));
    o.add("spread", p.spec.spread);
    o.add("L", p.L);
    o.add("T", p.T);
    o.add("max_weight", p.max_weight);
    o.add("band_lower", p.band.lower);
    o.add("band_upper", p.band.upper);
    o.add("jacobian_norm", p.jacobian_norm);
    o.add("bound_paper", jacobian_bound_paper(p.T));
    o.add("bound_tight", jacobian_bound_tight(p.T));
    json::ObjectBuilder normalizers;
    for (const SoftmaxPlayground::Compared& c : p.compared) {
        json::ObjectBuilder one;
        one.add("max_weight", c.max_weight).add("support", c.support);
        if (c.jacobian_norm >= 0) one.add("jacobian_norm", c.jacobian_norm);
        normalizers.add_raw(c.name, one.str());
    }
    o.add_raw("normalizers", normalizers.str());
    return o.str();
}

}  // namespace attnlab
