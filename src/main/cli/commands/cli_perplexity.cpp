// attnlab perplexity: how well the model, under an attention plan, predicts a text.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "main/cli/cli_args.h"
#include "main/cli/cli_checkpoint.h"
#include "main/cli/cli_commands.h"
#include "main/cli/cli_text_nll.h"
#include "model/attention_capture.h"

namespace attnlab {

namespace {

int fail(const std::string& message, int code = 1) {
    std::fprintf(stderr, "attnlab perplexity: %s\n", message.c_str());
    return code;
}

}  // namespace

int cli_perplexity(int argc, char** argv, int first) {
    CliArgs args;
    std::string error;
    if (!args.parse(argc, argv, first, {"model", "text", "ids", "attention", "max-tokens", "vocab-dir"}, {"json", "capture"}, error))
        return fail(error, 2);
    if (!args.value("model")) return fail("--model FILE is required", 2);
    std::optional<std::int64_t> max_tokens;
    if (!args.get_int("max-tokens", 2, 1 << 30, max_tokens, error)) return fail(error, 2);
    Checkpoint ck;
    if (!open_checkpoint(*args.value("model"), ck, error)) return fail(error);
    const DecoderModel& model = *ck.decoder;
    const DecoderShape shape = model.shape();
    const std::unique_ptr<DecoderState> state = model.new_state();
    if (!attention_plan_option(args.value("attention"), model, state->attention_plan(), error)) return fail(error, 2);

    const int limit = static_cast<int>(std::min<std::int64_t>(shape.max_positions, max_tokens.value_or(shape.max_positions)));
    TextInput in;
    bool usage = false;
    if (!read_text_input(args, model, limit, "perplexity", in, error, usage)) return fail(error, usage ? 2 : 1);
    if (in.ids.size() < 2)
        return fail(in.path + ": the text has " + std::to_string(in.ids.size()) +
                    " token(s); perplexity needs at least 2 (one to predict from, one to predict)");
    if (in.cut() > 0)
        std::fprintf(stderr, "attnlab perplexity: %s has %d tokens; using the first %d (%s), %d cut\n", in.path.c_str(), in.text_tokens,
                     limit, max_tokens && *max_tokens < shape.max_positions ? "--max-tokens" : "the model's context", in.cut());

    // --capture keeps what the page keeps of a pass (every layer's queries, keys and values, as
    // display_storage), alive until the perplexity is done: bench/pass_memory.sh measures with it.
    AttentionCapture capture(false, display_storage(static_cast<int>(in.ids.size())));
    FinalResidual output(shape.hidden, args.flag("capture") ? &capture : nullptr);
    if (!state->prefill(in.ids, error, &output)) return fail(error);
    std::vector<double> nll;
    const double mean = mean_next_token_nll(model, output.residual(), in.ids, nll);
    const int predicted = static_cast<int>(in.ids.size()) - 1;
    if (args.flag("json")) {
        json::ObjectBuilder o;
        o.add("tokens", predicted)
            .add("mean_nll", mean)
            .add("perplexity", std::exp(mean))
            .add("text_tokens", in.text_tokens)
            .add("tokens_used", static_cast<int>(in.ids.size()))
            .add("cut", in.cut())
            .add("attention", attention_spec(state->attention_plan()));
        std::printf("%s\n", o.str().c_str());
        return 0;
    }
    std::printf("perplexity %.4f over %d predicted tokens (mean -ln p %.6f)", std::exp(mean), predicted, mean);
    const std::string spec = attention_spec(state->attention_plan());
    std::printf("%s%s\n", spec.empty() ? "" : ", attention ", spec.c_str());
    return 0;
}

}  // namespace attnlab
