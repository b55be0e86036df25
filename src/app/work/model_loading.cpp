#include "app/work/model_loading.h"

#include <algorithm>
#include <cstdio>
#include <span>

namespace attnlab {

namespace {

void report_failure(ModelLoading& loading, Session& s, const std::string& error) {
    s.model_error = error;
    s.message = "The model did not load: " + error;
    loading.reported_message = s.message;
}

// What a share link names for a loaded model: its web address; "" for a local file or AttnLab
// tiny (whose address is the site's own, relative: "the default one"); the twin's link name.
std::string link_address(const LoadedModel& m) { return model_link_name(m.source, m.which); }

// A safetensors file starts with its header's length (8 bytes) and then the JSON header. When
// it does not, say so plainly (a server's HTML error page is the usual culprit) instead of
// letting the reader report an absurd header length.
bool looks_like_safetensors(std::span<const std::uint8_t> b, const std::string& name, std::string& error) {
    if (b.size() >= 9 && b[8] == '{') return true;
    error = name + " is not a safetensors file";
    if (b.empty()) {
        error += " (it is empty).";
        return false;
    }
    // Quote its start when it is text (an HTML page, an error message).
    std::string start;
    for (size_t i = 0; i < std::min<size_t>(b.size(), 48); ++i) {
        const std::uint8_t c = b[i];
        if (c == '\n' || c == '\r' || c == '\t') start += ' ';
        else if (c >= 32 && c < 127) start += static_cast<char>(c);
        else {
            start.clear();
            break;
        }
    }
    if (!start.empty()) error.append(": it begins with \"").append(start).append(b.size() > 48 ? "…\"" : "\"");
    error += ". Point AttnLab at a model.safetensors file or a Hugging Face model.";
    return false;
}

// Bytes are in: parse them and make them the model, or say why not (the old model stays).
void take_loaded_bytes(ModelLoading& loading, ModelSource& source, Session& s) {
    ModelFiles files;
    std::string error;
    if (!source.take_result(files)) return;
    const std::string name = files.source;
    const bool looks_right =
        files.weights.empty()
            ? looks_like_safetensors(files.bytes.bytes, name, error)
            : std::all_of(files.weights.begin(), files.weights.end(), [&](const ModelFiles::Part& p) {
                  return looks_like_safetensors(files.bytes.bytes.subspan(p.offset, p.size), files.file_name(p.name), error);
              });
    if (!looks_right) {
        report_failure(loading, s, error);
        return;
    }
    if (!loading.compare_source.empty() && name == loading.compare_source) {  // the twin, for the comparison
        const BuiltinModel which = loading.compare_which;
        loading.compare_source.clear();
        std::shared_ptr<const LoadedModel> twin = load_model(std::move(files), error, which);
        s.twin_error = twin ? std::string() : "The twin did not load: " + error;
        if (twin) s.twin = std::move(twin);
        return;
    }
    const BuiltinModel which = !loading.builtin_source.empty() && name == loading.builtin_source ? BuiltinModel::Tiny
                               : !loading.twin_source.empty() && name == loading.twin_source     ? BuiltinModel::TinySsmax
                                                                                                 : BuiltinModel::None;
    std::shared_ptr<const LoadedModel> model = load_model(std::move(files), error, which);
    if (!model) {
        report_failure(loading, s, error);
        return;
    }
    if (s.message == loading.reported_message) s.message.clear();
    install_model(s, std::move(model));
    s.view.model_url = link_address(*s.model);
}

}  // namespace

void install_model(Session& s, std::shared_ptr<const LoadedModel> model) {
    // A view that showed its head as the old model was trained shows the new one's head so too.
    const bool follow = s.model && view_follows_trained(s.view, s.model->model->trained_plan());
    // Results of the old model must not outlive it: cancel its work, drop its passes.
    s.model_work.cancel();
    s.background.cancel();
    s.forward.reset();
    s.baseline.reset();
    s.perplexities.clear();
    s.plan_model = nullptr;  // read view.plan again against the new model
    s.summaries.reset();
    s.tokens.clear();
    s.tokens_text.clear();         // re-tokenize: the new model's context may differ
    s.failed_pass_tokens.clear();  // the old model's failure says nothing of the new one
    s.failed_pass_plan = AttentionPlan();
    s.model = std::move(model);
    s.tokenizer = s.model->tokenizer.loaded() ? s.model->tokenizer : gpt2_vocabulary(s);
    s.model_error.clear();
    if (follow) follow_trained(s.view, s.model->model->trained_plan());
}

bool swap_with_twin(Session& s, BuiltinModel which) {
    if (!s.model || !s.twin || s.twin->which != which) return false;
    std::shared_ptr<const LoadedModel> old = s.model;
    install_model(s, s.twin);
    s.twin = std::move(old);
    s.twin_forward.reset();
    s.view.model_url = link_address(*s.model);
    return true;
}

// A new attempt: the last attempt's error no longer applies.
void forget_failure(ModelLoading& loading, Session& s) {
    loading.reported_failure.clear();
    if (!s.model_error.empty() && s.message == loading.reported_message) s.message.clear();
    s.model_error.clear();
}

void begin_load(ModelLoading& loading, Session& s, ModelSource& source, const std::string& url) {
    forget_failure(loading, s);
    source.probe(url);
}

void start_model_download(ModelLoading& loading, Session& s, ModelSource& source, const std::string& url) {
    loading.requested_url = url;
    forget_failure(loading, s);
    s.view.model_url = url;
    source.download(url);
}

void start_builtin_model(ModelLoading& loading, Session& s, ModelSource& source, const std::string& location, BuiltinModel which) {
    forget_failure(loading, s);
    source.download(location);
    // The name its bytes come back under: the address as given (web), the checkpoint's path (desktop).
    (which == BuiltinModel::TinySsmax ? loading.twin_source : loading.builtin_source) = source.status().url;
    if (which == BuiltinModel::TinySsmax) s.view.model_url = kTwinLinkName;
}

void start_twin_download(ModelLoading& loading, ModelSource& source, const std::string& location, BuiltinModel which) {
    source.download(location);
    loading.compare_source = source.status().url;
    loading.compare_which = which;
}

namespace {

// The text's tokenizer before a model is in: GPT-2's vocabulary, unless a model on its way may
// bring its own tokenizer.json. The tokens then wait for it, and a page opened on such a model
// never builds GPT-2's (install_model builds it for a model without one).
void keep_text_tokenizer(const ModelLoading& loading, Session& s, const FetchStatus* st) {
    if (s.model || s.tokenizer.loaded()) return;
    const bool on_its_way = st && (st->phase == FetchStatus::Phase::Probing || st->phase == FetchStatus::Phase::Downloading ||
                                   st->phase == FetchStatus::Phase::Ready);
    if (on_its_way && st->url != loading.builtin_source && st->url != loading.twin_source) return;
    s.tokenizer = gpt2_vocabulary(s);
    s.tokens_text.clear();  // encode the text again, now that there is a tokenizer
}

}  // namespace

void keep_model_loading(ModelLoading& loading, Session& s, ModelSource* from) {
    if (!from) return keep_text_tokenizer(loading, s, nullptr);
    ModelSource& source = *from;
    FetchStatus st = source.status();
    // A cached copy (or a local file) needs no download: skip the question.
    if (st.phase == FetchStatus::Phase::Confirm && st.cached) {
        source.download(st.url);
        st = source.status();
    }
    // A new attempt (also one the page started: a dropped file) retires the last one's error.
    if (st.phase != FetchStatus::Phase::Failed) loading.reported_failure.clear();
    if ((st.phase == FetchStatus::Phase::Probing || st.phase == FetchStatus::Phase::Downloading) && !s.model_error.empty())
        forget_failure(loading, s);
    if (st.phase == FetchStatus::Phase::Ready) {
        take_loaded_bytes(loading, source, s);
        st = source.status();
    }
    // Nothing on its way (cancelled, failed): the view names the model it shows, so that a link
    // made now reopens what the reader sees.
    if (s.model && (st.phase == FetchStatus::Phase::Idle || st.phase == FetchStatus::Phase::Failed))
        s.view.model_url = link_address(*s.model);
    if (!st.notice.empty() && st.notice != loading.shown_notice) {
        loading.shown_notice = st.notice;
        s.message = st.notice;
    }
    // A failure is reported once (a file dropped right after another failure is a new one).
    if (st.phase == FetchStatus::Phase::Failed && loading.reported_failure != st.url + '\n' + st.error) {
        if (!loading.compare_source.empty() && st.url == loading.compare_source) {
            // The model stays, and is not the one that failed: the comparison and the banner say why.
            s.twin_error = "The twin did not load: " + st.error;
            s.message = s.twin_error;
            loading.compare_source.clear();
        } else {
            report_failure(loading, s, st.error);
        }
        loading.reported_failure = st.url + '\n' + st.error;
    }
    keep_text_tokenizer(loading, s, &st);
}

}  // namespace attnlab
