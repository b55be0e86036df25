#include "app/panels/head_grid.h"

#include <imgui.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "app/panels/pane_layout.h"
#include "app/plot/plot.h"
#include "base/json.h"

namespace attnlab {

namespace {

// How the grid shows each pattern. Each tag sits in the upper-right corner, the causal map's
// empty triangle, so that it hides no weight; the induction tag under the previous-token one.
struct PatternStyle {
    const char* tag;     // drawn on the thumbnail
    const char* name;    // "previous-token"
    const char* where;   // where the weight goes, for the legend
    const char* status;  // status().attention's key
    double threshold;
    ImU32 color;
    float inset;       // the outline's distance from the thumbnail's edge, in pixels
    const char* none;  // the legend when no head has a score
};
const ByPattern<PatternStyle> kStyles = {
    {"prev", "previous-token", "on the token just before", "previous_token", kPreviousTokenThreshold, plot::colors::green, 1.0f,
     " A single token has no previous token."},
    {"ind", "induction", "on the token that followed the current token's first occurrence", "induction", kInductionThreshold,
     plot::colors::purple, 3.5f, " No token occurs twice in this text."},
};

// A head the model changes: blue, a colour no pattern mark uses (issue 35: it was the induction
// mark's purple, so after "Apply" every thumbnail looked induction-marked).
constexpr ImU32 kChangedColor = plot::colors::blue;
constexpr const char* kChangedTag = "chg";

// Its mark: a tag left of the pattern tags, in the causal map's empty upper-right triangle, so it
// hides no weight (an inner frame cut across the map); a small triangle when the tag does not fit.
void draw_changed_mark(ImDrawList* dl, ImVec2 a, ImVec2 b) {
    const float w = b.x - a.x, size = ImGui::GetFontSize() * 0.75f;
    const ImVec2 text = ImGui::GetFont()->CalcTextSizeA(size, w, 0.0f, "prev");
    if ((text.x + 4) * 2 <= w * 0.75f && (text.y + 2) * 2 <= w * 0.45f) {
        const ImVec2 t0(b.x - 2 * (text.x + 4) - 2, a.y + 1);
        dl->AddRectFilled(t0, ImVec2(t0.x + text.x + 4, t0.y + text.y + 1), kChangedColor);
        dl->AddText(ImGui::GetFont(), size, ImVec2(t0.x + 1.5f, t0.y + 0.5f), IM_COL32(255, 255, 255, 255), kChangedTag);
    } else {
        const float s = std::max(4.0f, w * 0.22f), x = b.x - 1 - s * 1.2f;
        dl->AddTriangleFilled(ImVec2(x - s, a.y + 1), ImVec2(x, a.y + 1), ImVec2(x, a.y + 1 + s), kChangedColor);
    }
}

// The legend's line for it, when a head is changed.
void draw_changed_legend(int changed) {
    if (changed == 0) return;
    const float size = ImGui::GetFontSize();
    const ImVec2 at = ImGui::GetCursorScreenPos(), tag = ImGui::CalcTextSize("prev");
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(at, ImVec2(at.x + tag.x + 6, at.y + size), kChangedColor);
    dl->AddText(ImVec2(at.x + 3, at.y), IM_COL32(255, 255, 255, 255), kChangedTag);
    ImGui::Dummy(ImVec2(tag.x + 6, size));
    ImGui::SameLine();
    text_wrapped(" changed head: it runs under the model changes, not as trained (%d head%s).", changed, changed == 1 ? "" : "s");
}

// A mark: an outline (the second pattern's inside the first's) and a tag, or a small triangle
// when the tag does not fit the thumbnail.
void draw_mark(ImDrawList* dl, ImVec2 a, ImVec2 b, HeadPattern pattern) {
    const PatternStyle& p = kStyles[pattern];
    const float w = b.x - a.x, size = ImGui::GetFontSize() * 0.75f, inset = p.inset;
    const float row = pattern == HeadPattern::PreviousToken ? 0.0f : 1.0f;  // the tag's row in the corner
    dl->AddRect(ImVec2(a.x + inset, a.y + inset), ImVec2(b.x - inset, b.y - inset), p.color, 0, 0, 2.0f);
    const ImVec2 text = ImGui::GetFont()->CalcTextSizeA(size, w, 0.0f, "prev");  // both tags in the width of the longer
    if (text.x + 4 <= w * 0.6f && (text.y + 2) * 2 <= w * 0.45f) {
        const float y = a.y + 1 + row * (text.y + 2);
        const ImVec2 t0(b.x - text.x - 4, y);
        dl->AddRectFilled(t0, ImVec2(b.x - 1, y + text.y + 1), p.color);
        dl->AddText(ImGui::GetFont(), size, ImVec2(t0.x + 1.5f, t0.y + 0.5f), plot::colors::black, p.tag);
    } else {
        const float s = std::max(4.0f, w * 0.22f), y = a.y + 1 + row * s;
        dl->AddTriangleFilled(ImVec2(b.x - 1 - s, y + s * 0.5f), ImVec2(b.x - 1, y), ImVec2(b.x - 1, y + s), p.color);
    }
}

// The legend under the grid: one line a pattern, with its tag, and which heads were marked (or
// the best one when none was).
void draw_legend(const HeadGrid& g, const AttentionThumbnails& t) {
    for (HeadPattern k : kHeadPatterns) {
        const PatternStyle& p = kStyles[k];
        const float size = ImGui::GetFontSize();
        const ImVec2 at = ImGui::GetCursorScreenPos();
        const ImVec2 tag = ImGui::CalcTextSize("prev");
        ImDrawList* dl = ImGui::GetWindowDrawList();
        dl->AddRectFilled(at, ImVec2(at.x + tag.x + 6, at.y + size), p.color);
        dl->AddText(ImVec2(at.x + 3, at.y), plot::colors::black, p.tag);
        ImGui::Dummy(ImVec2(tag.x + 6, size));
        ImGui::SameLine();
        char rule[64];
        std::snprintf(rule, sizeof rule, " head: more than %.2g of its weight, on average, ", p.threshold);
        std::string line = std::string(p.name) + rule + p.where + ".";
        const std::vector<double>& v = t.scores[k];
        if (!g.marked[k].empty()) {
            line += " Marked:";
            for (const HeadGrid::Mark& m : g.marked[k]) {
                char item[48];
                std::snprintf(item, sizeof item, "%s L%d H%d (%.2f)", &m == &g.marked[k].front() ? "" : ",", m.layer, m.head, m.weight);
                line.append(item);
            }
        } else if (const int best = best_head(t, k); best >= 0) {
            char item[96];
            std::snprintf(item, sizeof item, " None here (highest: L%d H%d, %.2f; uniform attention: %.2f).", best / t.heads,
                          best % t.heads, v[static_cast<size_t>(best)], t.uniform[k]);
            line += item;
        } else {
            line += p.none;
        }
        text_wrapped("%s", line.c_str());
    }
}

// The summaries a cell can be coloured by, each in [0, 1]: the grid's two pattern scores, and
// the last query's largest weight (the Fading panel's last point: near 1/L for a head that has
// faded, near 1 for one that still finds one key).
struct Summary {
    const char* name;   // in the selector and the status
    const char* shown;  // the tooltip's line
};
constexpr Summary kSummaries[] = {
    {"induction score", "induction score"},
    {"previous-token weight", "mean weight on the previous token"},
    {"largest weight, last query", "last query's largest weight"},
};

double summary_value(const AttentionThumbnails& t, int summary, size_t index) {
    switch (summary) {
        case 0: return t.scores.induction[index];
        case 1: return t.scores.previous_token[index];
        default: return t.L > 0 ? static_cast<double>(t.largest[index * static_cast<size_t>(t.L) + static_cast<size_t>(t.L - 1)]) : NAN;
    }
}

bool summary_cells(const HeadGrid& g, int layers, int heads) {
    return g.cells == HeadGrid::Cells::Summary || (g.cells == HeadGrid::Cells::Auto && layers * heads > kThumbnailHeads);
}

// The selector over the grid: thumbnails or a summary, and which.
void draw_cell_choice(HeadGrid& g, PanelContext& ctx, int layers, int heads) {
    int mode = summary_cells(g, layers, heads) ? 1 + g.summary : 0;
    const char* names[1 + std::size(kSummaries)] = {"thumbnails"};
    for (size_t i = 0; i < std::size(kSummaries); ++i) names[i + 1] = kSummaries[i].name;
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 13);
    if (ImGui::Combo("cells##grid", &mode, names, static_cast<int>(std::size(names)))) {
        g.cells = mode == 0 ? HeadGrid::Cells::Thumbnails : HeadGrid::Cells::Summary;
        if (mode > 0) g.summary = mode - 1;
    }
    remember_last_item(ctx.widgets, "attention.grid.cells");
}

std::string hex_colour(ImU32 c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<unsigned>((c >> IM_COL32_R_SHIFT) & 0xFF),
                  static_cast<unsigned>((c >> IM_COL32_G_SHIFT) & 0xFF), static_cast<unsigned>((c >> IM_COL32_B_SHIFT) & 0xFF));
    return buf;
}

