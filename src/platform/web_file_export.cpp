#include "platform/web_file_export.h"

#include <emscripten.h>

#include <cstdint>
#include <cstdio>

// A download: a Blob URL on a temporary <a download>. One helper for text and pictures, put on
// Module once (EM_JS bodies cannot call each other's JavaScript).
// clang-format off
EM_JS(void, js_install_download, (), {
    Module.attnlabDownload = (blob, name) => {
        const url = URL.createObjectURL(blob);
        const a = document.createElement("a");
        a.href = url;
        a.download = name;
        document.body.appendChild(a);
        a.click();
        a.remove();
        setTimeout(() => URL.revokeObjectURL(url), 60000);
    };
});
// clang-format on
// Text exports are also kept for window.attnlab.lastExport() (tests, scripted demos).
// clang-format off
EM_JS(void, js_download_text, (const char* name_ptr, const char* mime_ptr, const char* data, int size), {
    const name = UTF8ToString(name_ptr), mime = UTF8ToString(mime_ptr);
    const text = UTF8ToString(data, size);
    Module.attnlabLastExport = { name: name, mime: mime, text: text, bytes: size };
    try {
        Module.attnlabDownload(new Blob([text], { type: mime }), name);
    } catch (e) {
        console.warn("AttnLab: download of " + name + " failed: " + e);
    }
});
// clang-format on
// rgba: w*h*4 bytes, rows top-down. The browser encodes the PNG, then reports its size back.
// clang-format off
EM_JS(void, js_download_png, (const char* name_ptr, const std::uint8_t* rgba, int w, int h), {
    const name = UTF8ToString(name_ptr);
    const report = (bytes) => {
        ccall("attnlab_export_saved", null, ["string", "string", "number"], [name, "image/png", bytes]);
        if (Module._attnlab_request_redraw) Module._attnlab_request_redraw();
    };
    try {
        const canvas = document.createElement("canvas");
        canvas.width = w;
        canvas.height = h;
        const pixels = new Uint8ClampedArray(HEAPU8.subarray(rgba, rgba + w * h * 4));  // a copy
        canvas.getContext("2d").putImageData(new ImageData(pixels, w, h), 0, 0);
        canvas.toBlob((blob) => {
            if (!blob) { report(-1); return; }
            Module.attnlabLastExport = { name: name, mime: "image/png", text: null, bytes: blob.size };
            Module.attnlabDownload(blob, name);
            report(blob.size);
        }, "image/png");
    } catch (e) {
        console.warn("AttnLab: PNG export of " + name + " failed: " + e);
        report(-1);
    }
});
// clang-format on

namespace attnlab {

namespace {
WebFileExport* g_export = nullptr;  // for the page's callback
}

WebFileExport::WebFileExport() {
    g_export = this;
    js_install_download();
}
WebFileExport::~WebFileExport() {
    if (g_export == this) g_export = nullptr;
}

void WebFileExport::save_text(const std::string& file_name, std::string_view mime_type, std::string_view content) {
    const std::string mime(mime_type);
    js_download_text(file_name.c_str(), mime.c_str(), content.data(), static_cast<int>(content.size()));
    char kb[32];
    std::snprintf(kb, sizeof kb, "%.1f KB", static_cast<double>(content.size()) / 1024.0);
    message_ = "Downloaded " + file_name + " (" + kb + ").";
    record_ = {file_name, mime, static_cast<double>(content.size())};
}

void WebFileExport::save_png(const std::string& file_name, PixelRect rect) {
    pending_.push_back({file_name, rect});
    message_ = "Saving " + file_name + "...";
}

void WebFileExport::after_render(int fb_w, int fb_h) {
    read_plot_grabs(pending_, fb_w, fb_h, message_, [](const std::string& name, const std::vector<std::uint8_t>& rgba, int w, int h) {
        js_download_png(name.c_str(), rgba.data(), w, h);
    });
}

void WebFileExport::on_saved(const char* name, const char* mime, double bytes) {
    if (bytes < 0) {
        message_ = std::string(name) + ": the browser could not make the PNG.";
        return;
    }
    char kb[32];
    std::snprintf(kb, sizeof kb, "%.1f KB", bytes / 1024.0);
    message_ = std::string("Downloaded ") + name + " (" + kb + ").";
    record_ = {name, mime, bytes};
}

}  // namespace attnlab

extern "C" EMSCRIPTEN_KEEPALIVE void attnlab_export_saved(const char* name, const char* mime, double bytes) {
    if (attnlab::g_export) attnlab::g_export->on_saved(name, mime, bytes);
}
