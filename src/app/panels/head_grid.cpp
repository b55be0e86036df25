#include "app/panels/head_grid.h"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "app/plot/plot.h"
#include "base/json.h"

namespace attnlab {

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

class ThumbnailTask final : public Task {
public:
    ThumbnailTask(std::shared_ptr<const ForwardResult> forward, std::shared_ptr<const AttentionThumbnails>* slot)
        : forward_(std::move(forward)), slot_(slot), out_(std::make_shared<AttentionThumbnails>()) {
        const AttentionCapture& cap = forward_->capture;
        out_->pass = forward_;
        out_->layers = cap.layers();
        out_->heads = cap.n_head();
        targets_ = induction_targets(forward_->tokens);
        induction_queries_ = induction_queries(targets_);
        out_->uniform[0] = uniform_previous_token_weight(cap.length());
        out_->uniform[1] = uniform_induction_score(targets_);
        // About 8M multiply-adds per step: a few ms natively, well under the frame budget in wasm.
        const long long per_row = static_cast<long long>(std::max(cap.length(), 1)) * std::max(cap.head_dim(), 1);
        rows_per_step_ = static_cast<int>(std::clamp(8'000'000LL / per_row, 4LL, static_cast<long long>(std::max(cap.length(), 4))));
    }

    bool step() override {
        if (started_ == std::chrono::steady_clock::time_point{}) started_ = std::chrono::steady_clock::now();
        const AttentionCapture& cap = forward_->capture;
        const int L = cap.length(), d = cap.head_dim(), total = out_->layers * out_->heads;
        if (index_ >= total || L == 0) return false;
        const int layer = index_ / out_->heads, head = index_ % out_->heads;
        if (row_ == 0) {
            q_ = cap.queries(layer, head);
            k_ = cap.keys(layer, head);
            map_ = empty_pooled_map(L, AttentionThumbnails::kThumbnailBins);
            previous_sum_ = induction_sum_ = 0.0;
        }
        const int r1 = std::min(L, row_ + rows_per_step_);
        softmax_attention_rows(q_, k_, L, d, row_, r1, rows_);
        pool_rows_max(map_, rows_, row_, r1);
        previous_sum_ += previous_token_sum(rows_, L, row_, r1);  // the same rows the thumbnail shows
        induction_sum_ += induction_sum(rows_, targets_, row_, r1);
        row_ = r1;
        if (row_ == L) {
            out_->runs.push_back(heatmap::cell_runs(map_.cells, map_.bins, map_.bins, map_.max));
            out_->maps.push_back(std::move(map_));
            // As previous_token_weight: the mean over queries 1..L-1, NaN without any.
            out_->previous_token.push_back(L > 1 ? previous_sum_ / (L - 1) : std::nan(""));
            // As induction_score: the mean over the queries whose token occurred before.
            out_->induction.push_back(induction_queries_ > 0 ? induction_sum_ / induction_queries_ : std::nan(""));
            row_ = 0;
            ++index_;
        }
        report_progress((index_ + static_cast<double>(row_) / L) / total);
        return index_ < total;
    }

