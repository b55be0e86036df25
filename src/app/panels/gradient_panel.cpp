#include "app/panels/gradient_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/head_statistics.h"
#include "analysis/softmax.h"
#include "analysis/softmax_sweeps.h"
#include "app/panels/query_controls.h"
#include "app/panels/temperature_slider.h"
#include "app/plot/plot.h"
#include "app/work/head_summaries.h"
#include "base/json.h"
#include "base/random.h"

namespace attnlab {

namespace {

constexpr double kPaperEps[] = {1e-3, 1e-1, 10.0};
// SA-softmax's ||J||_2 needs a dense L x L eigen-problem (O(L^3)); beyond this it is left out.
constexpr int kMaxDenseJacobianL = 192;
constexpr std::uint64_t kSeed = 0;

const ImU32 kEpsColors[] = {plot::colors::blue, plot::colors::vermillion, plot::colors::purple, plot::colors::sky};

bool dense_jacobian_too_costly(const Normalizer& n, int L) { return n.kind == NormalizerKind::SaSoftmax && L > kMaxDenseJacobianL; }

std::vector<double> eps_list(double view_eps) {
    std::vector<double> e(std::begin(kPaperEps), std::end(kPaperEps));
    if (std::none_of(e.begin(), e.end(), [&](double x) { return std::abs(x - view_eps) <= 1e-12 * x; })) e.push_back(view_eps);
    return e;
}

void update(GradientPanel& p, const Session& s) {
    QuerySlice slice;
    if (!chosen_query_place(s, slice, p)) return;
    const int L = slice.query + 1;
    const QueryKey key = query_key(s, slice, kKeyN | kKeyT);  // the curves span every T and do not depend on N
    const bool new_query = !same_query(p.key, key);
    if (!new_query && p.T_now == s.view.T) return;  // as computed
    if (!fill_query_slice(s, slice, p.error)) {
        p.ready = false;
        p.key = {};
        return;
    }
    if (new_query) {
        p.key = key;
        p.temperatures = log_grid(1e-3, 1e2, 61);
        p.eps = eps_list(s.view.eps);
        const int n_head = s.forward->capture.n_head();
        p.direction = random_unit_vector(L, derive_seed(kSeed, static_cast<std::uint64_t>(slice.layer * n_head + slice.head),
                                                        static_cast<std::uint64_t>(slice.query), 5));
        const bool dense_ok = !dense_jacobian_too_costly(slice.normalizer, L);
        p.note = dense_ok ? ""
                          : "SA-softmax's exact ||J||_2 needs a dense L x L eigen-problem: shown for L <= " +
                                std::to_string(kMaxDenseJacobianL) + " only.";
        p.jacobian.clear();
        p.g.assign(p.eps.size(), {});
        for (double T : p.temperatures) {
            const std::vector<double> w = normalize(slice.normalizer, slice.logits, T);
            if (dense_ok) p.jacobian.push_back(normalizer_jacobian_norm(slice.normalizer, slice.logits, T));
            for (size_t e = 0; e < p.eps.size(); ++e)
                p.g[e].push_back(normalizer_sensitivity(slice.normalizer, slice.logits, w, p.direction, T, p.eps[e]));
        }
        p.T_now = -1;  // recompute below
    }
    if (p.T_now != s.view.T) {
        p.T_now = s.view.T;
        p.jacobian_now = dense_jacobian_too_costly(slice.normalizer, L) ? std::nan("")
                                                                        : normalizer_jacobian_norm(slice.normalizer, slice.logits, p.T_now);
        p.g_now = normalizer_sensitivity(slice.normalizer, slice.logits, slice.weights, p.direction, p.T_now, s.view.eps);
    }
    p.ready = true;
    p.error.clear();
}

std::string eps_label(double e) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "g(T, eps = %g)", e);
    return buf;
}

// The bounds are softmax's (Lemma 2); other normalizers are drawn against them for scale.
void draw_bounds(const std::vector<double>& T, bool softmax_only) {
    std::vector<double> paper, tight;
    for (double t : T) {
        paper.push_back(jacobian_bound_paper(t));
        tight.push_back(jacobian_bound_tight(t));
    }
    plot::line(softmax_only ? "(check) paper's bound for softmax" : "(check) paper's bound min{1/(4T), √2}", T, paper,
               {plot::colors::orange, plot::Dash::Dashed, 2.0f});
    plot::line(softmax_only ? "tight bound for softmax 1/(2T)" : "tight bound 1/(2T)", T, tight,
               {plot::colors::green, plot::Dash::Dotted, 2.5f});
}

