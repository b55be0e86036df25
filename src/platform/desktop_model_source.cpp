#include "platform/desktop_model_source.h"

#include <filesystem>
#include <memory>
#include <system_error>

#include "platform/mapped_file.h"
#include "platform/whole_file.h"

namespace attnlab {

namespace fs = std::filesystem;

namespace {

// A folder means the model.safetensors inside it.
std::string checkpoint_path(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return (fs::path(path) / "model.safetensors").string();
    return path;
}

}  // namespace

void DesktopModelSource::fail(const std::string& path, std::string message) {
    status_ = FetchStatus{};
    status_.phase = FetchStatus::Phase::Failed;
    status_.url = path;
    status_.error = std::move(message);
}

namespace {

// Web addresses are for the browser build: say what to do instead.
bool refuse_web_address(const std::string& input, std::string& error) {
    if (input.find("://") == std::string::npos) return false;
    error = "The desktop build loads files; download the model first (for example with curl -LO " + input +
            ", and config.json from the same folder) and type the file's path.";
    return true;
}

}  // namespace

void DesktopModelSource::probe(const std::string& input) {
    std::string error;
    if (refuse_web_address(input, error)) {
        fail(input, error);
        return;
    }
    const std::string path = checkpoint_path(input);
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec) {
        fail(path, path + ": " + (fs::exists(path) ? ec.message() : std::string("no such file")));
        return;
    }
    status_ = FetchStatus{};
    status_.phase = FetchStatus::Phase::Confirm;
    status_.url = path;
    status_.total_bytes = static_cast<double>(size);
    status_.cached = true;  // on disk already: nothing to download
}

void DesktopModelSource::download(const std::string& input) {
    std::string error;
    if (refuse_web_address(input, error)) {
        fail(input, error);
        return;
    }
    const std::string path = checkpoint_path(input);
    auto file = std::make_shared<MappedFile>();
    if (!file->open(path, error)) {
        fail(path, error);
        return;
    }
    bytes_.bytes = file->bytes();
    bytes_.owner = file;
    // config.json beside the checkpoint, when there is one.
    const fs::path config = fs::path(path).parent_path() / "config.json";
    config_json_.clear();
    std::error_code ec;
    if (fs::is_regular_file(config, ec) && !read_whole_file(config.string(), config_json_, error)) {
        fail(path, error);
        return;
    }
    source_ = path;
    status_ = FetchStatus{};
    status_.phase = FetchStatus::Phase::Ready;
    status_.url = path;
    status_.total_bytes = status_.done_bytes = static_cast<double>(bytes_.bytes.size());
    status_.cached = true;
}

void DesktopModelSource::cancel() {
    bytes_ = {};
    status_.phase = FetchStatus::Phase::Idle;
    status_.error.clear();
}

bool DesktopModelSource::take_result(ModelFiles& files) {
    if (status_.phase != FetchStatus::Phase::Ready) return false;
    files = ModelFiles{};
    files.bytes = std::move(bytes_);
    bytes_ = {};
    files.config_json = std::move(config_json_);
    config_json_.clear();
    files.source = source_;
    status_.phase = FetchStatus::Phase::Idle;
    return true;
}

}  // namespace attnlab
