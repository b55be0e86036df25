// attnlab tokenize [--json] [--vocab-dir DIR | --model DIR]: token ids of standard input, by
// GPT-2's vocabulary or by a model folder's tokenizer.json (exactly Hugging Face's
// `tokenizer(text)["input_ids"]`, its special tokens included).
//
// Standard input is read whole and byte-exactly (a trailing newline is text like any other).
// The ids go to stdout on one line, separated by spaces, or as one JSON array with --json.
// Invalid UTF-8 is read as U+FFFD with a warning on stderr; the ids are still printed.
// --batch reads many texts, each as "LENGTH\nBYTES" (its byte length in decimal, a newline, the
// bytes), and prints one line of ids per text: the reference comparisons load a vocabulary once.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "main/cli/cli_args.h"
#include "main/cli/cli_commands.h"
#include "main/cli/cli_vocabulary.h"

namespace attnlab {

namespace {

bool read_stdin(std::string& out) {
    // Raw blocks, no text-mode translation (POSIX streams are binary): every byte counts.
    char block[1 << 16];
    size_t n = 0;
    while ((n = std::fread(block, 1, sizeof block, stdin)) > 0) out.append(block, n);
    return !std::ferror(stdin);
}

// The ids of one text as a line; warnings (invalid UTF-8) go to stderr.
void encode_line(const Tokenizer& tokenizer, std::string_view text, bool json, std::string& line) {
    std::vector<std::string> warnings;
    const std::vector<int> ids = tokenizer.encode(text, &warnings);
    for (const std::string& w : warnings) std::fprintf(stderr, "attnlab tokenize: warning: %s\n", w.c_str());
    line += json ? "[" : "";
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) line += json ? "," : " ";
        line += std::to_string(ids[i]);
    }
    line += json ? "]\n" : "\n";
}

}  // namespace

int cli_tokenize(int argc, char** argv, int first) {
    CliArgs args;
    std::string error;
    if (!args.parse(argc, argv, first, {"vocab-dir", "model"}, {"json", "batch"}, error) ||
        (args.value("vocab-dir") && args.value("model"))) {
        if (error.empty()) error = "--vocab-dir and --model exclude each other";
        std::fprintf(stderr, "attnlab tokenize: %s\nusage: attnlab tokenize [--json] [--batch] [--vocab-dir DIR | --model DIR] < text\n",
                     error.c_str());
        return 2;
    }
    Tokenizer tokenizer;
    const auto model = args.value("model");
    if (!(model ? load_model_tokenizer(*model, tokenizer, error) : load_vocabulary(args.value("vocab-dir"), tokenizer, error))) {
        std::fprintf(stderr, "attnlab tokenize: %s\n", error.c_str());
        return 1;
    }

    std::string input;
    if (!read_stdin(input)) {
        std::fprintf(stderr, "attnlab tokenize: cannot read standard input\n");
        return 1;
    }
    const bool json = args.flag("json");
    std::string out;
    if (args.flag("batch")) {
        // Records "LENGTH\nBYTES", one output line each: many texts for one vocabulary load.
        for (size_t at = 0, k = 0; at < input.size(); ++k) {
            const size_t eol = input.find('\n', at);
            const std::string digits = input.substr(at, eol == std::string::npos ? std::string::npos : eol - at);
            const bool number = !digits.empty() && digits.size() < 12 && digits.find_first_not_of("0123456789") == std::string::npos;
            const size_t len = number ? std::stoull(digits) : 0;
            if (!number || eol == std::string::npos || input.size() - (eol + 1) < len) {
                std::fprintf(stderr, "attnlab tokenize: --batch: record %zu at byte %zu is not \"LENGTH\\nBYTES\"\n", k, at);
                return 1;
            }
            encode_line(tokenizer, std::string_view(input).substr(eol + 1, len), json, out);
            at = eol + 1 + len;
        }
    } else {
        encode_line(tokenizer, input, json, out);
    }
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
        std::fprintf(stderr, "attnlab tokenize: cannot write standard output\n");
        return 1;
    }
    return 0;
}

}  // namespace attnlab