void draw_chosen(const GradientPanel& p, const Session& s, ImVec2 size) {
    char title[128];
    std::snprintf(title, sizeof title, "Layer %d, head %d, query %d (%s): sensitivity against temperature", p.key.layer, p.key.head,
                  p.key.query, p.key.normalizer.c_str());
    if (!plot::begin("##gradient", size, {"temperature T (T = 1 is the model as trained)", plot::Scale::Log},
                     {"||d alpha|| / ||d l||", plot::Scale::Log, {}, {}, 9.0}, title))
        return;
    draw_bounds(p.temperatures, p.key.normalizer != "softmax");
    for (size_t e = 0; e < p.eps.size(); ++e) {
        const bool chosen = std::abs(p.eps[e] - s.view.eps) <= 1e-12 * p.eps[e];
        plot::line(eps_label(p.eps[e]).c_str(), p.temperatures, p.g[e], {kEpsColors[e % 4], plot::Dash::Solid, chosen ? 3.0f : 1.5f});
    }
    if (!p.jacobian.empty()) plot::line("exact ||J||_2", p.temperatures, p.jacobian, {plot::colors::black, plot::Dash::Solid, 2.0f});
    plot::vline("view's T", s.view.T);
    if (std::isfinite(p.jacobian_now)) plot::point("||J||_2 at the view's T", s.view.T, p.jacobian_now, plot::colors::vermillion);
    plot::end();
}

void draw_heads(Session& s, ImVec2 size) {
    const HeadSummaries* hs = s.summaries.get();
    if (!hs || !hs->complete) {
        draw_summaries_pending(s, "##grad_wait", "Mean over queries, max over heads (the paper's Figure 4)",
                               "switch to the chosen head to see it live", size);
        return;
    }
    const size_t nt = hs->temperatures.size(), ne = hs->eps.size();
    std::vector<std::vector<double>> g(ne, std::vector<double>(nt, 0.0));
    std::vector<double> J(nt, 0.0);
    for (const HeadSummary& h : hs->heads) {
        if (!h.error.empty()) continue;
        for (size_t i = 0; i < nt; ++i) {
            J[i] = std::max(J[i], h.jacobian[i]);
            for (size_t e = 0; e < ne; ++e) g[e][i] = std::max(g[e][i], h.g[i * ne + e]);
        }
    }
    char title[160];
    std::snprintf(title, sizeof title, "All %zu heads: mean over %zu queries, max over heads (softmax)", hs->heads.size(),
                  hs->queries.size());
    if (!plot::begin("##gradient_heads", size, {"temperature T (T = 1 is the model as trained)", plot::Scale::Log},
                     {"||d alpha|| / ||d l||", plot::Scale::Log, {}, {}, 9.0}, title))
        return;
    draw_bounds(hs->temperatures, false);
    for (size_t e = 0; e < ne; ++e) {
        const bool chosen = std::abs(hs->eps[e] - s.view.eps) <= 1e-12 * hs->eps[e];
        plot::line(eps_label(hs->eps[e]).c_str(), hs->temperatures, g[e],
                   {kEpsColors[e % 4], plot::Dash::Solid, chosen ? 3.0f : 1.5f, true});
    }
    plot::line("max over heads of mean ||J||_2", hs->temperatures, J, {plot::colors::black, plot::Dash::Solid, 2.0f, true});
    plot::vline("view's T", s.view.T);
    plot::end();
}

}  // namespace

