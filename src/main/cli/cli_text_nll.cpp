#include "main/cli/cli_text_nll.h"

#include <algorithm>
#include <cstdio>

#include "main/cli/cli_vocabulary.h"
#include "platform/whole_file.h"

namespace attnlab {

bool read_text_input(const CliArgs& args, const DecoderModel& model, int limit, const char* command, TextInput& in, std::string& error,
                     bool& usage) {
    usage = true;
    if (args.value("text").has_value() == args.value("ids").has_value()) {
        error = "give the text as --text FILE or as --ids 1,2,3 (one of them)";
        return false;
    }
    const int vocab = model.shape().vocab;
    if (args.value("ids")) {
        std::vector<std::int64_t> raw;
        if (!args.get_int_list("ids", 0, vocab - 1, raw, error)) return false;
        in.path = "--ids";
        in.bytes = *args.value("ids");
        in.ids.assign(raw.begin(), raw.end());
    } else {
        usage = false;
        Gpt2Tokenizer tokenizer;
        in.path = *args.value("text");
        if (!load_text_tokenizer(args, tokenizer, error) || !read_whole_file(in.path, in.bytes, error)) return false;
        std::vector<std::string> warnings;
        in.ids = tokenizer.encode(in.bytes, &warnings);
        for (const std::string& w : warnings) std::fprintf(stderr, "attnlab %s: warning: %s\n", command, w.c_str());
        for (int id : in.ids)
            if (id >= vocab) {
                error = in.path + ": the text has token " + std::to_string(id) + ", outside this model's vocabulary of " +
                        std::to_string(vocab);
                return false;
            }
    }
    in.text_tokens = static_cast<int>(in.ids.size());
    if (static_cast<int>(in.ids.size()) > limit) in.ids.resize(static_cast<size_t>(limit));
    return true;
}

void FinalResidual::on_output(int t0, int n, const float* x) {
    const size_t C = static_cast<size_t>(width_);
    x_.resize((static_cast<size_t>(t0) + static_cast<size_t>(n)) * C);
    std::copy(x, x + static_cast<size_t>(n) * C, x_.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(t0) * C));
}

double mean_next_token_nll(const DecoderModel& model, const std::vector<float>& residual, std::span<const int> ids,
                           std::vector<double>& nll) {
    const int n = static_cast<int>(ids.size());
    model.nll_from_residual(residual.data(), n - 1, ids.subspan(1), nll);
    double sum = 0;
    for (double v : nll) sum += v;
    return sum / static_cast<double>(n - 1);
}

}  // namespace attnlab
