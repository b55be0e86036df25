#pragma once
// A corpus for the experiments: every --text given, each a plain text file (one document), a
// folder of .txt files (one document each, in path order) or a JSONL file (one document per
// line, its "text" field). Windows are cut inside one document, never across two, and the
// outputs list the documents with a hash of the whole corpus, so that runs over different
// corpora cannot be mistaken for one another.
#include <string>
#include <vector>

#include "main/cli/cli_args.h"

namespace attnlab {

struct CorpusDocument {
    std::string source;  // the file, or "FILE:LINE" for a JSONL line
    std::string text;
};

// Reads the documents of every path in order. False with a message naming the path (and the
// line of a JSONL file) on an unreadable file, a folder without .txt files, a JSONL line that is
// not an object with a string "text", or no paths at all.
bool read_corpus(const std::vector<std::string>& paths, std::vector<CorpusDocument>& documents, std::string& error);

// The corpus hash: SHA-256 over one line per document, "<SHA-256 of its text> <its byte count>\n",
// in order; so it changes when any document, or their order or number, changes.
std::string corpus_sha256(const std::vector<CorpusDocument>& documents);

// The corpus an experiment reads: every --text (read_corpus) through the text's tokenizer
// (load_text_tokenizer), or the --ids list as one document (hashed as given). Tokenizer warnings
// go to stderr, prefixed with `command`.
struct TokenizedCorpus {
    std::vector<CorpusDocument> documents;
    std::vector<std::vector<int>> tokens;  // per document
    std::string sha256;                    // corpus_sha256
    std::string documents_json;            // [{source, sha256, bytes, tokens}, ...]
};
bool read_tokenized_corpus(const CliArgs& args, int vocab, const char* command, TokenizedCorpus& corpus, std::string& error);

}  // namespace attnlab
