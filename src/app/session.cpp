#include "app/session.h"

#include <algorithm>
#include <cmath>

#include "base/json.h"
#include "model/open_decoder.h"

namespace attnlab {

std::string ModelFiles::file_name(const std::string& name) const {
    if (!name.empty() && source.ends_with(name)) return source;
    // A file's address or path: its folder; a repository id or a folder: itself.
    std::string folder = source.ends_with(".safetensors") ? source.substr(0, source.find_last_of("/\\") + 1) : source;
    if (!folder.empty() && folder.back() != '/') folder += '/';
    return folder + name;
}

namespace {

// The weights' files inside the buffer: one safetensors file, or the shards the index names.
bool open_weights(LoadedModel& m, const ModelFiles& f, std::string& error) {
    if (f.weights.empty()) return m.reader.open(m.bytes.bytes, m.source, error);
    if (f.index_json.empty()) {
        const ModelFiles::Part& p = f.weights.front();
        return m.reader.open(m.bytes.bytes.subspan(p.offset, p.size), f.file_name(p.name), error);
    }
    ShardIndex index;
    if (!parse_shard_index(f.index_json, f.file_name("model.safetensors.index.json"), index, error)) return false;
    std::vector<SafetensorsReader::Shard> shards;
    for (const std::string& name : index.files) {
        const auto part = std::find_if(f.weights.begin(), f.weights.end(), [&](const ModelFiles::Part& p) { return p.name == name; });
        if (part == f.weights.end()) {
            error = m.source + ": the index names " + name + ", which did not arrive.";
            return false;
        }
        shards.push_back({f.file_name(name), m.bytes.bytes.subspan(part->offset, part->size)});
    }
    return m.reader.open_shards(index, shards, error);
}

}  // namespace

std::shared_ptr<const LoadedModel> load_model(ModelFiles files, std::string& error, BuiltinModel builtin) {
    auto m = std::make_shared<LoadedModel>();
    m->bytes = std::move(files.bytes);
    m->source = std::move(files.source);
    m->builtin = builtin != BuiltinModel::None;
    m->which = builtin;
    if (!open_weights(*m, files, error)) return nullptr;
    m->model = open_decoder(m->reader, files.config_json, files.file_name("config.json"), error, &m->warnings);
    if (!m->model) return nullptr;
    m->shape = m->model->shape();
    m->dtype = weights_dtype(m->reader);
    if (!files.tokenizer_json.empty() && !m->tokenizer.load_json(files.tokenizer_json, files.tokenizer_config_json, error)) {
        error = files.file_name("") + error;
        return nullptr;
    }
    if (m->tokenizer.loaded() && m->tokenizer.vocab_size() > m->shape.vocab) {
        // Ids past the embedding would be refused by every pass: say so once, at the load.
        error = m->source + ": tokenizer.json has " + std::to_string(m->tokenizer.vocab_size()) +
                " tokens, more than the model's vocabulary of " + std::to_string(m->shape.vocab) + ".";
        return nullptr;
    }
    m->name = model_display_name(files.config_json);
    return m;
}

std::string model_display_name(std::string_view config_json) {
    if (config_json.empty()) return {};
    const json::ParseResult doc = json::parse(config_json);  // parse_gpt2_config accepted it already
    if (!doc.value || !doc.value->is_object()) return {};
    const json::Value* name = doc.value->find("attnlab_name");
    if (!name || !name->is_string()) return {};
    // One line in the bar: control characters (a newline in a hand-edited file) become spaces,
    // and an absurdly long name is cut.
    std::string out;
    for (char c : name->as_string()) out += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    constexpr size_t kMax = 120;
    if (out.size() > kMax) {
        size_t cut = kMax;
        while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
        out = out.substr(0, cut) + "…";
    }
    return out;
}

bool chosen_query_place(const Session& s, QuerySlice& out, std::string& error) {
    if (!s.forward || s.forward->tokens.empty()) {
        error = s.model ? "Waiting for the forward pass." : "Load a model to see its attention.";
        return false;
    }
    if (!parse_normalizer(s.view.normalizer, out.normalizer, error)) return false;
    const AttentionCapture& cap = s.forward->capture;
    out.layer = std::clamp(s.view.layer, 0, cap.layers() - 1);
    out.head = std::clamp(s.view.head, 0, cap.n_head() - 1);
    out.query = chosen_query(s);
    out.T = s.view.T;
    return true;
}

bool chosen_query_slice(const Session& s, QuerySlice& out, std::string& error) {
    return chosen_query_place(s, out, error) && fill_query_slice(s, out, error);
}

bool fill_query_slice(const Session& s, QuerySlice& out, std::string& error) {
    const AttentionCapture& cap = s.forward->capture;
    const int d = cap.head_dim(), n = out.query + 1;
    const std::vector<float> q = cap.queries(out.layer, out.head), k = cap.keys(out.layer, out.head), v = cap.values(out.layer, out.head);
    const float* qrow = q.data() + static_cast<size_t>(out.query) * d;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    out.logits.assign(static_cast<size_t>(n), 0.0);
    out.values.resize(n, d);
    for (int j = 0; j < n; ++j) {
        double dot = 0.0;
        for (int c = 0; c < d; ++c) dot += static_cast<double>(qrow[c]) * k[static_cast<size_t>(j) * d + c];
        out.logits[static_cast<size_t>(j)] = dot * scale;
        for (int c = 0; c < d; ++c) out.values(j, c) = v[static_cast<size_t>(j) * d + c];
    }
    if (!check_normalizer_input(out.normalizer, out.logits, out.T, error)) return false;
    out.weights = normalize(out.normalizer, out.logits, out.T);
    return true;
}

QueryKey query_key(const Session& s, const QuerySlice& slice, unsigned ignored) {
    return {s.forward,
            slice.layer,
            slice.head,
            slice.query,
            ignored & kKeyN ? 0 : s.view.N,
            ignored & kKeyT ? 0.0 : slice.T,
            ignored & kKeyEps ? 0.0 : s.view.eps,
            s.view.normalizer};
}

bool chosen_query_place(const Session& s, QuerySlice& out, ChosenQueryView& view) {
    if (chosen_query_place(s, out, view.error)) return true;
    view.ready = false;
    view.key = {};
    return false;
}

bool same_query(const QueryKey& a, const QueryKey& b) {
    return a.pass.lock() == b.pass.lock() && !a.pass.expired() && a.layer == b.layer && a.head == b.head && a.query == b.query &&
           a.N == b.N && a.T == b.T && a.eps == b.eps && a.normalizer == b.normalizer;
}

bool pass_current(const Session& s) { return s.forward && s.forward->tokens == s.tokens && s.forward->plan == s.plan; }

const TextPerplexity* find_perplexity(const Session& s, const std::shared_ptr<const ForwardResult>& pass) {
    if (!pass) return nullptr;
    for (const auto& p : s.perplexities)
        if (p->pass.lock() == pass) return p.get();
    return nullptr;
}

const Tokenizer& gpt2_vocabulary(Session& s) {
    if (s.built_gpt2_vocabulary.loaded() || !s.tokenizer_error.empty()) return s.built_gpt2_vocabulary;
    if (!s.built_gpt2_vocabulary.load(s.gpt2_encoder_json, s.gpt2_vocab_bpe, s.tokenizer_error))  // says why: not tried again
        s.message = "The GPT-2 vocabulary did not load (" + s.tokenizer_error + "); the model panels need it.";
    return s.built_gpt2_vocabulary;
}

void pick_head(Session& s, int layer, int head) {
    s.view.layer = layer;
    s.view.head = head;
    const AttentionPlan& plan = s.plan;
    // With the model as trained the view's normalizer and T stay as the reader (or a tour step)
    // set them: every head runs the same, and the selector is a what-if for the open head.
    if (!s.model || plan == s.model->model->trained_plan()) return;
    if (layer < 0 || head < 0 || layer >= plan.n_layer() || head >= plan.n_head()) return;
    const HeadPlan& h = plan.at(layer, head);
    s.view.normalizer = normalizer_spec(h.normalizer);
    s.view.T = h.temperature;
}

int chosen_query(const Session& s) {
    const int n = s.forward ? static_cast<int>(s.forward->tokens.size()) : static_cast<int>(s.tokens.size());
    if (n == 0) return 0;
    return s.view.query < 0 ? n - 1 : std::min(s.view.query, n - 1);
}

void clamp_view(Session& s) {
    ViewState& v = s.view;
    if (s.model) {
        const DecoderShape& c = s.model->shape;
        v.layer = std::clamp(v.layer, 0, c.n_layer - 1);
        v.head = std::clamp(v.head, 0, c.n_head - 1);
    }
    const int n = static_cast<int>(s.tokens.size());
    if (v.query >= n) v.query = -1;
    v.N = std::clamp(v.N, 1, std::max(1, n - 1));
}

}  // namespace attnlab
