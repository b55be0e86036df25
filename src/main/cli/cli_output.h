#pragma once
// What the experiment commands write, shared: CSV numbers, tables with text cells, whole files,
// and the JSON blocks that name the model and the text a run used.
#include <filesystem>
#include <string>
#include <vector>

#include "main/cli/cli_checkpoint.h"
#include "main/cli/cli_text_nll.h"

namespace attnlab {

// "attnlab COMMAND: message" on stderr; returns `code` (1: the run failed, 2: bad usage).
int command_failed(const char* command, const std::string& message, int code = 1);
// --help or -h as the command's first argument: prints `help` on stdout and returns true.
bool printed_help(int argc, char** argv, int first, const char* help);

// %.17g (round-trips a double); "nan" for NaN.
std::string csv_number(double v);

// A table with text and number cells, written as CSV (no cell holds a comma or a quote).
struct TextTable {
    std::string name;  // the file is DIR/<name>.csv
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
};

// Creates the --out folder (and its parents); false with "DIR: cannot create the output folder: why".
bool make_output_folder(const std::filesystem::path& dir, std::string& error);
// Writes `text` to `path`; false with "PATH: cannot write" when it cannot.
bool write_text_file(const std::filesystem::path& path, const std::string& text, std::string& error);
bool write_table(const std::filesystem::path& dir, const TextTable& t, std::string& error);
// The table as JSON, {"columns": [...], "rows": [[...], ...]}: a cell that csv_number wrote is a
// number ("nan" is null, as JSON has no NaN), any other cell a string.
std::string table_json(const TextTable& t);

// {"path", "sha256", "n_layer", "n_head", "n_embd"} of the checkpoint.
std::string checkpoint_json(const Checkpoint& ck);
// {"path", "sha256", "bytes", "tokens", "tokens_used", "cut"} of the text.
std::string text_input_json(const TextInput& in);

}  // namespace attnlab