// One pattern's status: every head's score, the best head, and the marks the grid drew in the
// last frame (none when it was not drawn then, or for other thumbnails).
std::string pattern_json(const HeadGrid& g, const AttentionThumbnails& t, HeadPattern k) {
    const PatternStyle& p = kStyles[k];
    const std::vector<double>& v = t.scores[k];
    json::ObjectBuilder o;
    o.add("threshold", p.threshold);
    o.add("uniform", t.uniform[k]);
    json::ArrayBuilder weights;
    for (int l = 0; l < t.layers; ++l) {
        json::ArrayBuilder row;
        for (int h = 0; h < t.heads; ++h) row.add(v[static_cast<size_t>(l * t.heads + h)]);
        weights.add_raw(row.str());
    }
    o.add_raw("weights", weights.str());
    const int best = best_head(t, k);
    if (best >= 0) {
        json::ObjectBuilder b;
        b.add("layer", best / t.heads).add("head", best % t.heads).add("weight", v[static_cast<size_t>(best)]);
        o.add_raw("best", b.str());
    } else {
        o.add_raw("best", "null");
    }
    const bool drawn = g.marked_for.lock() == g.thumbnails.done && ImGui::GetCurrentContext() && g.marked_frame == ImGui::GetFrameCount();
    json::ArrayBuilder marked;
    if (drawn)
        for (const HeadGrid::Mark& m : g.marked[k]) {
            json::ObjectBuilder mo;
            mo.add("layer", m.layer).add("head", m.head).add("weight", m.weight);
            marked.add_raw(mo.str());
        }
    o.add_raw("marked", marked.str());
    return o.str();
}

}  // namespace

