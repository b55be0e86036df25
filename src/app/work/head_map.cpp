#include "app/work/head_map.h"

#include <algorithm>

#include "analysis/attention_map.h"
#include "base/timing.h"

namespace attnlab {

namespace {

class HeadMapTask final : public Task {
public:
    HeadMapTask(std::shared_ptr<const ForwardResult> pass, HeadMapRequest r, std::shared_ptr<const HeadMap>* slot)
        : pass_(std::move(pass)), slot_(slot), out_(std::make_shared<HeadMap>()) {
        out_->request = std::move(r);
        const HeadMapRequest& q = out_->request;
        out_->blocks = empty_block_map(q.window, q.max_blocks, q.how);
        const AttentionCapture& cap = pass_->capture;
        // About 4M operations a step: a key's score costs head_dim multiply-adds and its weight about
        // 32 more (the normalizer works in double, a row at a time): 10-30 ms in the page.
        const long long per_row = static_cast<long long>(std::max(cap.length(), 1)) * (std::max(cap.head_dim(), 1) + 32);
        rows_per_step_ = static_cast<int>(std::clamp(4'000'000LL / per_row, 1LL, 1024LL));
        row_ = q.window.q0;
    }

    bool step() override {
        const HeadMapRequest& q = out_->request;
        if (started_ == SteadyClock::time_point{}) {
            started_ = SteadyClock::now();
            if (!parse_normalizer(q.normalizer, normalizer_, out_->error)) return false;
            q_ = pass_->capture.queries(q.layer, q.head);
            k_ = pass_->capture.keys(q.layer, q.head);
        }
        if (!out_->error.empty() || row_ >= q.window.q1) return false;
        const AttentionCapture& cap = pass_->capture;
        const int L = cap.length(), r1 = std::min(q.window.q1, row_ + rows_per_step_);
        score_rows(q_, k_, L, cap.head_dim(), row_, r1, scores_);
        if (!normalize_causal_row_block(scores_, L, row_, r1, normalizer_, q.T, weights_, out_->error)) return false;
        fold_rows(out_->blocks, weights_, L, row_, r1);
        row_ = r1;
        report_progress(static_cast<double>(row_ - q.window.q0) / std::max(1, q.window.queries()));
        if (row_ < q.window.q1) return true;
        make_runs();  // here, not in finish(): on the worker where there is one
        return false;
    }

    void finish(Session&) override {
        if (!out_->error.empty()) out_->blocks.cells.clear();
        out_->ms = ms_since(started_);
        pass_.reset();
        *slot_ = std::move(out_);
    }

private:
    // Halves the blocks until their runs fit one draw list (heatmap.h), as the whole map did.
    void make_runs() {
        BlockMap& b = out_->blocks;
        out_->runs = heatmap::cell_runs(b.cells, b.rows(), b.cols(), b.max);
        while (static_cast<int>(out_->runs.runs.size()) > heatmap::kMaxRuns && b.rows() > 16) {
            b = coarsened(b);
            out_->runs = heatmap::cell_runs(b.cells, b.rows(), b.cols(), b.max);
        }
    }

    std::shared_ptr<const ForwardResult> pass_;  // held while computing
    std::shared_ptr<const HeadMap>* slot_;
    std::shared_ptr<HeadMap> out_;
    Normalizer normalizer_;
    int rows_per_step_ = 16, row_ = 0;
    std::vector<float> q_, k_, scores_, weights_;  // the head's (L, d) queries and keys; a block of rows
    SteadyClock::time_point started_{};
};

}  // namespace

bool same_request(const HeadMapRequest& a, const HeadMapRequest& b) {
    const auto same_pass = !a.pass.owner_before(b.pass) && !b.pass.owner_before(a.pass) && !a.pass.expired();
    return same_pass && a.layer == b.layer && a.head == b.head && a.normalizer == b.normalizer && a.T == b.T && a.window == b.window &&
           a.max_blocks == b.max_blocks && a.how == b.how;
}

void keep_head_map(HeadMapWork& w, Session& s, const HeadMapRequest& r) {
    const std::shared_ptr<const ForwardResult> pass = r.pass.lock();
    if (!pass || pass->capture.length() == 0) {
        w.work.cancel();
        w.done.reset();
        w.wanted = {};
        return;
    }
    if (!same_request(w.wanted, r)) {
        w.wanted = r;
        auto task = std::make_unique<HeadMapTask>(pass, r, &w.done);
        if (static_cast<long long>(r.window.queries()) * pass->capture.length() <= kHeadMapCellsAtOnce) {
            w.work.cancel();
            while (task->step()) {}
            task->finish(s);
        } else {
            w.work.start(std::move(task), "Attention map");
        }
    }
}

void pump_head_map(HeadMapWork& w, Session& s) {
    // Without threads the UI thread runs the steps. Not after the model's work, as the thumbnails
    // are: the map is what the reader looks at, and the pass it shows is done (the model's work then
    // is the text's perplexity, half a minute over a long text and a large vocabulary).
    constexpr double kBudgetMs = 20.0;
    w.work.pump(s, kBudgetMs);
}

}  // namespace attnlab
