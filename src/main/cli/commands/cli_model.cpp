// attnlab logits | attention | generate: GPT-2 from a safetensors checkpoint.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/random.h"
#include "main/cli/cli_args.h"
#include "main/cli/cli_checkpoint.h"
#include "main/cli/cli_commands.h"
#include "main/cli/cli_vocabulary.h"
#include "model/attention_capture.h"
#include "model/gpt2.h"
#include "model/sampling.h"

namespace attnlab {

namespace {

int fail(const char* command, const std::string& message, int code = 1) {
    std::fprintf(stderr, "attnlab %s: %s\n", command, message.c_str());
    return code;
}

bool read_ids(const CliArgs& args, const DecoderModel& model, std::vector<int>& ids, std::string& error) {
    std::vector<std::int64_t> raw;
    if (!args.value("ids")) {
        error = "--ids is required (comma-separated token ids, e.g. --ids 464,3290)";
        return false;
    }
    if (!args.get_int_list("ids", 0, model.shape().vocab - 1, raw, error)) return false;
    if (raw.empty()) {
        error = "--ids is empty";
        return false;
    }
    ids.assign(raw.begin(), raw.end());
    return true;
}

void print_floats(const float* v, size_t n) {
    for (size_t i = 0; i < n; ++i) std::printf(i ? ",%s" : "%s", json::number(v[i]).c_str());
}

}  // namespace

int cli_logits(int argc, char** argv, int first) {
    CliArgs args;
    std::string error;
    if (!args.parse(argc, argv, first, {"model", "ids", "attention"}, {"json", "all-positions"}, error)) return fail("logits", error, 2);
    if (!args.value("model")) return fail("logits", "--model FILE is required", 2);
    if (args.flag("all-positions") && !args.flag("json")) return fail("logits", "--all-positions needs --json", 2);
    Checkpoint ck;
    if (!open_checkpoint(*args.value("model"), ck, error)) return fail("logits", error);
    std::vector<int> ids;
    if (!read_ids(args, *ck.decoder, ids, error)) return fail("logits", error, 2);
    const std::unique_ptr<DecoderState> state = ck.decoder->new_state();
    if (!attention_plan_option(args.value("attention"), *ck.decoder, state->attention_plan(), error)) return fail("logits", error, 2);
    std::vector<float> logits;
    const bool all = args.flag("all-positions");
    if (!state->forward(ids, logits, error, all)) return fail("logits", error);
    if (all) {
        // One row per position: row t is the distribution of the token after ids[0..t].
        const size_t V = static_cast<size_t>(ck.decoder->shape().vocab);
        std::printf("{\"logits\":[");
        for (size_t t = 0; t < ids.size(); ++t) {
            std::printf(t ? ",[" : "[");
            print_floats(logits.data() + t * V, V);
            std::printf("]");
        }
        std::printf("]}\n");
        return 0;
    }
    if (args.flag("json")) {
        std::printf("{\"logits\":[");
        print_floats(logits.data(), logits.size());
        std::printf("]}\n");
        return 0;
    }
    // For people: the ten most likely next tokens.
    const std::vector<double> p = sampling_distribution(logits, {1.0f, 10, 1.0f});
    std::vector<int> order;
    for (size_t i = 0; i < p.size(); ++i)
        if (p[i] > 0) order.push_back(static_cast<int>(i));
    std::sort(order.begin(), order.end(), [&](int a, int b) { return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)]; });
    const std::vector<double> full = sampling_distribution(logits, {1.0f, 0, 1.0f});
    std::printf("next token after %zu ids (of %d):\n  %8s %12s %10s\n", ids.size(), ck.decoder->shape().vocab, "id", "logit", "prob");
    for (int id : order) std::printf("  %8d %12.5f %10.6f\n", id, logits[static_cast<size_t>(id)], full[static_cast<size_t>(id)]);
    return 0;
}

int cli_attention(int argc, char** argv, int first) {
    CliArgs args;
    std::string error;
    if (!args.parse(argc, argv, first, {"model", "ids", "layer", "head", "temperature", "attention"}, {"json"}, error))
        return fail("attention", error, 2);
    if (!args.value("model")) return fail("attention", "--model FILE is required", 2);
    Checkpoint ck;
    if (!open_checkpoint(*args.value("model"), ck, error)) return fail("attention", error);
    const DecoderShape c = ck.decoder->shape();
    std::vector<int> ids;
    if (!read_ids(args, *ck.decoder, ids, error)) return fail("attention", error, 2);
    std::optional<std::int64_t> layer, head;
    std::optional<double> temperature;
    if (!args.get_int("layer", 0, c.n_layer - 1, layer, error) || !args.get_int("head", 0, c.n_head - 1, head, error) ||
        !args.get_double("temperature", 1e-3, 1e3, temperature, error))
        return fail("attention", error, 2);
    if (!layer || !head) return fail("attention", "--layer and --head are required", 2);

    AttentionCapture capture;
    const std::unique_ptr<DecoderState> state = ck.decoder->new_state();
    if (!attention_plan_option(args.value("attention"), *ck.decoder, state->attention_plan(), error)) return fail("attention", error, 2);
    std::vector<float> logits;
    if (!state->forward(ids, logits, error, false, &capture)) return fail("attention", error);
    // The weights the head used under the plan; --temperature re-shapes them at another T
    // afterwards (a view of this head only: the pass and the later layers keep the plan's T).
    HeadPlan how = state->attention_plan().at(static_cast<int>(*layer), static_cast<int>(*head));
    if (temperature) how.temperature = static_cast<float>(*temperature);
    const std::vector<float> w = capture.weights(static_cast<int>(*layer), static_cast<int>(*head), how);
    const size_t T = ids.size();
    if (args.flag("json")) {
        std::printf("{\"weights\":[");
        for (size_t i = 0; i < T; ++i) {
            std::printf(i ? ",[" : "[");
            print_floats(w.data() + i * T, T);
            std::printf("]");
        }
        std::printf("]}\n");
        return 0;
    }
    std::printf("layer %lld, head %lld: row = query position, column = key position\n", static_cast<long long>(*layer),
                static_cast<long long>(*head));
    for (size_t i = 0; i < T; ++i) {
        for (size_t j = 0; j < T; ++j) std::printf(j ? " %6.4f" : "%6.4f", w[i * T + j]);
        std::printf("\n");
    }
    return 0;
}

