#include "app/panels/distance_panel.h"

#include <imgui.h>

#include "app/work/head_summaries.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "analysis/softmax_sweeps.h"
#include "app/panels/query_controls.h"
#include "app/plot/plot.h"
#include "base/json.h"
#include "base/random.h"
#include "base/timing.h"

namespace attnlab {

namespace {

constexpr int kSamples = 16;      // Monte Carlo subsets per point for E[d]
constexpr int kCurvePoints = 32;  // points of a curve once its range is too long for every integer
constexpr std::uint64_t kSeed = 0;

// Every integer of lo..hi when there are at most 100, else kCurvePoints spread in log; plus `must`.
std::vector<int> curve_grid(int lo, int hi, int must) {
    std::vector<int> g;
    if (hi - lo + 1 <= 100)
        for (int v = lo; v <= hi; ++v) g.push_back(v);
    else g = log_grid_int(lo, hi, kCurvePoints);
    g.push_back(must);
    std::sort(g.begin(), g.end());
    g.erase(std::unique(g.begin(), g.end()), g.end());
    return g;
}

void keep_head(DistancePanel& p, const Session& s, int layer, int head) {
    if (p.head_pass.lock() == s.forward && p.head_layer == layer && p.head_head == head) return;
    p.vectors = head_vectors(*s.forward, layer, head);
    // (T, T) up to kWholeGramTokens; beyond it each curve point reads the rows it needs.
    if (p.vectors.tokens <= kWholeGramTokens) p.gram.noalias() = p.vectors.values * p.vectors.values.transpose();
    else p.gram.resize(0, 0);
    p.head_pass = s.forward;
    p.head_layer = layer;
    p.head_head = head;
}

// Recomputes the chosen query's curves when what they depend on changed.
void update(DistancePanel& p, const Session& s) {
    const auto start = SteadyClock::now();
    QuerySlice slice;
    if (!begin_top_n_update(s, p, "Query 0 sees only itself: there is nothing left out to measure. Choose a later query (Attention map).",
                            slice))
        return;
    const int L = slice.query + 1;
    keep_head(p, s, slice.layer, slice.head);
    const auto after_gram = SteadyClock::now();
    const int n_head = s.forward->capture.n_head();
    const auto index = static_cast<std::uint64_t>(slice.layer * n_head + slice.head);

    // Against N, for the chosen query.
    const std::vector<int> Ns = curve_grid(1, L - 1, p.N_used);
    DistanceOptions options;
    options.samples = kSamples;
    options.seed = derive_seed(kSeed, index, static_cast<std::uint64_t>(slice.query), 11);
    const auto gram_of = [&](const auto& x) { return p.gram.rows() > 0 ? GramRows(p.gram) : GramRows::computed_from(x); };
    {
        const GramRows rows = gram_of(slice.values);
        p.by_N = selection_distances(slice.weights, slice.values, Ns, options, &rows);
    }
    p.Ns.assign(Ns.begin(), Ns.end());
    p.at_N = p.by_N[static_cast<size_t>(std::find(Ns.begin(), Ns.end(), p.N_used) - Ns.begin())];
    p.sum_norms = sum_weighted_norms(slice.weights, slice.values);

    // Against the context length: prefixes of the text, each with its own last token as the
    // query (position t sees L = t + 1 tokens), the same head, N and normalizer.
    const int T_text = p.vectors.tokens;
    const std::vector<int> ts = curve_grid(p.N_used, T_text - 1, slice.query);
    p.Ls.clear();
    p.by_L.clear();
    const int one_N[] = {p.N_used};
    for (int t : ts) {
        const std::vector<double> w = normalize(slice.normalizer, p.vectors.logits(t), slice.T);
        options.seed = derive_seed(kSeed, index, static_cast<std::uint64_t>(t), 12);
        const auto x = p.vectors.values.topRows(t + 1);
        const GramRows rows = gram_of(x);
        p.by_L.push_back(selection_distances(w, x, one_N, options, &rows)[0]);
        p.Ls.push_back(t + 1.0);
    }
    p.ready = true;
    p.error.clear();
    p.compute_ms = ms_since(start);
    p.gram_ms = std::chrono::duration<double, std::milli>(after_gram - start).count();
}

// The series of one reading, (A) or (B), from a list of results.
struct Curves {
    std::vector<double> d, bound, expected, lo, hi, approx;
};
Curves curves(const std::vector<SelectionDistance>& r, int reading) {
    Curves c;
    for (const SelectionDistance& x : r) {
        const double e = reading ? x.expected_B : x.expected_A, se = reading ? x.expected_B_se : x.expected_A_se;
        c.d.push_back(reading ? x.d_B : x.d_A);
        c.bound.push_back(reading ? x.bound_B : x.bound_A);
        c.expected.push_back(e);
        c.lo.push_back(e - se);
        c.hi.push_back(e + se);
        c.approx.push_back(x.approx_A);
    }
    return c;
}

void draw_curves(const char* id, const char* title, const char* x_label, const std::vector<double>& x,
                 const std::vector<SelectionDistance>& r, int reading, double marker, const char* marker_label, ImVec2 size) {
    const Curves c = curves(r, reading);
    const bool log_x = !x.empty() && x.back() > 100;
    if (!plot::begin(id, size, {x_label, log_x ? plot::Scale::Log : plot::Scale::Linear}, {"distance", plot::Scale::Log, {}, {}, 6.0},
                     title))
        return;
    plot::band(reading ? "E[d_B] ± 1 s.e. (random N-subset)" : "E[d_A] ± 1 s.e. (random N-subset)", x, c.lo, c.hi, plot::colors::sky);
    plot::line(reading ? "E[d_B]" : "E[d_A]", x, c.expected, {plot::colors::sky, plot::Dash::Solid, 1.5f});
    if (!reading) plot::line("E[d_A] paper's main term (R)", x, c.approx, {plot::colors::purple, plot::Dash::Dotted, 2.0f});
    plot::line(reading ? "bound_B (R)" : "bound_A (R)", x, c.bound, {plot::colors::orange, plot::Dash::Dashed, 2.0f});
    plot::line(reading ? "d_B top-N" : "d_A top-N", x, c.d, {plot::colors::blue, plot::Dash::Solid, 2.0f});
    plot::vline(marker_label, marker);
    plot::end();
}

void draw_table(const DistancePanel& p) {
    const SelectionDistance& r = p.at_N;
    const auto row = [](const char* name, const char* tip, const char* fmt, auto... values) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::PushTextWrapPos(0.0f);  // the column's edge
        ImGui::TextUnformatted(name);
        ImGui::PopTextWrapPos();
        if (tip && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
        ImGui::TableNextColumn();
        ImGui::PushTextWrapPos(-1.0f);  // a value keeps to one line
        ImGui::Text(fmt, values...);
        ImGui::PopTextWrapPos();
    };
    if (!plot::begin_values_table("##distance_now")) return;
    row("weight selected abar_N", "sum of the top-N weights", "%.4g", r.abar);
    row("d_A (sum of norms)", "sum over left-out i of |alpha_i x_i - s|", "%.4g", r.d_A);
    row("bound_A (R)", "(1 - abar) d_1 + X (abar (L - N) - (1 - abar)), reconstructed", "%.4g", r.bound_A);
    row("E[d_A] random", "mean over 16 seeded random N-subsets, ± its standard error", "%.4g ± %.2g", r.expected_A, r.expected_A_se);
    row("paper's E[d_A] term (R)", "((L-N)/L) sum_i |y_i - (N/(L-1)) sum_{j!=i} y_j|: underestimates for N << L", "%.4g", r.approx_A);
    row("d_B (norm of the sum)", "|sum over left-out i of alpha_i x_i - s|", "%.4g", r.d_B);
    row("bound_B (R)", "(1 - abar) d_1 + X |1 - 2 abar|, reconstructed", "%.4g", r.bound_B);
    row("E[d_B] random", nullptr, "%.4g ± %.2g", r.expected_B, r.expected_B_se);
    row("d_1", "largest distance between a selected and a left-out vector", "%.4g", r.d_1);
    row("X", "largest norm of a selected vector", "%.4g", r.X);
    row("sum |alpha_i x_i|", "Corollary 2: what E[d] approaches as L grows with N fixed", "%.4g", p.sum_norms);
    ImGui::EndTable();
}

// The all-heads summary: per-head means against N as boxes over heads, and the KS test, each
// `pair.w` x `plot_h` px, side by side or one above the other.
void draw_summary(DistancePanel& p, Session& s, WidgetRects& widgets, const PlotPair& pair, float plot_h) {
    const HeadSummaries* hs = s.summaries.get();
    if (!hs || !hs->complete) {
        draw_summaries_pending(s, "##summary_wait", "Summary over all heads",
                               "every head, a sample of queries; the chosen head above is live",
                               ImVec2(ImGui::GetContentRegionAvail().x, plot_h));
        return;
    }
    const int reading = p.reading;
    std::vector<double> x_d, x_e, lo[2], q1[2], med[2], q3[2], hi[2];
    for (size_t k = 0; k < hs->distance_Ns.size(); ++k) {
        for (int which = 0; which < 2; ++which) {
            std::vector<double> v;
            for (const HeadSummary& h : hs->heads) {
                if (!h.error.empty()) continue;
                v.push_back(which == 0 ? (reading ? h.d_B[k] : h.d_A[k]) : (reading ? h.expected_B[k] : h.expected_A[k]));
            }
            const BoxStats b = box_stats(v);
            lo[which].push_back(b.lo_whisker);
            q1[which].push_back(b.q1);
            med[which].push_back(b.median);
            q3[which].push_back(b.q3);
            hi[which].push_back(b.hi_whisker);
        }
        x_d.push_back(hs->distance_Ns[k] * 0.94);
        x_e.push_back(hs->distance_Ns[k] / 0.94);
    }
    const ImVec2 size(pair.w, plot_h);
    char title[128];
    std::snprintf(title, sizeof title, "All %zu heads: per-head mean over %zu queries", hs->heads.size(), hs->queries.size());
    if (plot::begin("##summary_boxes", size, {"selection size N", plot::Scale::Log, 0.7, hs->distance_Ns.back() * 1.4},
                    {reading ? "mean d_B" : "mean d_A", plot::Scale::Log, {}, {}, 6.0}, title)) {
        plot::boxes(reading ? "d_B top-N" : "d_A top-N", x_d, lo[0], q1[0], med[0], q3[0], hi[0], 1.06, plot::colors::blue);
        plot::boxes(reading ? "E[d_B] random" : "E[d_A] random", x_e, lo[1], q1[1], med[1], q3[1], hi[1], 1.06, plot::colors::orange);
        plot::vline("view's N", s.view.N);
        if (hs->critical.N_star) plot::vline("N* (KS)", hs->critical.N_star, {plot::colors::vermillion, plot::Dash::Dotted, 2.0f});
        plot::end();
    }
    remember_last_item(widgets, "distance.summary");
    if (pair.side_by_side) ImGui::SameLine();
    std::vector<double> ks_N, ks_p;
    for (const CriticalNScan& c : hs->critical.scan) {
        ks_N.push_back(c.N);
        ks_p.push_back(std::max(c.ks.p_value, 1e-300));
    }
    const std::vector<double> level_x = {0.7, hs->distance_Ns.back() * 1.4}, level_y(2, hs->ks_level);
    if (plot::begin("##ks", size, {"selection size N", plot::Scale::Log, 0.7, hs->distance_Ns.back() * 1.4},
                    {"KS p-value", plot::Scale::Log, {}, 1.5, 12.0}, "d_A vs E[d_A] across heads: two-sample KS test")) {
        plot::line("level 0.01", level_x, level_y, {plot::colors::grey, plot::Dash::Dashed, 1.5f});
        plot::line("p-value", ks_N, ks_p, {plot::colors::blue, plot::Dash::Solid, 2.0f, true});
        if (hs->critical.N_star) plot::vline("N*", hs->critical.N_star, {plot::colors::vermillion, plot::Dash::Dotted, 2.0f});
        plot::end();
    }
    remember_last_item(widgets, "distance.ks");
}

// The footnote's account of what the summary read: the weights each head ran in its pass (the
// model as trained, or changed by a plan; softmax on tiny, SSMax on its twin) and the N grid,
// both from the data, so that the words cannot drift from what was computed.
std::string summary_footnote(const HeadSummaries& hs, const AttentionPlan& trained) {
    const ForwardResult* pass = hs.source;
    std::string out = "each head's weights as this pass ran them: ";
    if (pass && pass->plan.n_layer() > 0) {
        const AttentionPlan& plan = pass->plan;
        bool uniform = true, as_trained = true;
        for (int l = 0; l < plan.n_layer(); ++l)
            for (int h = 0; h < plan.n_head(); ++h) {
                uniform = uniform && plan.at(l, h) == plan.at(0, 0);
                as_trained = as_trained && plan.n_layer() == trained.n_layer() && plan.n_head() == trained.n_head() &&
                             plan.at(l, h) == trained.at(l, h);
            }
        const HeadPlan& first = plan.at(0, 0);
        if (uniform) {
            out += normalizer_spec(first.normalizer);
            char t[32];
            std::snprintf(t, sizeof t, " at T = %.3g in every head", static_cast<double>(first.temperature));
            out += t;
        } else {
            out += "each head's own setting";
        }
        out += as_trained ? " (the model as trained)" : " (the model as the plan changes it; see Model changes)";
    }
    return out + "; " + n_grid_in_words(hs.distance_Ns);
}

// Keeps the footnote's words for the summaries on show: rebuilt when a new summary arrives.
void keep_summary_footnote(DistancePanel& p, const Session& s) {
    const HeadSummaries* hs = s.summaries.get();
    if (!hs || !hs->complete || !s.model) return;
    // Same pass (owner): the weak_ptr held here keeps its control block, so no new pass shares it.
    if (!p.summary_footnote_pass.owner_before(hs->pass) && !hs->pass.owner_before(p.summary_footnote_pass) && !p.summary_footnote.empty())
        return;
    p.summary_footnote_pass = hs->pass;
    p.summary_footnote = summary_footnote(*hs, s.model->model->trained_plan());
}

// The all-heads numbers in words: the spread of per-head means at the view's N, and N*.
void draw_summary_text(const DistancePanel& p, const Session& s) {
    const HeadSummaries* hs = s.summaries.get();
    if (!hs || !hs->complete || hs->distance_Ns.empty()) return;
    ImGui::Separator();
    const size_t k = nearest_index(hs->distance_Ns, s.view.N);
    std::vector<double> d, e;
    for (const HeadSummary& h : hs->heads) {
        if (!h.error.empty()) continue;
        d.push_back(p.reading ? h.d_B[k] : h.d_A[k]);
        e.push_back(p.reading ? h.expected_B[k] : h.expected_A[k]);
    }
    const BoxStats bd = box_stats(d), be = box_stats(e);
    ImGui::TextDisabled("All %zu heads at N = %d%s", hs->heads.size(), hs->distance_Ns[k],
                        hs->distance_Ns[k] == s.view.N ? "" : " (nearest computed)");
    text_wrapped("per-head mean %s: median %.3g, quartiles %.3g to %.3g", p.reading ? "d_B" : "d_A", bd.median, bd.q1, bd.q3);
    text_wrapped("per-head mean E[%s]: median %.3g, quartiles %.3g to %.3g", p.reading ? "d_B" : "d_A", be.median, be.q1, be.q3);
    const CriticalN& c = hs->critical;
    if (c.N_star)
        ImGui::TextWrapped(
            "Critical N* = %d (KS p = %.3g, D = %.3g): the smallest N at which the per-head mean d_A can no "
            "longer be told from the per-head mean E[d_A] at level %.2g. The paper finds N* ~ 0.06 L (%.1f here).",
            c.N_star, c.at_star.p_value, c.at_star.statistic, hs->ks_level, 0.06 * hs->tokens);
    else ImGui::TextWrapped("The KS test rejects at every N up to %d: no critical N in this range.", hs->distance_Ns.back());
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetColorU32(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("Over %zu evenly spaced queries per head, %d random subsets each, %s. %s", hs->queries.size(), hs->samples,
                       p.summary_footnote.c_str(), hs->error.c_str());
    ImGui::PopStyleColor();
}

}  // namespace

void draw_distance_panel(DistancePanel& p, PanelContext& ctx) {
    Session& s = ctx.session;
    if (!draw_needs_attention(s, "Selection distance (Theorem 1)",
                              "It measures how far the tokens a head does not select lie from the aggregate s of its "
                              "top-N selection, and compares that with a random selection of the same size."))
        return;
    update(p, s);

    const Panes panes = begin_panes("##distance_panes", kControlsEm, 30.0f);
    begin_top_n_controls(panes, s, ctx.widgets, p, "##distance_controls",
                         "Theorem 1: how far the tokens a head leaves out lie from what it selects.", "distance.N");
    ImGui::RadioButton("(A) sum of norms", &p.reading, 0);
    remember_last_item(ctx.widgets, "distance.reading_A");
    ImGui::RadioButton("(B) norm of the sum", &p.reading, 1);
    remember_last_item(ctx.widgets, "distance.reading_B");
    if (draw_why_or_lowered_n(p, s)) {
        ImGui::TextDisabled("At N = %d, L = %d tokens seen", p.N_used, p.key.query + 1);
        draw_table(p);
    }
    keep_summary_footnote(p, s);
    draw_summary_text(p, s);
    char note[256];
    std::snprintf(note, sizeof note,
                  "x_i are the head's value vectors. (R): reconstructed from the paper's proofs (its printed bound could not be "
                  "read in full). E[d]: %d seeded random N-subsets per point.",
                  kSamples);
    end_top_n_controls(panes, note);

    begin_pane(panes, "##distance_plots", 0, false);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float sp = ImGui::GetStyle().ItemSpacing.y;
    const PlotPair pair = plot_pair(avail.x);
    const float rows = pair.side_by_side ? 2.0f : 4.0f, w = pair.w;
    const float h = panes.stacked ? stacked_plot_height(panes, w) : (avail.y - sp * (rows - 1.0f)) / rows;
    if (p.ready) {
        char title[128];
        std::snprintf(title, sizeof title, "Query %d (L = %d): distance against N", p.key.query, p.key.query + 1);
        draw_curves("##by_N", title, "selection size N", p.Ns, p.by_N, p.reading, p.N_used, "view's N", ImVec2(w, h));
        remember_last_item(ctx.widgets, "distance.plot_N");
        if (pair.side_by_side) ImGui::SameLine();
        std::snprintf(title, sizeof title, "Prefixes of the text, last token as query, N = %d", p.N_used);
        draw_curves("##by_L", title, "context length L (tokens seen)", p.Ls, p.by_L, p.reading, p.key.query + 1, "chosen query",
                    ImVec2(w, h));
        remember_last_item(ctx.widgets, "distance.plot_L");
    } else {
        ImGui::Dummy(ImVec2(avail.x, pair.side_by_side ? h : 2.0f * h + sp));
    }
    draw_summary(p, s, ctx.widgets, pair, h);
    end_pane(panes);
    end_panes(panes);
}

std::string distance_status_json(const DistancePanel& p, const Session& s) {
    json::ObjectBuilder o;
    o.add("ready", p.ready);
    if (p.ready) {
        const SelectionDistance& r = p.at_N;
        o.add("layer", p.key.layer).add("head", p.key.head).add("query", p.key.query).add("N", p.N_used);
        o.add("abar", r.abar).add("d_A", r.d_A).add("d_B", r.d_B).add("bound_A", r.bound_A).add("bound_B", r.bound_B);
        o.add("expected_A", r.expected_A).add("expected_A_se", r.expected_A_se).add("expected_B", r.expected_B);
        o.add("approx_A", r.approx_A).add("points_N", static_cast<int>(p.by_N.size())).add("points_L", static_cast<int>(p.by_L.size()));
        o.add("compute_ms", p.compute_ms).add("gram_ms", p.gram_ms);
    } else {
        o.add("reason", p.error);
    }
    const HeadSummaries* hs = s.summaries.get();
    const bool done = hs && hs->complete;
    o.add("summaries_ready", done);
    if (done) {
        o.add("N_star", hs->critical.N_star);
        o.add("N_star_p", hs->critical.N_star ? hs->critical.at_star.p_value : std::nan(""));
        // The same in words, for a tour's caption: a caption cannot choose between the two cases.
        char reading[160];
        if (hs->critical.N_star)
            std::snprintf(reading, sizeof reading, "N* = %d (KS p = %.2g)", hs->critical.N_star, hs->critical.at_star.p_value);
        else
            std::snprintf(reading, sizeof reading, "no N* up to N = %d: every N tested is told apart from a random selection",
                          hs->critical.scan.empty() ? 0 : hs->critical.scan.back().N);
        o.add("N_star_reading", reading);
        if (s.model) o.add("summary_footnote", summary_footnote(*hs, s.model->model->trained_plan()));  // the panel's words
        o.add("summary_queries", static_cast<int>(hs->queries.size()));
        o.add("summary_seconds", hs->seconds);
    }
    return o.str();
}

// "N searched on 1..16, then 20, 24, ... up to 128 (N* above 16 is exact to the grid step)".
std::string n_grid_in_words(const std::vector<int>& Ns) {
    size_t run = 1;  // the first gap: every N before it is searched
    while (run < Ns.size() && Ns[run] == Ns[run - 1] + 1) ++run;
    char grid[160] = "";
    if (run + 1 < Ns.size())
        std::snprintf(grid, sizeof grid, "N searched on %d..%d, then %d, %d, ... up to %d (N* above %d is exact to the grid step)", Ns[0],
                      Ns[run - 1], Ns[run], Ns[run + 1], Ns.back(), Ns[run - 1]);
    else if (!Ns.empty()) std::snprintf(grid, sizeof grid, "N searched on %d..%d", Ns[0], Ns.back());
    return grid;
}

}  // namespace attnlab
