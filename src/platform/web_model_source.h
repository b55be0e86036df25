#pragma once
// The browser's ModelSource: fetch() with progress into a heap buffer, Cache Storage, the file
// picker and drag-and-drop. The browser's half is web/model_fetch.js; this half keeps the state
// (phase, bytes, speed) and the buffer, and hears back through the attnlab_fetch_* callbacks.
// One instance per page (the callbacks find it through a global).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/model_source.h"

namespace attnlab {

class WebModelSource : public ModelSource {
public:
    WebModelSource();
    ~WebModelSource() override;

    void probe(const std::string& url) override;
    void download(const std::string& url) override;
    void cancel() override;
    void pick_file() override;
    bool can_pick_file() const override { return true; }
    void clear_cache() override;
    bool has_cache() const override { return cache_bytes_ > 0; }
    FetchStatus status() const override { return status_; }
    bool take_result(ModelFiles& files) override;
    void start_cache_copy() override;

    // Installs the drop zone and returns the page's ?model= address ("" when there is none).
    std::string init_page();

    // Downloads of `url` bypass Cache Storage (the page's own built-in models: the browser's HTTP
    // cache revalidates them, so a new version of the site is never shadowed by an old copy).
    void add_uncached(std::string url) { uncached_urls_.push_back(std::move(url)); }

    // --- the callbacks' side (web/model_fetch.js, through extern "C" functions) ---
    // Each returns without effect when `id` is not the operation in flight (cancelled, replaced).
    void on_probed(int id, double total, bool cached);
    std::uint8_t* on_reserve(int id, double bytes);  // null when out of memory
    // A buffer the page filled before this operation asked (a link's early download, landed in
    // the heap as it arrived): it becomes this operation's, as if reserved. False when `id` is stale
    // (the page then frees it).
    bool on_adopt(int id, std::uint8_t* buffer, double capacity);
    void on_progress(int id, double done, double total);
    // `manifest`: {"files": [{name, kind, offset, size}]}, the files inside the buffer (kind
    // "weights", "config", "tokenizer", "tokenizer_config" or "index").
    void on_done(int id, double size, const char* manifest, const char* source);
    void on_host(int id, const char* host);  // where the files come from
    void on_failed(int id, const char* message);
    void on_notice(int id, const char* message);
    int on_begin_file(const char* name, double size);  // a picked or dropped file: a new operation
    void on_cache_bytes(double bytes) { cache_bytes_ = bytes; }
    // The copy kept for the next visit: 0 none (the write failed or was stopped), 1 saving, 2 kept.
    // Accepted after the operation ended (the write comes after the load), not after a newer one began.
    void on_cache_copy(int id, int state, double saved_bytes);

private:
    int start(FetchStatus::Phase phase, const std::string& url);
    bool read_manifest(std::string_view manifest);  // the files inside the buffer: false when they do not fit it
    void free_buffer();

    FetchStatus status_;
    int op_ = 0;              // id of the operation in flight; bumped by every start and cancel
    double cache_bytes_ = 0;  // bytes in Cache Storage; -1: no Cache Storage on this page
    std::vector<std::string> uncached_urls_;
    std::shared_ptr<const void> keeping_;  // the loaded bytes the page is writing into Cache Storage
    int keeping_id_ = 0;
    struct WaitingCopy {                    // the loaded bytes to write there at start_cache_copy()
        std::shared_ptr<const void> owner;  // owner.get() is the buffer
        std::size_t size;
        int id;
    };
    std::optional<WaitingCopy> waiting_;

    // The bytes arriving, in a malloc'd buffer handed over (with free) by take_result.
    std::uint8_t* buffer_ = nullptr;
    std::size_t capacity_ = 0, size_ = 0;
    std::vector<ModelFiles::Part> weights_;
    std::string config_json_, tokenizer_json_, tokenizer_config_json_, index_json_, source_;

    // (time in ms, bytes done) over the last few seconds, for the speed.
    std::deque<std::pair<double, double>> samples_;
};

}  // namespace attnlab
