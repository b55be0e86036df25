#include "app/analysis_export.h"

#include "analysis/query_analysis.h"
#include "base/json.h"
#include "base/utf8.h"

namespace attnlab {

namespace {
// A token's bytes as valid UTF-8 for JSON: a byte-level token can be half a character, so
// invalid sequences become U+FFFD (the bytes themselves are in the vocabulary, by id).
std::string printable(const std::string& bytes) {
    std::string out;
    for (size_t i = 0; i < bytes.size();) {
        char32_t cp = 0;
        const int n = utf8_next(bytes, i, cp);
        if (n > 0) {
            out.append(bytes, i, static_cast<size_t>(n));
            i += static_cast<size_t>(n);
        } else {
            append_utf8(out, 0xFFFD);
            i += static_cast<size_t>(-n);
        }
    }
    return out;
}
}  // namespace

std::string analysis_json(const Session& s) {
    json::ObjectBuilder o;
    o.add("attnlab", "analysis-v1");
    o.add_raw("view", view_state_json(s.view));
    if (s.model) {
        const DecoderShape& c = s.model->shape;
        json::ObjectBuilder m;
        m.add("source", s.model->source).add("n_layer", c.n_layer).add("n_head", c.n_head).add("n_embd", c.hidden);
        m.add("n_positions", c.max_positions).add("vocab_size", c.vocab);
        o.add_raw("model", m.str());
    } else {
        o.add_raw("model", "null");
    }
    json::ArrayBuilder tokens;
    const std::vector<int>& ids = s.forward ? s.forward->tokens : s.tokens;
    for (int id : ids) {
        json::ObjectBuilder t;
        t.add("id", id);
        if (s.tokenizer.loaded() && id >= 0 && id < s.tokenizer.vocab_size()) t.add("text", printable(s.tokenizer.token_bytes(id)));
        tokens.add_raw(t.str());
    }
    o.add_raw("tokens", tokens.str());
    // The text's tokens as the page counts them (status().tokens).
    o.add_raw("token_ids", json::ArrayBuilder().add_all(s.tokens).str());

    // The chosen head and query, analysed exactly as `attnlab analyze` would.
    QuerySlice slice;
    std::string error;
    QueryReport report;
    bool ok = chosen_query_slice(s, slice, error);
    if (ok) {
        QueryInput in;
        in.logits = slice.logits;
        in.vectors = slice.values;
        in.N = s.view.N;
        in.T = slice.T;
        in.normalizer = slice.normalizer;
        in.eps = {1e-3, 1e-1, 10.0};
        if (s.view.eps != 1e-3 && s.view.eps != 1e-1 && s.view.eps != 10.0) in.eps.push_back(s.view.eps);
        const int L = static_cast<int>(in.logits.size());
        if (in.N < 1 || in.N >= L) {
            ok = false;
            error =
                "N = " + std::to_string(in.N) + " needs a query that sees more than N tokens (this one sees " + std::to_string(L) + ").";
        } else {
            ok = analyze_query(in, report, error);
        }
    }
    if (ok) {
        json::ObjectBuilder q;
        q.add("layer", slice.layer).add("head", slice.head).add("position", slice.query);
        q.add_raw("report", query_report_json(report));
        o.add_raw("query", q.str());
    } else {
        o.add_raw("query", "null");
        o.add("query_error", error);
    }
    return o.str();
}

}  // namespace attnlab