void draw_head_grid(HeadGrid& g, PanelContext& ctx, float width) {
    Session& s = ctx.session;
    const AttentionCapture& cap = s.forward->capture;
    const int layers = cap.layers(), heads = cap.n_head();
    const float font = ImGui::GetFontSize(), label_w = font * 2.2f, gap = std::max(2.0f, font * 0.15f);
    const bool summary = summary_cells(g, layers, heads);
    // Summary cells may shrink to 0.9 font sizes (16 heads across a 390-pixel phone).
    const float thumb = std::clamp((width - label_w) / heads - gap, font * (summary ? 0.9f : 1.2f), font * (summary ? 2.0f : 4.0f));
    const AttentionPlan& trained = s.model ? s.model->model->trained_plan() : s.forward->plan;
    const auto is_changed = [&](int l, int h) { return !(s.forward->plan.at(l, h) == trained.at(l, h)); };
    int changed = 0;
    for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h) changed += is_changed(l, h);
    // "softmax, T = 1" only when it is so: AttnLab tiny-SSMax was trained with SSMax in every head.
    if (changed == 0 && trained.is_default()) ImGui::TextUnformatted("Every head as trained (softmax, T = 1)");
    else if (changed == 0) ImGui::TextUnformatted("Every head as trained (its config.json's normalizers)");
    else ImGui::Text("Every head as the model runs now (%d changed, tagged \"%s\" in blue)", changed, kChangedTag);
    const AttentionThumbnails* t = g.thumbnails.done.get();
    if (!t && g.thumbnails.work.busy()) {
        ImGui::SameLine();
        ImGui::ProgressBar(static_cast<float>(g.thumbnails.work.progress()), ImVec2(font * 8, 0));
        ImGui::SameLine();
        if (ImGui::SmallButton("Cancel##thumbs")) g.thumbnails.work.cancel();
    } else if (!t) {
        ImGui::SameLine();
        if (ImGui::SmallButton("Compute thumbnails")) g.thumbnails.pass.reset();  // restarts next frame
    }
    draw_cell_choice(g, ctx, layers, heads);
    // The thumbnails' widget names, made when the model's shape changes, not every frame.
    if (g.names_layers != layers || g.names_heads != heads) {
        g.names_layers = layers;
        g.names_heads = heads;
        g.thumb_names.clear();
        for (int l = 0; l < layers; ++l)
            for (int h = 0; h < heads; ++h) g.thumb_names.push_back("attention.thumb." + std::to_string(l) + "." + std::to_string(h));
    }
    // What this frame marks, recorded as it is drawn (the status reports exactly this).
    for (HeadPattern k : kHeadPatterns) g.marked[k].clear();
    g.marked_frame = ImGui::GetFrameCount();
    g.marked_for = g.thumbnails.done;
    ImDrawList* parent = ImGui::GetWindowDrawList();
    const ImVec2 grid0 = ImGui::GetCursorScreenPos();
    // Head numbers over the columns.
    for (int h = 0; h < heads; h += (thumb < font * 1.6f ? 2 : 1)) {
        char num[16];
        std::snprintf(num, sizeof num, "%d", h);
        parent->AddText(ImVec2(grid0.x + label_w + h * (thumb + gap) + thumb * 0.5f - ImGui::CalcTextSize(num).x * 0.5f, grid0.y),
                        ImGui::GetColorU32(ImGuiCol_TextDisabled), num);
    }
    ImGui::Dummy(ImVec2(0, font));
    const ImVec2 rows0 = ImGui::GetCursorScreenPos();
    ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(gap, gap));
    for (int l = 0; l < layers; ++l) {
        // One child window per layer: each has its own draw list, so that no list passes
        // WebGL's 65536-vertex limit however detailed the thumbnails are.
        ImGui::PushID(l);
        ImGui::BeginChild("##layer", ImVec2(label_w + heads * (thumb + gap), thumb), false,
                          ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
        ImDrawList* dl = ImGui::GetWindowDrawList();
        const ImVec2 row0 = ImGui::GetCursorScreenPos();
        char name[16];
        std::snprintf(name, sizeof name, "L%d", l);
        dl->AddText(ImVec2(row0.x, row0.y + thumb * 0.5f - font * 0.5f), ImGui::GetColorU32(ImGuiCol_TextDisabled), name);
        for (int h = 0; h < heads; ++h) {
            const ImVec2 a(row0.x + label_w + h * (thumb + gap), row0.y), b(a.x + thumb, a.y + thumb);
            ImGui::SetCursorScreenPos(a);
            ImGui::PushID(h);
            if (ImGui::InvisibleButton("##thumb", ImVec2(thumb, thumb))) pick_head(s, l, h);
            ImGui::PopID();
            const size_t index = static_cast<size_t>(l * heads + h);
            remember_last_item(ctx.widgets, g.thumb_names[index].c_str());
            dl->AddRectFilled(a, b, IM_COL32(242, 242, 242, 255));
            if (t && summary) {
                const double v = summary_value(*t, g.summary, index);
                if (std::isfinite(v)) dl->AddRectFilled(a, b, heatmap::sequential_color(v));
            } else if (t) {
                heatmap::draw_runs(dl, t->runs[index], a, b);
            }
            if (is_changed(l, h)) draw_changed_mark(dl, a, b);
            const bool chosen = l == s.view.layer && h == s.view.head;
            if (chosen) dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), plot::colors::vermillion, 0, 0, 3.0f);
            for (HeadPattern k : kHeadPatterns) {
                if (!t) break;
                const double score = t->scores[k][index];
                if (score > kStyles[k].threshold) {  // false for NaN
                    draw_mark(dl, a, b, k);
                    g.marked[k].push_back({l, h, score});
                }
            }
            if (ImGui::IsItemHovered()) {
                dl->AddRect(a, b, ImGui::GetColorU32(ImGuiCol_Text), 0, 0, 1.5f);
                if (t) {
                    ByPattern<std::array<char, 32>> score;
                    for (HeadPattern k : kHeadPatterns) {
                        const double v = t->scores[k][index];
                        if (std::isfinite(v)) std::snprintf(score[k].data(), score[k].size(), "%.2f", v);
                        else std::snprintf(score[k].data(), score[k].size(), "none");
                    }
                    ImGui::SetTooltip(
                        "layer %d, head %d\nlargest weight %.3g\nlast query's largest weight %.3g (uniform: %.3g)\n"
                        "mean weight on the previous token: %s\n"
                        "induction score (weight after the earlier occurrence): %s\nclick to open",
                        l, h, static_cast<double>(t->maps[index].max), summary_value(*t, 2, index), 1.0 / std::max(1, t->L),
                        score.previous_token.data(), score.induction.data());
                } else {
                    ImGui::SetTooltip("layer %d, head %d\nclick to open", l, h);
                }
            }
        }
        ImGui::EndChild();
        ImGui::PopID();
    }
    ImGui::PopStyleVar();
    const ImVec2 end = ImGui::GetCursorScreenPos();
    remember_rect(ctx.widgets, "attention.grid", ImVec2(rows0.x + label_w, rows0.y),
                  ImVec2(rows0.x + label_w + heads * (thumb + gap) - gap, end.y - gap));
    if (t && summary) {
        text_wrapped("Each cell: the head's %s, coloured from 0 (dark) to 1 (yellow); hover a cell for its numbers, click to open it.",
                     kSummaries[g.summary].shown);
        draw_legend(g, *t);
    } else if (t) {
        ImGui::TextDisabled("Each thumbnail: %d x %d blocks, each the largest weight in it,", t->maps.empty() ? 0 : t->maps[0].bins,
                            t->maps.empty() ? 0 : t->maps[0].bins);
        ImGui::TextDisabled("coloured from 0 to that head's own maximum (%.2f s to compute).", t->seconds);
        draw_legend(g, *t);
    }
    draw_changed_legend(changed);
}

