#include "platform/desktop_file_export.h"

#include <cstdio>

#include "platform/png_writer.h"

namespace attnlab {

namespace {
bool exists(const std::string& path) {
    if (FILE* f = std::fopen(path.c_str(), "rb")) {
        std::fclose(f);
        return true;
    }
    return false;
}

// "folder/name.ext", or "folder/name-2.ext", "-3", ... when taken.
std::string free_path(const std::string& folder, const std::string& file_name) {
    const size_t dot = file_name.rfind('.');
    const std::string stem = dot == std::string::npos ? file_name : file_name.substr(0, dot);
    const std::string ext = dot == std::string::npos ? "" : file_name.substr(dot);
    std::string path = folder + "/" + file_name;
    for (int n = 2; exists(path) && n < 10000; ++n) path = folder + "/" + stem + "-" + std::to_string(n) + ext;
    return path;
}
}  // namespace

bool DesktopFileExport::write(const std::string& file_name, std::string_view mime, const void* data, size_t size) {
    const std::string path = free_path(folder_, file_name);
    FILE* f = std::fopen(path.c_str(), "wb");
    bool ok = f != nullptr;
    if (f) {
        ok = std::fwrite(data, 1, size, f) == size;
        ok = std::fclose(f) == 0 && ok;
    }
    if (!ok) {
        message_ = "Could not write " + path + ".";
        return false;
    }
    char kb[32];
    std::snprintf(kb, sizeof kb, "%.1f KB", static_cast<double>(size) / 1024.0);
    message_ = "Saved " + path + " (" + kb + ").";
    record_ = {path.substr(path.rfind('/') + 1), std::string(mime), static_cast<double>(size)};
    return true;
}

void DesktopFileExport::save_text(const std::string& file_name, std::string_view mime_type, std::string_view content) {
    write(file_name, mime_type, content.data(), content.size());
}

void DesktopFileExport::save_png(const std::string& file_name, PixelRect rect) {
    pending_.push_back({file_name, rect});
    message_ = "Saving " + file_name + " after the next frame...";
}

void DesktopFileExport::after_render(int fb_w, int fb_h) {
    read_plot_grabs(pending_, fb_w, fb_h, message_, [&](const std::string& name, const std::vector<std::uint8_t>& rgba, int w, int h) {
        std::vector<std::uint8_t> png;
        std::string error;
        if (encode_png_rgba(w, h, rgba, png, error)) write(name, "image/png", png.data(), png.size());
        else message_ = name + ": " + error;
    });
}

}  // namespace attnlab
