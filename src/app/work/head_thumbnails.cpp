#include "app/work/head_thumbnails.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/timing.h"

namespace attnlab {

namespace {

class ThumbnailTask final : public Task {
public:
    ThumbnailTask(std::shared_ptr<const ForwardResult> forward, std::shared_ptr<const AttentionThumbnails>* slot,
                  std::vector<NeedleProbe> probes)
        : forward_(std::move(forward)), slot_(slot), out_(std::make_shared<AttentionThumbnails>()) {
        const AttentionCapture& cap = forward_->capture;
        out_->pass = forward_;
        out_->layers = cap.layers();
        out_->heads = cap.n_head();
        out_->L = cap.length();
        const size_t cells = static_cast<size_t>(out_->layers) * out_->heads * cap.length();
        out_->largest.assign(cells, 0.0f);
        out_->smallest.assign(cells, 0.0f);
        out_->probes = std::move(probes);
        out_->probe_weights.assign(static_cast<size_t>(out_->layers) * out_->heads * out_->probes.size(), 0.0f);
        targets_ = induction_targets(forward_->tokens);
        induction_queries_ = induction_queries(targets_);
        out_->uniform.previous_token = uniform_previous_token_weight(cap.length());
        out_->uniform.induction = uniform_induction_score(targets_);
        // About 8M multiply-adds per step: a few ms natively, well under the frame budget in wasm.
        const long long per_row = static_cast<long long>(std::max(cap.length(), 1)) * std::max(cap.head_dim(), 1);
        rows_per_step_ = static_cast<int>(std::clamp(8'000'000LL / per_row, 4LL, static_cast<long long>(std::max(cap.length(), 4))));
    }

    bool step() override {
        if (started_ == SteadyClock::time_point{}) started_ = SteadyClock::now();
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
        plan_attention_rows(q_, k_, L, d, row_, r1, forward_->plan.at(layer, head), rows_);
        pool_rows_max(map_, rows_, row_, r1);
        previous_sum_ += previous_token_sum(rows_, L, row_, r1);  // the same rows the thumbnail shows
        induction_sum_ += induction_sum(rows_, targets_, row_, r1);
        keep_fading(index_, L, row_, r1);
        row_ = r1;
        if (row_ == L) {
            out_->runs.push_back(heatmap::cell_runs(map_.cells, map_.bins, map_.bins, map_.max));
            out_->maps.push_back(std::move(map_));
            // As previous_token_weight: the mean over queries 1..L-1, NaN without any.
            out_->scores.previous_token.push_back(L > 1 ? previous_sum_ / (L - 1) : std::nan(""));
            // As induction_score: the mean over the queries whose token occurred before.
            out_->scores.induction.push_back(induction_queries_ > 0 ? induction_sum_ / induction_queries_ : std::nan(""));
            row_ = 0;
            ++index_;
        }
        report_progress((index_ + static_cast<double>(row_) / L) / total);
        return index_ < total;
    }

    void finish(Session&) override {
        out_->seconds = seconds_since(started_);
        *slot_ = std::move(out_);
    }

private:
    // Rows r0..r1-1 of head `index`: each query's largest and smallest visible weight, and the
    // needle's weights for the probes among them.
    void keep_fading(int index, int L, int r0, int r1) {
        const size_t head0 = static_cast<size_t>(index) * static_cast<size_t>(L);
        for (int i = r0; i < r1; ++i) {
            const float* row = rows_.data() + static_cast<size_t>(i - r0) * static_cast<size_t>(L);
            const auto [lo, hi] = std::minmax_element(row, row + i + 1);
            out_->largest[head0 + static_cast<size_t>(i)] = *hi;
            out_->smallest[head0 + static_cast<size_t>(i)] = *lo;
        }
        const size_t n = out_->probes.size();
        for (size_t p = 0; p < n; ++p)
            if (const NeedleProbe& probe = out_->probes[p]; probe.query >= r0 && probe.query < r1 && probe.key <= probe.query)
                out_->probe_weights[static_cast<size_t>(index) * n + p] =
                    rows_[static_cast<size_t>(probe.query - r0) * static_cast<size_t>(L) + static_cast<size_t>(probe.key)];
    }