void draw_gradient_panel(GradientPanel& p, PanelContext& ctx) {
    Session& s = ctx.session;
    const bool have_forward = s.forward != nullptr;
    if (have_forward) update(p, s);

    const float controls_w = ImGui::GetFontSize() * kControlsEm;
    const Panes panes = begin_panes("##grad_panes", kControlsEm, 30.0f);
    begin_pane(panes, "##grad_controls", controls_w, true);
    ImGui::TextWrapped("Lemma 2: how much the weights move when the logits move, against the temperature T.");
    ImGui::RadioButton("chosen head and query", &p.mode, 0);
    remember_last_item(ctx.widgets, "gradient.mode");
    ImGui::RadioButton("mean over queries, max over heads", &p.mode, 1);
    remember_last_item(ctx.widgets, "gradient.mode_heads");

    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    char current[32];
    std::snprintf(current, sizeof current, "%g", s.view.eps);
    if (ImGui::BeginCombo("eps (highlighted)", current)) {
        for (double e : kPaperEps) {
            char name[32];
            std::snprintf(name, sizeof name, "%g", e);
            if (ImGui::Selectable(name, e == s.view.eps)) s.view.eps = e;
        }
        ImGui::EndCombo();
    }
    remember_last_item(ctx.widgets, "gradient.eps");
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 12);
    temperature_slider("T", s.view.T, 1e-3, 1e2);  // as far as the curves reach
    remember_last_item(ctx.widgets, "gradient.T");
    ImGui::Separator();

    if (!have_forward) {
        ImGui::TextWrapped("The chosen head needs a model's attention: %s The Softmax playground shows the same on synthetic logits.",
                           s.model ? "waiting for the forward pass." : "load a model (the bar above) and type a text.");
    } else if (!p.ready) {
        ImGui::TextWrapped("%s", p.error.c_str());
    } else if (plot::begin_values_table("##grad_now")) {
        plot::table_row("T (AttnLab's)", "%.4g", s.view.T);
        plot::table_row("the paper's T = T sqrt(d_head)", "%.4g", s.view.T * std::sqrt(static_cast<double>(s.forward->capture.head_dim())));
        plot::table_row("exact ||J||_2", std::isfinite(p.jacobian_now) ? "%.5g" : "not computed", p.jacobian_now);
        plot::table_row("g(T, eps)", "%.5g", p.g_now);
        plot::table_row("softmax: tight bound 1/(2T)", "%.5g", jacobian_bound_tight(s.view.T));
        plot::table_row("(check) paper: min{1/(4T), √2}", "%.5g", jacobian_bound_paper(s.view.T));
        plot::table_row("softmax: tight bound on g", "%.5g", sensitivity_bound_tight(s.view.T, s.view.eps));
        ImGui::EndTable();
        if (p.key.normalizer == "softmax" && std::isfinite(p.jacobian_now) &&
            p.jacobian_now > jacobian_bound_paper(s.view.T) * (1 + 1e-9)) {
            ImGui::PushStyleColor(ImGuiCol_Text, plot::colors::vermillion);
            text_wrapped("||J||_2 exceeds the paper's bound here, by a factor of %.3g.", p.jacobian_now / jacobian_bound_paper(s.view.T));
            ImGui::PopStyleColor();
        }
    }
    ImGui::Spacing();
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetColorU32(ImGuiCol_TextDisabled));
    // The factor is the loaded model's √d_head (8 on GPT-2 small, √32 on AttnLab tiny), not a constant.
    const int d_head = s.model ? s.model->shape.head_dim : 0;
    char factor[64] = "";
    if (d_head > 0)
        std::snprintf(factor, sizeof factor, " = %.4g on this model (d_head = %d)", std::sqrt(static_cast<double>(d_head)), d_head);
    ImGui::TextWrapped(
        "g(T, eps) = ||a(l + eps v) - a(l)|| / eps with a seeded random unit direction v (the paper's Algorithm 5). "
        "(check): the paper's min{1/(4T), √2} is not a bound on ||J||_2: two tied leaders reach 1/(2T), the tight "
        "bound. T = 1 is the model as trained; the paper's T is ours times sqrt(d_head)%s.",
        factor);
    if (!p.note.empty()) ImGui::TextWrapped("%s", p.note.c_str());
    ImGui::PopStyleColor();
    end_pane(panes);
    beside(panes);

    begin_pane(panes, "##grad_plots", 0, false);
    ImVec2 avail = ImGui::GetContentRegionAvail();
    if (panes.stacked) avail.y = stacked_plot_height(panes, avail.x, 0.8f);
    if (p.mode == 1) {
        draw_heads(s, avail);
    } else if (have_forward && p.ready) {
        draw_chosen(p, s, avail);
    } else {
        ImGui::TextWrapped("%s", have_forward ? p.error.c_str() : "No attention yet.");
    }
    remember_last_item(ctx.widgets, "gradient.plot");
    end_pane(panes);
    end_panes(panes);
}

std::string gradient_status_json(const GradientPanel& p, const Session& s) {
    json::ObjectBuilder o;
    o.add("mode", p.mode == 0 ? "chosen" : "max-over-heads");
    o.add("ready", p.ready);
    o.add("T", s.view.T).add("eps", s.view.eps);
    if (p.ready) {
        o.add("layer", p.key.layer).add("head", p.key.head).add("query", p.key.query).add("normalizer", p.key.normalizer);
        o.add("jacobian_norm", p.jacobian_now).add("g", p.g_now);
    }
    o.add("bound_paper", jacobian_bound_paper(s.view.T)).add("bound_tight", jacobian_bound_tight(s.view.T));
    const HeadSummaries* hs = s.summaries.get();
    o.add("summaries_ready", hs && hs->complete);
    return o.str();
}

}  // namespace attnlab