int cli_generate(int argc, char** argv, int first) {
    CliArgs args;
    std::string error;
    if (!args.parse(argc, argv, first, {"model", "prompt", "ids", "n", "temperature", "top-k", "top-p", "seed", "vocab-dir", "attention"},
                    {"json"}, error))
        return fail("generate", error, 2);
    if (!args.value("model")) return fail("generate", "--model FILE is required", 2);
    std::optional<std::int64_t> n, top_k, seed;
    std::optional<double> temperature, top_p;
    if (!args.get_int("n", 1, 1 << 20, n, error) || !args.get_int("top-k", 0, 1 << 30, top_k, error) ||
        !args.get_int("seed", 0, INT64_MAX, seed, error) || !args.get_double("temperature", 0.0, 100.0, temperature, error) ||
        !args.get_double("top-p", 0.0, 1.0, top_p, error))
        return fail("generate", error, 2);
    if (!n) return fail("generate", "-n N (tokens to generate) is required", 2);
    if (args.value("prompt").has_value() == args.value("ids").has_value())
        return fail("generate", "give the prompt as --prompt TEXT or as --ids 1,2,3 (one of them)", 2);

    Checkpoint ck;
    if (!open_checkpoint(*args.value("model"), ck, error)) return fail("generate", error);
    Gpt2Tokenizer tokenizer;
    const bool have_tokenizer = load_text_tokenizer(args, tokenizer, error);
    std::vector<int> ids;
    if (args.value("prompt")) {
        if (!have_tokenizer) return fail("generate", error);
        std::vector<std::string> warnings;
        ids = tokenizer.encode(*args.value("prompt"), &warnings);
        for (const std::string& w : warnings) std::fprintf(stderr, "attnlab: warning: %s\n", w.c_str());
        if (ids.empty()) return fail("generate", "the prompt is empty", 2);
        for (int id : ids)
            if (id >= ck.decoder->shape().vocab)
                return fail("generate", "the prompt has token " + std::to_string(id) + ", outside this model's vocabulary");
    } else if (!read_ids(args, *ck.decoder, ids, error)) {
        return fail("generate", error, 2);
    }
    const int limit = ck.decoder->shape().max_positions;
    if (static_cast<int>(ids.size()) + *n > limit)
        return fail("generate",
                    "prompt (" + std::to_string(ids.size()) + " tokens) + -n " + std::to_string(*n) + " exceeds the model's " +
                        std::to_string(limit) + " positions",
                    2);

    const SamplingOptions options{static_cast<float>(temperature.value_or(0.0)), static_cast<int>(top_k.value_or(0)),
                                  static_cast<float>(top_p.value_or(1.0))};
    SplitMix64 rng(static_cast<std::uint64_t>(seed.value_or(0)));
    const std::unique_ptr<DecoderState> state = ck.decoder->new_state();
    if (!attention_plan_option(args.value("attention"), *ck.decoder, state->attention_plan(), error)) return fail("generate", error, 2);
    std::vector<float> logits;
    std::vector<int> out;
    if (!state->forward(ids, logits, error)) return fail("generate", error);
    if (!args.flag("json") && have_tokenizer) std::fputs(tokenizer.decode(ids).c_str(), stdout);
    for (std::int64_t i = 0; i < *n; ++i) {
        const int next = sample_token(logits, options, rng.uniform());
        out.push_back(next);
        if (!args.flag("json")) {
            if (have_tokenizer) std::fputs(tokenizer.token_bytes(next).c_str(), stdout);
            else std::printf("%s%d", i ? "," : "", next);
            std::fflush(stdout);
        }
        if (i + 1 < *n && !state->forward(std::vector<int>{next}, logits, error)) return fail("generate", error);
    }
    if (args.flag("json")) {
        std::printf("{\"prompt_ids\":[");
        for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? ",%d" : "%d", ids[i]);
        std::printf("],\"ids\":[");
        for (size_t i = 0; i < out.size(); ++i) std::printf(i ? ",%d" : "%d", out[i]);
        std::printf("]");
        if (have_tokenizer) std::printf(",\"text\":%s", json::quote(tokenizer.decode(out)).c_str());
        std::printf("}\n");
    } else {
        std::printf("\n");
    }
    return 0;
}

}  // namespace attnlab