    std::shared_ptr<const ForwardResult> forward_;
    std::shared_ptr<const AttentionThumbnails>* slot_;
    std::shared_ptr<AttentionThumbnails> out_;
    int rows_per_step_ = 16;
    int index_ = 0, row_ = 0;  // the head (layer-major) and its next row
    std::vector<float> q_, k_, rows_;
    PooledMap map_;
    std::vector<int> targets_;    // induction_targets of the pass's tokens
    int induction_queries_ = 0;   // how many of them have a target
    double previous_sum_ = 0.0;   // this head's A(i, i-1) so far
    double induction_sum_ = 0.0;  // and its A(i, targets_[i])
    SteadyClock::time_point started_{};
};

}  // namespace

void keep_head_thumbnails(HeadThumbnails& t, Session& s) {
    if (!s.forward || s.forward->tokens.empty()) {
        t.work.cancel();
        t.done.reset();
        t.pass.reset();
        return;
    }
    if (!pass_current(s)) {
        // As the summaries (keep_summaries_current): unfinished thumbnails of a pass being
        // replaced wait for the new one.
        if (t.work.busy()) {
            t.work.cancel();
            t.pass.reset();
        }
        return;
    }
    if (t.pass.lock() != s.forward) {
        t.done.reset();
        t.pass = s.forward;
        t.work.start(thumbnail_task(s.forward, &t.done, session_needle_probes(s, s.forward->tokens)), "Attention thumbnails");
    }
}

std::unique_ptr<Task> thumbnail_task(std::shared_ptr<const ForwardResult> forward, std::shared_ptr<const AttentionThumbnails>* slot,
                                     std::vector<NeedleProbe> probes) {
    return std::make_unique<ThumbnailTask>(std::move(forward), slot, std::move(probes));
}

std::vector<NeedleProbe> session_needle_probes(const Session& s, std::span<const int> tokens) {
    if (!s.tokenizer.loaded()) return {};
    // The phrase's ids inside a text, without what the post-processor adds around a whole text
    // (a BOS, an EOS): encode it after a full stop and keep what differs from the stop alone.
    const std::vector<int> bare = s.tokenizer.encode("."), with = s.tokenizer.encode("." + std::string(kNeedleFirstHalf));
    size_t pre = 0, suf = 0;
    while (pre < bare.size() && pre < with.size() && bare[pre] == with[pre]) ++pre;
    while (suf < bare.size() - pre && suf < with.size() - pre && bare[bare.size() - 1 - suf] == with[with.size() - 1 - suf]) ++suf;
    const std::span<const int> first_half(with.data() + pre, with.size() - pre - suf);
    return needle_probes(tokens, first_half);
}

int best_head(const AttentionThumbnails& t, HeadPattern p) {
    const std::vector<double>& v = t.scores[p];
    int best = -1;
    for (int i = 0; i < static_cast<int>(v.size()); ++i)
        if (std::isfinite(v[static_cast<size_t>(i)]) && (best < 0 || v[static_cast<size_t>(i)] > v[static_cast<size_t>(best)])) best = i;
    return best;
}

bool strongest_learned_head(const AttentionThumbnails& t, int& layer, int& head) {
    double ratio = kLearnedOverUniform;  // at least this far above uniform attention
    int found = -1;
    for (HeadPattern p : kHeadPatterns)
        if (const int best = best_head(t, p); best >= 0 && t.uniform[p] > 0) {
            const double r = t.scores[p][static_cast<size_t>(best)] / t.uniform[p];
            if (r >= ratio) ratio = r, found = best;
        }
    if (found < 0) return false;
    layer = found / t.heads;
    head = found % t.heads;
    return true;
}

bool first_view_head(const AttentionThumbnails& t, int& layer, int& head) {
    constexpr HeadPattern p = HeadPattern::Induction;
    if (const int best = best_head(t, p);
        best >= 0 && t.uniform[p] > 0 && t.scores[p][static_cast<size_t>(best)] / t.uniform[p] >= kLearnedOverUniform) {
        layer = best / t.heads;
        head = best % t.heads;
        return true;
    }
    return strongest_learned_head(t, layer, head);
}

}  // namespace attnlab