    void finish(Session&) override {
        out_->seconds = ms_since(started_) / 1000.0;
        *slot_ = std::move(out_);
    }

private:
    std::shared_ptr<const ForwardResult> forward_;
    std::shared_ptr<const AttentionThumbnails>* slot_;
    std::shared_ptr<AttentionThumbnails> out_;
    int rows_per_step_ = 16;
    int index_ = 0, row_ = 0;  // the head (layer-major) and its next row
    std::vector<float> q_, k_, rows_;
    PooledMap map_;
    std::vector<int> targets_;   // induction_targets of the pass's tokens
    int induction_queries_ = 0;  // how many of them have a target
    double previous_sum_ = 0.0;  // this head's A(i, i-1) so far
    double induction_sum_ = 0.0;  // and its A(i, targets_[i])
    std::chrono::steady_clock::time_point started_{};
};

// The two patterns the grid marks. Each tag sits in the upper-right corner, the causal map's
// empty triangle, so that it hides no weight; the induction tag under the previous-token one.
struct HeadPattern {
    const char* tag;     // drawn on the thumbnail
    const char* name;    // "previous-token"
    const char* where;   // where the weight goes, for the legend
    const char* status;  // status().attention's key
    double threshold;
    ImU32 color;
    std::vector<double> AttentionThumbnails::*scores;
};
const HeadPattern kPatterns[2] = {
    {"prev", "previous-token", "on the token just before", "previous_token",
     kPreviousTokenThreshold, plot::colors::green, &AttentionThumbnails::previous_token},
    {"ind", "induction", "on the token that followed the current token's first occurrence", "induction",
     kInductionThreshold, plot::colors::purple, &AttentionThumbnails::induction},
};

// The head with the largest score of a pattern (layer-major index), -1 when no score is a number.
int best_head(const AttentionThumbnails& t, const HeadPattern& p) {
    const std::vector<double>& v = t.*p.scores;
    int best = -1;
    for (int i = 0; i < static_cast<int>(v.size()); ++i)
        if (std::isfinite(v[static_cast<size_t>(i)]) && (best < 0 || v[static_cast<size_t>(i)] > v[static_cast<size_t>(best)]))
            best = i;
    return best;
}

// A mark: an outline (the second pattern's inside the first's) and a tag, or a small triangle
// when the tag does not fit the thumbnail.
void draw_mark(ImDrawList* dl, ImVec2 a, ImVec2 b, int pattern) {
    const HeadPattern& p = kPatterns[pattern];
    const float w = b.x - a.x, size = ImGui::GetFontSize() * 0.75f, inset = 1.0f + 2.5f * static_cast<float>(pattern);
    dl->AddRect(ImVec2(a.x + inset, a.y + inset), ImVec2(b.x - inset, b.y - inset), p.color, 0, 0, 2.0f);
    const ImVec2 text = ImGui::GetFont()->CalcTextSizeA(size, w, 0.0f, "prev");  // both tags in the width of the longer
    if (text.x + 4 <= w * 0.6f && (text.y + 2) * 2 <= w * 0.45f) {
        const float y = a.y + 1 + static_cast<float>(pattern) * (text.y + 2);
        const ImVec2 t0(b.x - text.x - 4, y);
        dl->AddRectFilled(t0, ImVec2(b.x - 1, y + text.y + 1), p.color);
        dl->AddText(ImGui::GetFont(), size, ImVec2(t0.x + 1.5f, t0.y + 0.5f), plot::colors::black, p.tag);
    } else {
        const float s = std::max(4.0f, w * 0.22f), y = a.y + 1 + static_cast<float>(pattern) * s;
        dl->AddTriangleFilled(ImVec2(b.x - 1 - s, y + s * 0.5f), ImVec2(b.x - 1, y), ImVec2(b.x - 1, y + s), p.color);
    }
}

// The legend under the grid: one line a pattern, with its tag, and which heads were marked (or
// the best one when none was).
void draw_legend(const HeadGrid& g, const AttentionThumbnails& t) {
    for (int k = 0; k < 2; ++k) {
        const HeadPattern& p = kPatterns[k];
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
        const std::vector<double>& v = t.*p.scores;
        if (!g.marked[k].empty()) {
            line += " Marked:";
            for (const HeadGrid::Mark& m : g.marked[k]) {
                char item[48];
                std::snprintf(item, sizeof item, "%s L%d H%d (%.2f)", &m == &g.marked[k].front() ? "" : ",", m.layer, m.head, m.weight);
                line.append(item);
            }
        } else if (const int best = best_head(t, p); best >= 0) {
            char item[96];
            std::snprintf(item, sizeof item, " None here (highest: L%d H%d, %.2f; uniform attention: %.2f).", best / t.heads,
                          best % t.heads, v[static_cast<size_t>(best)], t.uniform[k]);
            line += item;
        } else {
            line += k == 0 ? " A single token has no previous token." : " No token occurs twice in this text.";
        }
        ImGui::TextWrapped("%s", line.c_str());
    }
}

// One pattern's status: every head's score, the best head, and the marks the grid drew in the
// last frame (none when it was not drawn then, or for other thumbnails).
std::string pattern_json(const HeadGrid& g, const AttentionThumbnails& t, int k) {
    const HeadPattern& p = kPatterns[k];
    const std::vector<double>& v = t.*p.scores;
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
    const int best = best_head(t, p);
    if (best >= 0) {
        json::ObjectBuilder b;
        b.add("layer", best / t.heads).add("head", best % t.heads).add("weight", v[static_cast<size_t>(best)]);
        o.add_raw("best", b.str());
    } else {
        o.add_raw("best", "null");
    }
    const bool drawn = g.marked_for.lock() == g.thumbnails && ImGui::GetCurrentContext() && g.marked_frame == ImGui::GetFrameCount();
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
    const float thumb = std::clamp((width - label_w) / heads - gap, font * 1.2f, font * 4.0f);
    ImGui::TextUnformatted("Every head as trained (softmax, T = 1)");
    const AttentionThumbnails* t = g.thumbnails.get();
    if (!t && g.work.busy()) {
        ImGui::SameLine();
        ImGui::ProgressBar(static_cast<float>(g.work.progress()), ImVec2(font * 8, 0));
        ImGui::SameLine();
        if (ImGui::SmallButton("Cancel##thumbs")) g.work.cancel();
    } else if (!t) {
        ImGui::SameLine();
        if (ImGui::SmallButton("Compute thumbnails")) g.thumbnails_pass.reset();  // restarts next frame
    }
    // What this frame marks, recorded as it is drawn (the status reports exactly this).
    for (auto& m : g.marked) m.clear();
    g.marked_frame = ImGui::GetFrameCount();
    g.marked_for = g.thumbnails;
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
            if (ImGui::InvisibleButton("##thumb", ImVec2(thumb, thumb))) {
                s.view.layer = l;
                s.view.head = h;
            }
            ImGui::PopID();
            std::string rect_name = "attention.thumb.";
            rect_name.append(std::to_string(l)).append(".").append(std::to_string(h));
            remember_last_item(ctx.widgets, rect_name.c_str());
            const size_t index = static_cast<size_t>(l * heads + h);
            dl->AddRectFilled(a, b, IM_COL32(242, 242, 242, 255));
            if (t) heatmap::draw_runs(dl, t->runs[index], a, b);
            const bool chosen = l == s.view.layer && h == s.view.head;
            if (chosen) dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), plot::colors::vermillion, 0, 0, 3.0f);
            for (int k = 0; k < 2 && t; ++k) {
                const double score = (t->*kPatterns[k].scores)[index];
                if (score > kPatterns[k].threshold) {  // false for NaN
                    draw_mark(dl, a, b, k);
                    g.marked[k].push_back({l, h, score});
                }
            }
            if (ImGui::IsItemHovered()) {
                dl->AddRect(a, b, ImGui::GetColorU32(ImGuiCol_Text), 0, 0, 1.5f);
                if (t) {
                    char score[2][32];
                    for (int k = 0; k < 2; ++k) {
                        const double v = (t->*kPatterns[k].scores)[index];
                        if (std::isfinite(v)) std::snprintf(score[k], sizeof score[k], "%.2f", v);
                        else std::snprintf(score[k], sizeof score[k], "none");
                    }
                    ImGui::SetTooltip("layer %d, head %d\nlargest weight %.3g\nmean weight on the previous token: %s\n"
                                      "induction score (weight after the earlier occurrence): %s\nclick to open",
                                      l, h, static_cast<double>(t->maps[index].max), score[0], score[1]);
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
    ctx.widgets["attention.grid"] = {rows0.x + label_w, rows0.y, heads * (thumb + gap) - gap, end.y - rows0.y - gap};
    if (t) {
        ImGui::TextDisabled("Each thumbnail: %d x %d blocks, each the largest weight in it,", t->maps.empty() ? 0 : t->maps[0].bins,
                            t->maps.empty() ? 0 : t->maps[0].bins);
        ImGui::TextDisabled("coloured from 0 to that head's own maximum (%.2f s to compute).", t->seconds);
        draw_legend(g, *t);
    }
}

void keep_head_grid(HeadGrid& g, Session& s) {
    const int frame = ImGui::GetFrameCount();
    if (g.pumped_frame == frame) return;
    g.pumped_frame = frame;
    if (!s.forward || s.forward->tokens.empty()) {
        g.work.cancel();
        g.thumbnails.reset();
        g.thumbnails_pass.reset();
        return;
    }
    if (g.thumbnails_pass.lock() != s.forward) {
        g.thumbnails.reset();
        g.thumbnails_pass = s.forward;
        g.work.start(std::make_unique<ThumbnailTask>(s.forward, &g.thumbnails), "Attention thumbnails");
    }
    // Without threads the UI thread runs the steps: leave the frame to the model's work first.
    constexpr double kBudgetMs = 20.0;
    if (!s.model_work.busy()) g.work.pump(s, kBudgetMs);
}

void add_head_grid_status(const HeadGrid& g, const Session& s, json::ObjectBuilder& o) {
    const bool ready = g.thumbnails && g.thumbnails->pass.lock() == s.forward && s.forward;
    o.add("thumbnails_ready", ready);
    if (ready) {
        o.add("thumbnails_seconds", g.thumbnails->seconds);
        for (int k = 0; k < 2; ++k) o.add_raw(kPatterns[k].status, pattern_json(g, *g.thumbnails, k));
        // The chosen head's own scores (tour captions read them).
        const AttentionThumbnails& t = *g.thumbnails;
        const int at = s.view.layer * t.heads + s.view.head;
        json::ObjectBuilder chosen;
        for (int k = 0; k < 2; ++k) {
            const std::vector<double>& v = t.*kPatterns[k].scores;
            chosen.add(kPatterns[k].status, s.view.layer < t.layers && s.view.head < t.heads ? v[static_cast<size_t>(at)] : std::nan(""));
        }
        o.add_raw("chosen", chosen.str());
    }
}

bool strongest_learned_head(const AttentionThumbnails& t, int& layer, int& head) {
    double ratio = kLearnedOverUniform;  // at least this far above uniform attention
    int found = -1;
    for (int k = 0; k < 2; ++k)
        if (const int best = best_head(t, kPatterns[k]); best >= 0 && t.uniform[k] > 0) {
            const double r = (t.*kPatterns[k].scores)[static_cast<size_t>(best)] / t.uniform[k];
            if (r >= ratio) ratio = r, found = best;
        }
    if (found < 0) return false;
    layer = found / t.heads;
    head = found % t.heads;
    return true;
}

}  // namespace attnlab
