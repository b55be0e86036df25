#pragma once
// Saving what the reader exports: CSV and JSON text, and PNG pictures of a region of the
// window. The platform implements it: the web page downloads a file, the desktop writes it
// to the working folder. Implementations report what happened in `last_message()`.
#include <string>
#include <string_view>

namespace attnlab {

struct PixelRect {
    float x = 0, y = 0, w = 0, h = 0;  // ImGui pixels (framebuffer pixels on the web)
};

// The last file saved, for window.attnlab.status().last_export and the tests.
struct ExportRecord {
    std::string name;  // "" before the first export
    std::string mime;
    double bytes = 0;
};

class FileExport {
public:
    virtual ~FileExport() = default;
    virtual void save_text(const std::string& file_name, std::string_view mime_type, std::string_view content) = 0;
    // Captures `rect` of the next rendered frame, at device resolution, as a PNG.
    virtual void save_png(const std::string& file_name, PixelRect rect) = 0;
    virtual std::string last_message() const = 0;
    virtual ExportRecord last_export() const { return {}; }
};

}  // namespace attnlab
