#include "main/cli/cli_corpus.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "base/json.h"
#include "base/sha256.h"
#include "main/cli/cli_vocabulary.h"
#include "platform/whole_file.h"

namespace attnlab {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Every .txt file under `folder` (recursively), sorted by path so that the order does not depend
// on the file system.
bool read_folder(const std::string& folder, std::vector<CorpusDocument>& documents, std::string& error) {
    std::vector<std::string> files;
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(folder, ec); !ec && it != std::filesystem::recursive_directory_iterator();
         it.increment(ec))
        if (it->is_regular_file() && it->path().extension() == ".txt") files.push_back(it->path().string());
    if (ec) {
        error = folder + ": cannot be listed (" + ec.message() + ")";
        return false;
    }
    if (files.empty()) {
        error = folder + ": the folder has no .txt files";
        return false;
    }
    std::sort(files.begin(), files.end());
    for (const std::string& f : files) {
        CorpusDocument d{f, {}};
        if (!read_whole_file(f, d.text, error)) return false;
        documents.push_back(std::move(d));
    }
    return true;
}

bool read_jsonl(const std::string& path, std::vector<CorpusDocument>& documents, std::string& error) {
    std::string bytes;
    if (!read_whole_file(path, bytes, error)) return false;
    size_t start = 0, found = 0;
    for (int line = 1; start < bytes.size(); ++line) {
        size_t end = bytes.find('\n', start);
        if (end == std::string::npos) end = bytes.size();
        const std::string_view text(bytes.data() + start, end - start);
        start = end + 1;
        const std::string where = path + ":" + std::to_string(line);
        if (text.find_first_not_of(" \t\r") == std::string_view::npos) continue;  // blank lines separate nothing
        const json::ParseResult parsed = json::parse(text);
        if (!parsed.value) {
            error = where + ": not JSON (" + parsed.error + ")";
            return false;
        }
        const json::Value* field = parsed.value->is_object() ? parsed.value->find("text") : nullptr;
        if (!field || !field->is_string()) {
            error = where + ": each line must be a JSON object with a string field \"text\"";
            return false;
        }
        documents.push_back({where, field->as_string()});
        ++found;
    }
    if (found == 0) {
        error = path + ": the JSONL file has no lines";
        return false;
    }
    return true;
}

}  // namespace

bool read_corpus(const std::vector<std::string>& paths, std::vector<CorpusDocument>& documents, std::string& error) {
    documents.clear();
    if (paths.empty()) {
        error = "no --text given";
        return false;
    }
    for (const std::string& p : paths) {
        std::error_code ec;
        if (std::filesystem::is_directory(p, ec)) {
            if (!read_folder(p, documents, error)) return false;
        } else if (ends_with(p, ".jsonl")) {
            if (!read_jsonl(p, documents, error)) return false;
        } else {
            CorpusDocument d{p, {}};
            if (!read_whole_file(p, d.text, error)) return false;
            documents.push_back(std::move(d));
        }
    }
    return true;
}

std::string corpus_sha256(const std::vector<CorpusDocument>& documents) {
    std::string lines;
    for (const CorpusDocument& d : documents) lines += sha256_hex(d.text) + " " + std::to_string(d.text.size()) + "\n";
    return sha256_hex(lines);
}

bool read_tokenized_corpus(const CliArgs& args, int vocab, const char* command, TokenizedCorpus& corpus, std::string& error) {
    corpus = {};
    if (args.value("text")) {
        Gpt2Tokenizer tokenizer;
        if (!load_text_tokenizer(args, tokenizer, error) || !read_corpus(args.values("text"), corpus.documents, error)) return false;
        for (const CorpusDocument& d : corpus.documents) {
            std::vector<std::string> warnings;
            corpus.tokens.push_back(tokenizer.encode(d.text, &warnings));
            for (const std::string& w : warnings)
                std::fprintf(stderr, "attnlab %s: warning: %s: %s\n", command, d.source.c_str(), w.c_str());
        }
    } else {
        std::vector<std::int64_t> raw;
        if (!args.get_int_list("ids", 0, vocab - 1, raw, error)) return false;
        corpus.documents.push_back({"--ids", *args.value("ids")});  // hashed as given
        corpus.tokens.emplace_back(raw.begin(), raw.end());
    }
    json::ArrayBuilder listed;
    for (size_t i = 0; i < corpus.documents.size(); ++i)
        listed.add_raw(json::ObjectBuilder()
                           .add("source", corpus.documents[i].source)
                           .add("sha256", sha256_hex(corpus.documents[i].text))
                           .add_raw("bytes", std::to_string(corpus.documents[i].text.size()))
                           .add("tokens", static_cast<int>(corpus.tokens[i].size()))
                           .str());
    corpus.documents_json = listed.str();
    corpus.sha256 = corpus_sha256(corpus.documents);
    return true;
}

}  // namespace attnlab
