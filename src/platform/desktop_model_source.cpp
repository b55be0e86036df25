#include "platform/desktop_model_source.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <system_error>
#include <vector>

#include "base/shard_index.h"
#include "platform/mapped_file.h"
#include "platform/whole_file.h"

namespace attnlab {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSingleName = "model.safetensors";
constexpr const char* kIndexName = "model.safetensors.index.json";

// A folder means its model.safetensors, or its index when that is what it holds (as the CLI reads it).
fs::path weights_path(const std::string& input) {
    std::error_code ec;
    const fs::path path = input;
    if (!fs::is_directory(path, ec)) return path;
    return fs::exists(path / kSingleName, ec) || !fs::exists(path / kIndexName, ec) ? path / kSingleName : path / kIndexName;
}

bool is_index(const fs::path& path) { return path.filename() == kIndexName; }

// Web addresses are for the browser build: say what to do instead.
bool refuse_web_address(const std::string& input, std::string& error) {
    if (input.find("://") == std::string::npos) return false;
    error =
        "The desktop build loads files; download the model's folder first (model.safetensors or its shards, config.json "
        "and tokenizer.json, for example with huggingface-cli download) and type the folder's path.";
    return true;
}

bool file_size(const fs::path& path, std::size_t& size, std::string& error) {
    std::error_code ec;
    const auto n = fs::file_size(path, ec);
    if (ec) {
        error = path.string() + ": " + (fs::exists(path, ec) ? ec.message() : std::string("no such file"));
        return false;
    }
    size = static_cast<std::size_t>(n);
    return true;
}

// The index and the size of each file it names.
bool read_index(const fs::path& index_path, std::string& text, ShardIndex& index, std::vector<std::size_t>& sizes, std::string& error) {
    if (!read_whole_file(index_path.string(), text, error) || !parse_shard_index(text, index_path.string(), index, error)) return false;
    sizes.assign(index.files.size(), 0);
    for (size_t i = 0; i < index.files.size(); ++i)
        if (!file_size(index_path.parent_path() / index.files[i], sizes[i], error)) {
            error = index_path.string() + ": shard " + index.files[i] + " cannot be read: " + error;
            return false;
        }
    return true;
}

// Every shard into one buffer, in the index's order, each a part named as the index names it.
bool read_shards(const fs::path& index_path, ModelFiles& files, std::string& error) {
    ShardIndex index;
    std::vector<std::size_t> sizes;
    if (!read_index(index_path, files.index_json, index, sizes, error)) return false;
    std::size_t total = 0;
    for (std::size_t s : sizes) total += s;
    auto buffer = std::make_shared<std::vector<std::uint8_t>>(total);
    std::size_t offset = 0;
    for (size_t i = 0; i < index.files.size(); ++i) {
        const fs::path path = index_path.parent_path() / index.files[i];
        std::ifstream in(path, std::ios::binary);
        in.read(reinterpret_cast<char*>(buffer->data() + offset), static_cast<std::streamsize>(sizes[i]));
        if (!in || static_cast<std::size_t>(in.gcount()) != sizes[i]) {
            error = path.string() + ": read error (shard of " + index_path.string() + ")";
            return false;
        }
        files.weights.push_back({index.files[i], offset, sizes[i]});
        offset += sizes[i];
    }
    files.bytes.bytes = std::span<const std::uint8_t>(buffer->data(), buffer->size());
    files.bytes.owner = std::move(buffer);
    return true;
}

bool map_file(const fs::path& path, ModelFiles& files, std::string& error) {
    auto file = std::make_shared<MappedFile>();
    if (!file->open(path.string(), error)) return false;
    files.bytes.bytes = file->bytes();
    files.bytes.owner = std::move(file);
    return true;
}

// config.json, tokenizer.json and tokenizer_config.json beside the weights, when they are there.
bool read_text_files(const fs::path& folder, ModelFiles& files, std::string& error) {
    const std::pair<const char*, std::string*> texts[] = {{"config.json", &files.config_json},
                                                          {"tokenizer.json", &files.tokenizer_json},
                                                          {"tokenizer_config.json", &files.tokenizer_config_json}};
    for (const auto& [name, text] : texts) {
        std::error_code ec;
        if (fs::is_regular_file(folder / name, ec) && !read_whole_file((folder / name).string(), *text, error)) return false;
    }
    return true;
}

}  // namespace

void DesktopModelSource::fail(const std::string& path, std::string message) {
    status_ = FetchStatus{};
    status_.phase = FetchStatus::Phase::Failed;
    status_.url = path;
    status_.error = std::move(message);
}

void DesktopModelSource::probe(const std::string& input) {
    std::string error;
    if (refuse_web_address(input, error)) {
        fail(input, error);
        return;
    }
    const fs::path path = weights_path(input);
    std::size_t total = 0;
    if (is_index(path)) {
        std::string text;
        ShardIndex index;
        std::vector<std::size_t> sizes;
        if (!read_index(path, text, index, sizes, error)) {
            fail(path.string(), error);
            return;
        }
        for (std::size_t s : sizes) total += s;
    } else if (!file_size(path, total, error)) {
        fail(path.string(), error);
        return;
    }
    status_ = FetchStatus{};
    status_.phase = FetchStatus::Phase::Confirm;
    status_.url = path.string();
    status_.total_bytes = static_cast<double>(total);
    status_.cached = true;  // on disk already: nothing to download
}

void DesktopModelSource::download(const std::string& input) {
    std::string error;
    if (refuse_web_address(input, error)) {
        fail(input, error);
        return;
    }
    const fs::path path = weights_path(input);
    ModelFiles files;
    if (!(is_index(path) ? read_shards(path, files, error) : map_file(path, files, error)) ||
        !read_text_files(path.parent_path(), files, error)) {
        fail(path.string(), error);
        return;
    }
    // Messages name a shard under its folder (ModelFiles::file_name), and one file by its path.
    files.source = !is_index(path) ? path.string() : path.has_parent_path() ? path.parent_path().string() : ".";
    status_ = FetchStatus{};
    status_.phase = FetchStatus::Phase::Ready;
    status_.url = path.string();
    status_.total_bytes = status_.done_bytes = static_cast<double>(files.bytes.bytes.size());
    status_.cached = true;
    files_ = std::move(files);
}

void DesktopModelSource::cancel() {
    files_ = ModelFiles{};
    status_.phase = FetchStatus::Phase::Idle;
    status_.error.clear();
}

bool DesktopModelSource::take_result(ModelFiles& files) {
    if (status_.phase != FetchStatus::Phase::Ready) return false;
    files = std::move(files_);
    files_ = ModelFiles{};
    status_.phase = FetchStatus::Phase::Idle;
    return true;
}

}  // namespace attnlab
