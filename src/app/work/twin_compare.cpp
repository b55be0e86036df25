#include "app/work/twin_compare.h"

#include <memory>
#include <vector>

namespace attnlab {

namespace {

constexpr const char* kTwinPassLabel = "The twin's forward pass";

// The twin over the model's tokens under `plan`, with the capture its heatmap and fading plot
// read. One call: only the built-in models have a twin, and their pass is a few milliseconds.
class TwinPassTask final : public Task {
public:
    TwinPassTask(std::shared_ptr<const LoadedModel> twin, std::vector<int> tokens, AttentionPlan plan)
        : twin_(std::move(twin)), result_(std::make_shared<ForwardResult>()) {
        result_->tokens = std::move(tokens);
        result_->plan = std::move(plan);
    }

    bool step() override {
        std::unique_ptr<DecoderState> state = twin_->model->new_state();
        state->plan = result_->plan;
        if (!state->forward(result_->tokens, result_->next_logits, error_, false, &result_->capture)) return false;
        report_progress(1.0);
        return false;
    }

    void finish(Session& s) override {
        if (s.twin != twin_ || s.tokens != result_->tokens) return;  // the twin or the text changed meanwhile
        if (!error_.empty()) {
            s.twin_error = "The twin's forward pass failed: " + error_;
            return;
        }
        s.twin_forward = result_;
    }

private:
    std::shared_ptr<const LoadedModel> twin_;
    std::shared_ptr<ForwardResult> result_;
    std::string error_;
};

// view.plan read against the twin, when either changed: the same changes as the model's (both
// twins have one shape, so a plan that fits the model fits the twin). One that does not fit
// leaves the twin as trained; the panel says so.
void keep_twin_plan_current(Session& s) {
    if (s.twin_plan_model == s.twin.get() && s.twin_plan_text == s.view.plan) return;
    s.twin_plan_model = s.twin.get();
    s.twin_plan_text = s.view.plan;
    const DecoderModel& m = *s.twin->model;
    s.twin_plan = m.trained_plan();  // what the spec changes
    std::string error;
    if (!parse_attention_spec(s.view.plan, s.twin->shape.n_layer, s.twin->shape.n_head, s.twin_plan, error)) s.twin_plan = m.trained_plan();
}

bool in_flight(const FetchStatus& st) {
    return st.phase == FetchStatus::Phase::Probing || st.phase == FetchStatus::Phase::Downloading || st.phase == FetchStatus::Phase::Ready;
}

// The comparison is off: nothing of it goes on. A download of the twin still on its way is
// cancelled, or its bytes would arrive with no one to take them but the model's own slot.
void stop_twin_work(ModelLoading& loading, Session& s, ModelSource* source) {
    if (s.twin_work.busy()) s.twin_work.cancel();
    s.twin_error.clear();
    if (loading.compare_source.empty()) return;
    if (source && source->status().url == loading.compare_source && in_flight(source->status())) source->cancel();
    loading.compare_source.clear();
}

}  // namespace

std::string twin_unavailable_reason(const Session& s) {
    if (!s.model) return "Load a model first.";
    if (s.model->which == BuiltinModel::None)
        return "Only AttnLab's built-in models have a twin (AttnLab tiny and AttnLab tiny-SSMax, trained alike but for the "
               "normalizer): choose one in the model menu.";
    return {};
}

void keep_twin_current(ModelLoading& loading, Session& s, ModelSource* source, const BuiltinLocations& where) {
    if (!s.view.compare || !twin_unavailable_reason(s).empty()) {
        stop_twin_work(loading, s, source);
        return;
    }
    const BuiltinModel want = other_twin(s.model->which);
    if (s.twin && s.twin->which != want) {  // the model became the other twin: its twin is the other one now
        s.twin.reset();
        s.twin_forward.reset();
    }
    if (!s.twin_error.empty()) return;  // shown until compare is turned off
    if (!s.twin) {
        if (!source || where.of(want).empty()) {
            s.twin_error = "This build does not know where " + std::string(builtin_model_label(want)) + " is.";
            return;
        }
        const FetchStatus st = source->status();
        if (!loading.compare_source.empty()) {
            // Still ours on its way; else the download was cancelled or replaced by another one.
            if (st.url == loading.compare_source && in_flight(st)) return;
            loading.compare_source.clear();
            if (st.phase != FetchStatus::Phase::Failed)
                s.twin_error = "The twin's download was stopped. Turn the comparison off and on to try again.";
            return;
        }
        if (in_flight(st)) return;  // another model on its way first
        start_twin_download(loading, *source, where.of(want), want);
        return;
    }
    keep_twin_plan_current(s);
    if (s.tokens.empty() || twin_pass_current(s)) return;
    if (s.twin_work.busy()) return;  // its finish() drops a pass made for other tokens; the next frame starts anew
    s.twin_work.start(std::make_unique<TwinPassTask>(s.twin, s.tokens, s.twin_plan), kTwinPassLabel);
}

bool twin_pass_current(const Session& s) {
    return s.twin_forward && s.twin_forward->tokens == s.tokens && s.twin_plan_model == s.twin.get() && s.twin_forward->plan == s.twin_plan;
}

const char* twin_phase(const Session& s) {
    if (!s.view.compare) return "off";
    if (!twin_unavailable_reason(s).empty()) return "unavailable";
    if (!s.twin_error.empty()) return "failed";
    if (!s.twin) return "loading";
    if (!twin_pass_current(s) || !pass_current(s)) return "computing";
    return "ready";
}

}  // namespace attnlab