void add_head_grid_status(const HeadGrid& g, const Session& s, json::ObjectBuilder& o) {
    const std::shared_ptr<const AttentionThumbnails>& thumbnails = g.thumbnails.done;
    const bool ready = thumbnails && thumbnails->pass.lock() == s.forward && s.forward;
    const int layers = s.forward ? s.forward->capture.layers() : 0, heads = s.forward ? s.forward->capture.n_head() : 0;
    o.add("cells", summary_cells(g, layers, heads) ? "summary" : "thumbnails").add("summary", kSummaries[g.summary].name);
    o.add("layers", layers).add("heads", heads);
    o.add("thumbnails_ready", ready);
    if (ready) {
        o.add("thumbnails_seconds", thumbnails->seconds);
        for (HeadPattern k : kHeadPatterns) o.add_raw(kStyles[k].status, pattern_json(g, *thumbnails, k));
        // Each mark's colour, "#rrggbb": a test checks that no two marks share one.
        json::ObjectBuilder colours;
        for (HeadPattern k : kHeadPatterns) colours.add(kStyles[k].status, hex_colour(kStyles[k].color));
        o.add_raw("mark_colours",
                  colours.add("changed", hex_colour(kChangedColor)).add("chosen", hex_colour(plot::colors::vermillion)).str());
        // The chosen head's own scores (tour captions read them).
        const AttentionThumbnails& t = *thumbnails;
        const int at = s.view.layer * t.heads + s.view.head;
        json::ObjectBuilder chosen;
        for (HeadPattern k : kHeadPatterns) {
            const std::vector<double>& v = t.scores[k];
            chosen.add(kStyles[k].status, s.view.layer < t.layers && s.view.head < t.heads ? v[static_cast<size_t>(at)] : std::nan(""));
        }
        o.add_raw("chosen", chosen.str());
    }
}

}  // namespace attnlab
