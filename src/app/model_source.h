#pragma once
// Where a checkpoint's bytes come from, as the app sees it. The platform implements it: on the
// web, fetch() with progress, Cache Storage, the file picker and drag-and-drop (web/model_fetch.js
// and src/platform/web_model_source.cpp); natively, files on disk. The app only asks and polls.
#include <string>

#include "app/session.h"

namespace attnlab {

struct FetchStatus {
    enum class Phase {
        Idle,         // nothing asked
        Probing,      // asking the server for the size, and the cache whether it has the file
        Confirm,      // size known, waiting for the reader to say "download"
        Downloading,  // bytes arriving (from the network or the cache)
        Ready,        // bytes complete: take_result()
        Failed,       // `error` says why
    };
    Phase phase = Phase::Idle;
    std::string url;          // or file name, or a Hugging Face repository id
    std::string host;         // the server the files come from ("" for a local file)
    double total_bytes = -1;  // -1: unknown
    double done_bytes = 0;
    double bytes_per_second = 0;
    bool cached = false;  // the file is in the browser's cache (no download needed)
    // The browser's copy of `url` for the next visit: None (not kept: a local file, the built-in
    // model, no Cache Storage, or the write failed, which `notice` explains), Saving (being written;
    // a reload now would download it again), Kept (complete: the next visit reads it from there).
    // Waiting: to be written once the app calls start_cache_copy().
    enum class CacheCopy { None, Waiting, Saving, Kept };
    CacheCopy cache_copy = CacheCopy::None;
    double cache_saved_bytes = 0;  // written so far, while Saving
    std::string error;
    std::string notice;  // news that is not a failure (cache full, cache cleared), any phase
};

class ModelSource {
public:
    virtual ~ModelSource() = default;
    // Finds the size of the file at `url` and whether it is cached; ends in Confirm (or Failed).
    virtual void probe(const std::string& url) = 0;
    // Fetches the file (and config.json beside it, when there is one); ends in Ready or Failed.
    virtual void download(const std::string& url) = 0;
    virtual void cancel() = 0;
    // Asks the reader for a local file (the web's file picker). Ends in Ready or Failed.
    virtual void pick_file() = 0;
    virtual bool can_pick_file() const = 0;
    // Frees the cached checkpoint(s); `done` is reported through status().
    virtual void clear_cache() = 0;
    virtual bool has_cache() const = 0;
    virtual FetchStatus status() const = 0;
    // After Ready: the files (the weights, config.json, tokenizer.json ...) and a name for the
    // source. Returns false when nothing is ready. Resets the status to Idle.
    virtual bool take_result(ModelFiles& files) = 0;
    // Writes the browser's copy of the model last taken (cache_copy Waiting), if it waits. The app
    // calls it once the first pass on that model is done: writing 270 MB into Cache Storage took
    // 3.7 s of the browser's CPU, on the two cores the pass needed (bench/RESULTS.md).
    virtual void start_cache_copy() {}
};

}  // namespace attnlab
