#include "app/panels/separability_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "analysis/pca.h"
#include "app/panels/query_controls.h"
#include "app/plot/plot.h"
#include "app/work/head_summaries.h"
#include "base/json.h"

namespace attnlab {

namespace {

constexpr double kM = 1.0;  // sphere radius, as the paper's experiments
constexpr int kMaxCurveN = 64;

void update(SeparabilityPanel& p, const Session& s) {
    QuerySlice slice;
    if (!begin_top_n_update(s, p, "Query 0 sees only itself: there is nothing to tell apart. Choose a later query (Attention map).", slice))
        return;
    const int L = slice.query + 1;
    RowMatrixXd unit;
    std::string error;
    if (!normalize_rows(slice.values, kM, unit, error)) {
        p.error = std::string("This head cannot be put on the sphere: ").append(error);
        return;
    }
    // N_s/N against N, plus the view's N.
    std::vector<int> Ns;
    for (int N = 1; N <= std::min(kMaxCurveN, L - 1); ++N) Ns.push_back(N);
    if (p.N_used > kMaxCurveN) Ns.push_back(p.N_used);
    const std::vector<Separability> r = separability(slice.weights, unit, Ns, kM);
    p.Ns.clear();
    p.ratio.clear();
    p.lower.clear();
    p.upper.clear();
    for (const Separability& x : r) {
        p.Ns.push_back(x.N);
        p.ratio.push_back(x.ratio);
        p.lower.push_back(x.lower);
        p.upper.push_back(x.upper);
        if (x.N == p.N_used) p.at_N = x;
    }

    // The picture: u_i = alpha_i xh_i, s = sum of the top N, on the point set's top two axes.
    const Eigen::Map<const Eigen::VectorXd> alpha(slice.weights.data(), L);
    const RowMatrixXd U = alpha.asDiagonal() * unit;  // (L, d)
    const std::vector<int> order = selection_order(slice.weights);
    p.selected.assign(static_cast<size_t>(L), 0);
    Eigen::RowVectorXd sum = Eigen::RowVectorXd::Zero(U.cols());
    for (int k = 0; k < p.N_used; ++k) {
        p.selected[static_cast<size_t>(order[static_cast<size_t>(k)])] = 1;
        sum += U.row(order[static_cast<size_t>(k)]);
    }
    const Pca2 pca = pca2(U);
    p.explained = pca.total_variance > 0 ? (pca.variance[0] + pca.variance[1]) / pca.total_variance : 1.0;
    p.px.resize(static_cast<size_t>(L));
    p.py.resize(static_cast<size_t>(L));
    p.weight.assign(slice.weights.begin(), slice.weights.end());
    p.distance.resize(static_cast<size_t>(L));
    p.distinguishable.assign(static_cast<size_t>(L), 0);
    for (int i = 0; i < L; ++i) {
        const auto xy = project(pca, U.row(i));
        p.px[static_cast<size_t>(i)] = xy[0];
        p.py[static_cast<size_t>(i)] = xy[1];
        p.distance[static_cast<size_t>(i)] = (U.row(i) - sum).norm();
        // The protocol's count: a selected token strictly inside the ball of radius r.
        p.distinguishable[static_cast<size_t>(i)] = p.selected[static_cast<size_t>(i)] && p.distance[static_cast<size_t>(i)] < p.at_N.r;
    }
    const auto sxy = project(pca, sum);
    p.sx = sxy[0];
    p.sy = sxy[1];
    p.ready = true;
    p.error.clear();
}

// A token's bytes made printable for a tooltip.
std::string printable(const Session& s, int id) {
    std::string out;
    if (!s.tokenizer.loaded()) return out.append("#").append(std::to_string(id));
    out = "'";
    for (char c : s.tokenizer.token_bytes(id)) {
        if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else if (static_cast<unsigned char>(c) < 0x20) out += '?';
        else out += c;
    }
    return out.append("'");
}

void draw_geometry(SeparabilityPanel& p, const Session& s, WidgetRects& widgets, ImVec2 size) {
    std::vector<double> xs[4], ys[4];
    std::vector<int> ids[4];  // 0 left out, 1 selected, 2 selected and distinguishable
    for (size_t i = 0; i < p.px.size(); ++i) {
        const int g = !p.selected[i] ? 0 : p.distinguishable[i] ? 2 : 1;
        xs[g].push_back(p.px[i]);
        ys[g].push_back(p.py[i]);
        ids[g].push_back(static_cast<int>(i));
    }
    // Equal scales on both axes, so that the ball's disc stays round. The range fits the points
    // and s: the disc is often larger than the cloud (in 64 dimensions s lies off the plane).
    double lo_x = p.sx, hi_x = p.sx, lo_y = p.sy, hi_y = p.sy;
    for (size_t i = 0; i < p.px.size(); ++i) {
        lo_x = std::min(lo_x, p.px[i]);
        hi_x = std::max(hi_x, p.px[i]);
        lo_y = std::min(lo_y, p.py[i]);
        hi_y = std::max(hi_y, p.py[i]);
    }
    const double half = 0.55 * std::max({hi_x - lo_x, hi_y - lo_y, 1e-12}), cx = 0.5 * (lo_x + hi_x), cy = 0.5 * (lo_y + hi_y);
    const char* labels[3] = {"not selected", "selected (top-N)", "selected, distinguishable"};
    const auto tooltip = [&] {
        for (int g = 0; g < 3; ++g) {
            const int hit = plot::hovered_point(labels[g]);
            if (hit < 0) continue;
            const int i = ids[g][static_cast<size_t>(hit)];
            ImGui::BeginTooltip();
            const int id = s.forward && i < static_cast<int>(s.forward->tokens.size()) ? s.forward->tokens[static_cast<size_t>(i)] : -1;
            ImGui::Text("token %d %s (id %d)", i, printable(s, id).c_str(), id);
            ImGui::Text("weight alpha = %.4g", p.weight[static_cast<size_t>(i)]);
            ImGui::Text("|alpha x - s| = %.4g (r = %.4g)", p.distance[static_cast<size_t>(i)], p.at_N.r);
            ImGui::TextUnformatted(labels[g]);
            ImGui::EndTooltip();
        }
    };
    if (p.picture == 1) {
        // The exact geometry in one picture: every token's distance to s against its weight.
        std::vector<double> wx[3], dy[3];
        for (int g = 0; g < 3; ++g)
            for (int i : ids[g]) {
                wx[g].push_back(p.weight[static_cast<size_t>(i)]);
                dy[g].push_back(p.distance[static_cast<size_t>(i)]);
            }
        double w_lo = 1.0, w_hi = 0.0;
        for (double w : p.weight)
            if (w > 0) w_lo = std::min(w_lo, w), w_hi = std::max(w_hi, w);
        const std::vector<double> rx = {w_lo * 0.5, w_hi * 2.0}, ry(2, p.at_N.r);
        if (!plot::begin("##geometry", size, {"weight alpha_i", plot::Scale::Log}, {"|alpha_i x_i - s|", plot::Scale::Linear},
                         "Distance to s against weight (full space, exact)"))
            return;
        plot::line("radius r", rx, ry, {plot::colors::green, plot::Dash::Dashed, 2.0f});
        plot::scatter(labels[0], wx[0], dy[0], plot::colors::orange, plot::Marker::Triangle, 3.5f);
        plot::scatter(labels[1], wx[1], dy[1], plot::colors::blue, plot::Marker::Circle, 4.0f);
        plot::scatter(labels[2], wx[2], dy[2], plot::colors::blue, plot::Marker::Circle, 4.0f, true);
        plot::end();
        remember_last_item(widgets, "separability.plot");
        tooltip();
        return;
    }
    const float side = std::min(size.x, size.y);
    char title[128];
    std::snprintf(title, sizeof title, "alpha_i x_i, top 2 principal axes (%.0f%% of variance)", 100.0 * p.explained);
    ImGui::SetCursorPosX(ImGui::GetCursorPosX() + 0.5f * (size.x - side));
    if (!plot::begin("##geometry", ImVec2(side, side), {"principal axis 1", plot::Scale::Linear, cx - half, cx + half},
                     {"principal axis 2", plot::Scale::Linear, cy - half, cy + half}, title))
        return;
    char ball[64];
    std::snprintf(ball, sizeof ball, "ball B_r(s), r = %.3g", p.at_N.r);
    plot::circle(ball, p.sx, p.sy, p.at_N.r, plot::colors::green);
    plot::scatter("not selected", xs[0], ys[0], plot::colors::orange, plot::Marker::Triangle, 3.5f);
    plot::scatter("selected (top-N)", xs[1], ys[1], plot::colors::blue, plot::Marker::Circle, 4.0f);
    plot::scatter("selected, distinguishable", xs[2], ys[2], plot::colors::blue, plot::Marker::Circle, 4.0f, true);
    const double sxv[] = {p.sx}, syv[] = {p.sy};
    plot::scatter("context vector s", sxv, syv, plot::colors::vermillion, plot::Marker::Diamond, 6.0f);
    plot::end();
    remember_last_item(widgets, "separability.plot");
    tooltip();
}

void draw_ratio_curve(const SeparabilityPanel& p, ImVec2 size) {
    char title[96];
    std::snprintf(title, sizeof title, "Query %d: share of the top-N that can be told apart", p.key.query);
    if (!plot::begin("##ratio", size, {"selection size N"}, {"N_s / N", plot::Scale::Linear, -0.05, 1.05}, title)) return;
    plot::line("upper bound (R)", p.Ns, p.upper, {plot::colors::green, plot::Dash::Dotted, 2.5f});
    plot::line("lower bound (R)", p.Ns, p.lower, {plot::colors::orange, plot::Dash::Dashed, 2.0f});
    plot::line("N_s / N", p.Ns, p.ratio, {plot::colors::blue, plot::Dash::Solid, 2.0f, p.Ns.size() <= 64});
    plot::vline("view's N", p.N_used);
    plot::end();
}

void draw_boxes(Session& s, WidgetRects& widgets, ImVec2 size) {
    const HeadSummaries* hs = s.summaries.get();
    if (!hs || !hs->complete) {
        draw_summaries_pending(s, "##sep_wait", "Box plots over all heads (the paper's Figure 3)", "the chosen head's view is live", size);
        return;
    }
    std::vector<double> x, lo, q1, med, q3, hi, lower, upper;
    for (size_t k = 0; k < hs->separability_Ns.size(); ++k) {
        std::vector<double> v, vl, vu;
        for (const HeadSummary& h : hs->heads) {
            if (!h.error.empty()) continue;
            v.push_back(h.ratio[k]);
            vl.push_back(h.lower[k]);
            vu.push_back(h.upper[k]);
        }
        const BoxStats b = box_stats(v);
        x.push_back(hs->separability_Ns[k]);
        lo.push_back(b.lo_whisker);
        q1.push_back(b.q1);
        med.push_back(b.median);
        q3.push_back(b.q3);
        hi.push_back(b.hi_whisker);
        lower.push_back(box_stats(vl).mean);
        upper.push_back(box_stats(vu).mean);
    }
    if (x.empty()) return;
    const std::vector<double> band_x = {0.0, x.back() + 1.0}, band_lo(2, 0.70), band_hi(2, 0.85);
    char title[128];
    std::snprintf(title, sizeof title, "All %zu heads: per-head mean N_s/N over %zu queries (softmax, T = 1)", hs->heads.size(),
                  hs->queries.size());
    if (!plot::begin("##sep_boxes", size, {"selection size N", plot::Scale::Linear, 0.0, x.back() + 1.0},
                     {"N_s / N", plot::Scale::Linear, -0.05, 1.05}, title))
        return;
    plot::band("paper's reported range 0.70-0.85", band_x, band_lo, band_hi, plot::colors::yellow);
    plot::boxes("N_s/N over heads", x, lo, q1, med, q3, hi, 0.6, plot::colors::blue);
    plot::line("mean upper bound (R)", x, upper, {plot::colors::green, plot::Dash::Dotted, 2.5f});
    plot::line("mean lower bound (R)", x, lower, {plot::colors::orange, plot::Dash::Dashed, 2.0f});
    plot::vline("view's N", s.view.N);
    plot::end();
    remember_last_item(widgets, "separability.boxes");
}

}  // namespace

void draw_separability_panel(SeparabilityPanel& p, PanelContext& ctx) {
    Session& s = ctx.session;
    if (!draw_needs_attention(s, "Separability (Theorem 2)",
                              "It counts how many of a head's top-N tokens lie closer to their aggregate s than any token "
                              "it left out, i.e. how many it can tell apart."))
        return;
    update(p, s);

    const Panes panes = begin_panes("##sep_panes", kControlsEm, 30.0f);
    begin_top_n_controls(panes, s, ctx.widgets, p, "##sep_controls", "Theorem 2: which of the top-N tokens a head can tell apart.",
                         "separability.N");
    ImGui::RadioButton("PCA plane", &p.picture, 0);
    remember_last_item(ctx.widgets, "separability.picture_pca");
    ImGui::SameLine();
    ImGui::RadioButton("distance vs weight", &p.picture, 1);
    remember_last_item(ctx.widgets, "separability.picture_distance");
    if (draw_why_or_lowered_n(p, s)) {
        const Separability& r = p.at_N;
        if (plot::begin_values_table("##sep_now")) {
            plot::table_row("N", "%d", r.N);
            plot::table_row("radius r", "%.4g", r.r);
            plot::table_row("distinguishable N_s", "%d", r.N_s);
            plot::table_row("N_s / N", "%.3f", r.ratio);
            plot::table_row("lower bound (R)", std::isfinite(r.lower) ? "%.3f" : "undefined (r = 0)", r.lower);
            plot::table_row("upper bound (R)", "%.3f", r.upper);
            plot::table_row("delta (min pair distance)", r.N >= 2 ? "%.4g" : "- (one token)", r.delta);
            ImGui::EndTable();
        }
    }
    end_top_n_controls(panes,
                       "x_i: the head's value vectors, scaled onto the unit sphere (M = 1). r: the distance from s to the nearest token "
                       "left out; a selected token counts when strictly closer (the paper's Algorithm 4). The ball projects onto a disc "
                       "of the same radius: a token inside the ball is inside the disc, but a point in the disc may lie outside the "
                       "ball. (R): reconstructed bounds.");

    begin_pane(panes, "##sep_plots", 0, false);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float sp = ImGui::GetStyle().ItemSpacing.x;
    if (panes.stacked) {  // one under the other, the picture square
        const float h = stacked_plot_height(panes, avail.x);
        if (p.ready) {
            draw_geometry(p, s, ctx.widgets, ImVec2(avail.x, stacked_plot_height(panes, avail.x, 1.0f)));
            draw_ratio_curve(p, ImVec2(avail.x, h));
            remember_last_item(ctx.widgets, "separability.ratio");
        }
        draw_boxes(s, ctx.widgets, ImVec2(avail.x, h));
        end_pane(panes);
        end_panes(panes);
        return;
    }
    const float left_w = std::min(avail.x * 0.5f, avail.y * 0.62f), right_w = avail.x - left_w - sp;
    if (p.ready) {
        ImGui::BeginGroup();
        draw_geometry(p, s, ctx.widgets, ImVec2(left_w, avail.y * 0.62f));
        ImGui::EndGroup();
        ImGui::SameLine();
        draw_ratio_curve(p, ImVec2(right_w, avail.y * 0.62f));
        remember_last_item(ctx.widgets, "separability.ratio");
    } else {
        ImGui::Dummy(ImVec2(avail.x, avail.y * 0.62f));
    }
    draw_boxes(s, ctx.widgets, ImVec2(avail.x, 0));
    end_pane(panes);
    end_panes(panes);
}

std::string separability_status_json(const SeparabilityPanel& p, const Session& s) {
    json::ObjectBuilder o;
    o.add("ready", p.ready);
    if (p.ready) {
        const Separability& r = p.at_N;
        o.add("layer", p.key.layer).add("head", p.key.head).add("query", p.key.query).add("N", r.N);
        o.add("r", r.r).add("N_s", r.N_s).add("ratio", r.ratio).add("lower", r.lower).add("upper", r.upper).add("delta", r.delta);
        o.add("explained_variance", p.explained);
    } else {
        o.add("reason", p.error);
    }
    const HeadSummaries* hs = s.summaries.get();
    o.add("summaries_ready", hs && hs->complete);
    return o.str();
}

}  // namespace attnlab
