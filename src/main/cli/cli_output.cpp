#include "main/cli/cli_output.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/json.h"
#include "base/sha256.h"

namespace attnlab {

int command_failed(const char* command, const std::string& message, int code) {
    std::fprintf(stderr, "attnlab %s: %s\n", command, message.c_str());
    return code;
}

bool printed_help(int argc, char** argv, int first, const char* help) {
    if (first >= argc || (std::string(argv[first]) != "--help" && std::string(argv[first]) != "-h")) return false;
    std::fputs(help, stdout);
    return true;
}

std::string csv_number(double v) {
    if (std::isnan(v)) return "nan";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

bool make_output_folder(const std::filesystem::path& dir, std::string& error) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (!ec && std::filesystem::is_directory(dir)) return true;
    error = dir.string() + ": cannot create the output folder: " + ec.message();
    return false;
}

bool write_text_file(const std::filesystem::path& path, const std::string& text, std::string& error) {
    FILE* f = std::fopen(path.c_str(), "wb");
    const bool written = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    // fclose also flushes, so a full disk can show up only here.
    if (f && std::fclose(f) == 0 && written) return true;
    error = path.string() + ": cannot write";
    return false;
}

bool write_table(const std::filesystem::path& dir, const TextTable& t, std::string& error) {
    std::string text;
    for (size_t i = 0; i < t.columns.size(); ++i) text += (i ? "," : "") + t.columns[i];
    text += "\n";
    for (const auto& row : t.rows) {
        for (size_t i = 0; i < row.size(); ++i) text += (i ? "," : "") + row[i];
        text += "\n";
    }
    return write_text_file(dir / (t.name + ".csv"), text, error);
}

namespace {

std::string cell_json(const std::string& cell) {
    char* end = nullptr;
    const double v = std::strtod(cell.c_str(), &end);
    const bool number = !cell.empty() && end == cell.c_str() + cell.size();
    if (!number) return json::quote(cell);
    return std::isfinite(v) ? cell : "null";  // JSON has no NaN or Infinity
}

}  // namespace

std::string table_json(const TextTable& t) {
    json::ArrayBuilder rows;
    for (const auto& row : t.rows) {
        json::ArrayBuilder r;
        for (const std::string& cell : row) r.add_raw(cell_json(cell));
        rows.add_raw(r.str());
    }
    json::ObjectBuilder o;
    o.add_raw("columns", json::ArrayBuilder().add_all(t.columns).str()).add_raw("rows", rows.str());
    return o.str();
}

std::string checkpoint_json(const Checkpoint& ck) {
    const DecoderShape c = ck.decoder->shape();
    json::ObjectBuilder model;
    model.add("path", ck.path)
        .add("sha256", sha256_hex(ck.file.bytes()))
        .add("n_layer", c.n_layer)
        .add("n_head", c.n_head)
        .add("n_embd", c.hidden);
    return model.str();
}

std::string text_input_json(const TextInput& in) {
    json::ObjectBuilder text;
    text.add("path", in.path)
        .add("sha256", sha256_hex(in.bytes))
        .add_raw("bytes", std::to_string(in.bytes.size()))
        .add("tokens", in.text_tokens)
        .add("tokens_used", static_cast<int>(in.ids.size()))
        .add("cut", in.cut());
    return text.str();
}

}  // namespace attnlab
