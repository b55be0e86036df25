#include "platform/web_model_source.h"

#include <emscripten.h>
#include <emscripten/heap.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "base/heap_block.h"
#include "base/json.h"
#include "model/open_decoder.h"

// The browser's half lives in web/model_fetch.js (window.attnlabModelFetch).
// clang-format off
EM_JS(void, js_fetch_probe, (int id, const char* url), { window.attnlabModelFetch.probe(id, UTF8ToString(url)); });
EM_JS(void, js_fetch_download, (int id, const char* url, int use_cache), {
    window.attnlabModelFetch.download(id, UTF8ToString(url), use_cache !== 0);
});
EM_JS(void, js_fetch_cancel, (), { window.attnlabModelFetch.cancel(); });
EM_JS(int, js_fetch_keep, (int id, const std::uint8_t* bytes, double size), {
    return window.attnlabModelFetch.keepFromHeap(id, bytes, size);
});
EM_JS(void, js_fetch_stop_keeping, (), { window.attnlabModelFetch.stopKeeping(); });
EM_JS(int, js_fetch_will_keep, (int id), { return window.attnlabModelFetch.willKeep(id) ? 1 : 0; });
EM_JS(void, js_fetch_pick_file, (), { window.attnlabModelFetch.pickFile(); });
EM_JS(void, js_fetch_clear_cache, (int id), { window.attnlabModelFetch.clearCache(id); });
EM_JS(char*, js_fetch_init, (), {
    const url = window.attnlabModelFetch ? window.attnlabModelFetch.init() : "";
    const size = lengthBytesUTF8(url) + 1;
    const ptr = _malloc(size);
    stringToUTF8(url, ptr, size);
    return ptr;
});
// clang-format on

namespace attnlab {

namespace {
WebModelSource* g_source = nullptr;
constexpr double kSpeedWindowMs = 3000;  // speed = bytes over the last 3 s

// Bytes the heap can still hand out: up to its limit past what was ever taken from it, and (in
// the single-threaded page, where asking is cheap) the free blocks below that.
double heap_room() {
    const double top = static_cast<double>(reinterpret_cast<std::uintptr_t>(sbrk(0)));
    double room = static_cast<double>(emscripten_get_heap_max()) - top;
#ifndef __EMSCRIPTEN_PTHREADS__
    room += static_cast<double>(static_cast<unsigned>(mallinfo().fordblks));
#endif
    return room;
}

// A model's passes and analyses need memory beyond its bytes (web/model_fetch.js counts a quarter
// more). Asked once the bytes are in, before the app swaps models: a page that cannot give that
// much fails the load with a message and keeps the model it has, instead of stopping mid-pass.
bool working_memory_available(std::size_t model_bytes) {
    void* p = std::malloc(model_bytes / 4 + (16u << 20));
    std::free(p);
    return p != nullptr;
}
}  // namespace

WebModelSource::WebModelSource() { g_source = this; }

WebModelSource::~WebModelSource() {
    if (g_source == this) g_source = nullptr;
    free_buffer();
}

std::string WebModelSource::init_page() {
    char* url = js_fetch_init();
    std::string out = url ? url : "";
    std::free(url);
    return out;
}

void WebModelSource::free_buffer() {
    heap_block_free(buffer_);
    buffer_ = nullptr;
    capacity_ = size_ = 0;
}

int WebModelSource::start(FetchStatus::Phase phase, const std::string& url) {
    free_buffer();
    // New bytes are coming: the model being kept may soon be replaced, and its buffer must not
    // outlive it for the sake of the cache.
    if (phase == FetchStatus::Phase::Downloading && keeping_) {
        js_fetch_stop_keeping();
        keeping_.reset();
    }
    if (phase == FetchStatus::Phase::Downloading) waiting_.reset();
    status_ = FetchStatus{};
    status_.phase = phase;
    status_.url = url;
    samples_.clear();
    weights_.clear();
    config_json_.clear();
    tokenizer_json_.clear();
    tokenizer_config_json_.clear();
    index_json_.clear();
    source_.clear();
    return ++op_;
}

void WebModelSource::probe(const std::string& url) { js_fetch_probe(start(FetchStatus::Phase::Probing, url), url.c_str()); }

void WebModelSource::download(const std::string& url) {
    const double total = status_.url == url ? status_.total_bytes : -1;  // from the probe, if any
    const bool cached = status_.url == url && status_.cached;
    const int id = start(FetchStatus::Phase::Downloading, url);
    status_.total_bytes = total;
    status_.cached = cached;
    const bool uncached = std::find(uncached_urls_.begin(), uncached_urls_.end(), url) != uncached_urls_.end();
    js_fetch_download(id, url.c_str(), uncached ? 0 : 1);
}

void WebModelSource::cancel() {
    ++op_;
    js_fetch_cancel();
    free_buffer();
    const bool was_loading = status_.phase == FetchStatus::Phase::Probing || status_.phase == FetchStatus::Phase::Downloading ||
                             status_.phase == FetchStatus::Phase::Confirm;
    status_.phase = FetchStatus::Phase::Idle;
    status_.error.clear();
    if (was_loading) status_.notice = "Download of " + status_.url + " cancelled.";
}

void WebModelSource::pick_file() {
    js_fetch_pick_file();  // the page calls on_begin_file once a file is chosen
}

void WebModelSource::clear_cache() {
    if (status_.phase == FetchStatus::Phase::Probing || status_.phase == FetchStatus::Phase::Downloading) cancel();
    status_.notice.clear();
    js_fetch_clear_cache(op_);
}

bool WebModelSource::take_result(ModelFiles& files) {
    if (status_.phase != FetchStatus::Phase::Ready) return false;
    std::shared_ptr<std::uint8_t> owner(buffer_, [](std::uint8_t* p) { heap_block_free(p); });
    files = ModelFiles{};
    files.bytes.owner = owner;
    files.bytes.bytes = {buffer_, size_};
    // The page writes these bytes into Cache Storage when start_cache_copy() says, reading them
    // from the heap: they stay alive (and unchanged: the model only reads them) until it reports
    // the write's end.
    waiting_.reset();
    if (js_fetch_will_keep(op_)) {
        waiting_ = WaitingCopy{owner, size_, op_};
        status_.cache_copy = FetchStatus::CacheCopy::Waiting;
    }
    buffer_ = nullptr;
    capacity_ = size_ = 0;
    files.weights = std::move(weights_);
    files.config_json = std::move(config_json_);
    files.tokenizer_json = std::move(tokenizer_json_);
    files.tokenizer_config_json = std::move(tokenizer_config_json_);
    files.index_json = std::move(index_json_);
    files.source = source_;
    weights_.clear();
    config_json_.clear();
    tokenizer_json_.clear();
    tokenizer_config_json_.clear();
    index_json_.clear();
    status_.phase = FetchStatus::Phase::Idle;  // url, sizes and `cached` stay, for the status line
    return true;
}

void WebModelSource::start_cache_copy() {
    if (!waiting_) return;
    const WaitingCopy w = *waiting_;
    waiting_.reset();
    if (js_fetch_keep(w.id, static_cast<const std::uint8_t*>(w.owner.get()), static_cast<double>(w.size))) {
        keeping_ = w.owner;
        keeping_id_ = w.id;
    } else if (w.id == op_) {
        status_.cache_copy = FetchStatus::CacheCopy::None;
    }
}

void WebModelSource::on_probed(int id, double total, bool cached) {
    if (id != op_) return;
    status_.total_bytes = total;
    status_.cached = cached;
    if (cached) status_.cache_copy = FetchStatus::CacheCopy::Kept;
    if (status_.phase == FetchStatus::Phase::Probing) status_.phase = FetchStatus::Phase::Confirm;
}

std::uint8_t* WebModelSource::on_reserve(int id, double bytes) {
    if (id != op_ || !(bytes >= 0) || bytes > 4.0e9) return nullptr;
    const std::size_t n = static_cast<std::size_t>(bytes);
    if (n <= capacity_) return buffer_;
    // The realloc keeps what arrived; on failure the old buffer stays ours and is freed later.
    std::uint8_t* grown = heap_block_realloc(buffer_, capacity_, n);
    if (!grown) return nullptr;
    buffer_ = grown;
    capacity_ = n;
    return buffer_;
}

bool WebModelSource::on_adopt(int id, std::uint8_t* buffer, double capacity) {
    if (id != op_ || !buffer || !(capacity > 0)) return false;
    heap_block_free(buffer_);
    buffer_ = buffer;
    capacity_ = static_cast<std::size_t>(capacity);
    return true;
}

void WebModelSource::on_progress(int id, double done, double total) {
    if (id != op_ || status_.phase != FetchStatus::Phase::Downloading) return;
    status_.done_bytes = done;
    if (total > 0) status_.total_bytes = total;
    const double now = emscripten_get_now();
    samples_.emplace_back(now, done);
    while (samples_.size() > 2 && now - samples_.front().first > kSpeedWindowMs) samples_.pop_front();
    const double dt = samples_.back().first - samples_.front().first;
    if (dt > 200) status_.bytes_per_second = (samples_.back().second - samples_.front().second) / (dt / 1000.0);
}

void WebModelSource::on_done(int id, double size, const char* manifest, const char* source) {
    if (id != op_) return;
    size_ = static_cast<std::size_t>(size);
    if (size_ > capacity_ || !read_manifest(manifest ? manifest : "")) {  // cannot happen (the page wrote them): be safe
        on_failed(id, "The download ended in an inconsistent state; please try again.");
        return;
    }
    if (!working_memory_available(size_)) {
        on_failed(id, ("Not enough memory to run " + status_.url.substr(status_.url.rfind('/') + 1) +
                       " in this tab; the page keeps the model it has. Close other tabs or reload the page, or try a smaller checkpoint.")
                          .c_str());
        return;
    }
    source_ = source ? source : status_.url;
    // The progress counts the weights (the texts came before them): all of them arrived.
    double weights = 0;
    for (const ModelFiles::Part& p : weights_) weights += static_cast<double>(p.size);
    status_.done_bytes = weights;
    status_.total_bytes = weights;
    status_.phase = FetchStatus::Phase::Ready;
}

bool WebModelSource::read_manifest(std::string_view manifest) {
    const json::ParseResult doc = json::parse(manifest);
    const json::Value* files = doc.value && doc.value->is_object() ? doc.value->find("files") : nullptr;
    if (!files || !files->is_array()) return false;
    for (const json::Value& f : files->items()) {
        const json::Value *name = f.find("name"), *kind = f.find("kind"), *offset = f.find("offset"), *size = f.find("size");
        if (!name || !name->is_string() || !kind || !kind->is_string() || !offset || !size) return false;
        const std::optional<std::uint64_t> at = offset->as_uint64(), n = size->as_uint64();
        if (!at || !n || *at > size_ || *n > size_ - *at) return false;
        const std::string& k = kind->as_string();
        if (k == "weights") {
            weights_.push_back({name->as_string(), static_cast<std::size_t>(*at), static_cast<std::size_t>(*n)});
            continue;
        }
        std::string* text = k == "config"             ? &config_json_
                            : k == "tokenizer"        ? &tokenizer_json_
                            : k == "tokenizer_config" ? &tokenizer_config_json_
                            : k == "index"            ? &index_json_
                                                      : nullptr;
        if (!text) return false;
        text->assign(reinterpret_cast<const char*>(buffer_) + *at, static_cast<std::size_t>(*n));
    }
    return !weights_.empty();
}

void WebModelSource::on_host(int id, const char* host) {
    if (id == op_) status_.host = host ? host : "";
}

void WebModelSource::on_failed(int id, const char* message) {
    if (id != op_) return;
    free_buffer();
    status_.phase = FetchStatus::Phase::Failed;
    status_.error = message ? message : "Loading failed.";
}

void WebModelSource::on_notice(int id, const char* message) {
    // A notice may arrive after its operation ended (the cache write finishes last): accept it
    // unless a newer operation (or a cancel) came since.
    if (id != op_) return;
    status_.notice = message ? message : "";
}

void WebModelSource::on_cache_copy(int id, int state, double saved_bytes) {
    if (id == keeping_id_ && state != 1) keeping_.reset();
    if (id != op_) return;
    status_.cache_copy = state == 2   ? FetchStatus::CacheCopy::Kept
                         : state == 1 ? FetchStatus::CacheCopy::Saving
                                      : FetchStatus::CacheCopy::None;
    status_.cache_saved_bytes = saved_bytes;
}

int WebModelSource::on_begin_file(const char* name, double size) {
    const int id = start(FetchStatus::Phase::Downloading, name ? name : "file");
    status_.total_bytes = size;
    return id;
}

}  // namespace attnlab

// --- called from web/model_fetch.js ------------------------------------------------------

extern "C" {

EMSCRIPTEN_KEEPALIVE void attnlab_fetch_probed(int id, double total, int cached) {
    if (attnlab::g_source) attnlab::g_source->on_probed(id, total, cached != 0);
}

EMSCRIPTEN_KEEPALIVE std::uint8_t* attnlab_fetch_reserve(int id, double bytes) {
    return attnlab::g_source ? attnlab::g_source->on_reserve(id, bytes) : nullptr;
}

EMSCRIPTEN_KEEPALIVE int attnlab_fetch_adopt(int id, std::uint8_t* buffer, double capacity) {
    return attnlab::g_source && attnlab::g_source->on_adopt(id, buffer, capacity) ? 1 : 0;
}

EMSCRIPTEN_KEEPALIVE void attnlab_fetch_progress(int id, double done, double total) {
    if (attnlab::g_source) attnlab::g_source->on_progress(id, done, total);
}

EMSCRIPTEN_KEEPALIVE void attnlab_fetch_done(int id, double size, const char* manifest, const char* source) {
    if (attnlab::g_source) attnlab::g_source->on_done(id, size, manifest, source);
}

EMSCRIPTEN_KEEPALIVE void attnlab_fetch_host(int id, const char* host) {
    if (attnlab::g_source) attnlab::g_source->on_host(id, host);
}

// web/model_fetch.js asks before downloading the weights: the engine's sentence refusing this
// config.json (an unsupported model_type, a field it does not compute), or "" when it reads it.
EMSCRIPTEN_KEEPALIVE const char* attnlab_config_problem(const char* config_json, const char* source) {
    static std::string error;
    error.clear();
    attnlab::DecoderConfig config;
    attnlab::parse_decoder_config(config_json ? config_json : "", source ? source : "config.json", config, error);
    return error.c_str();
}

EMSCRIPTEN_KEEPALIVE void attnlab_fetch_failed(int id, const char* message) {
    if (attnlab::g_source) attnlab::g_source->on_failed(id, message);
}

EMSCRIPTEN_KEEPALIVE void attnlab_fetch_notice(int id, const char* message) {
    if (attnlab::g_source) attnlab::g_source->on_notice(id, message);
}

EMSCRIPTEN_KEEPALIVE int attnlab_fetch_begin(const char* name, double size) {
    return attnlab::g_source ? attnlab::g_source->on_begin_file(name, size) : 0;
}

EMSCRIPTEN_KEEPALIVE void attnlab_fetch_cache_copy(int id, int state, double saved_bytes) {
    if (attnlab::g_source) attnlab::g_source->on_cache_copy(id, state, saved_bytes);
}

// web/model_fetch.js's memory check: what the heap can still give.
EMSCRIPTEN_KEEPALIVE double attnlab_heap_room() { return attnlab::heap_room(); }
// The early download's buffer (web/early_download.js), which download() later adopts: a heap
// block, since a model over 2 GB is more than one malloc can give (base/heap_block.h).
EMSCRIPTEN_KEEPALIVE std::uint8_t* attnlab_heap_block(double bytes) {
    return bytes > 0 && bytes <= 4.0e9 ? attnlab::heap_block_alloc(static_cast<std::size_t>(bytes)) : nullptr;
}
EMSCRIPTEN_KEEPALIVE void attnlab_heap_block_free(std::uint8_t* block) { attnlab::heap_block_free(block); }

EMSCRIPTEN_KEEPALIVE void attnlab_fetch_cache_bytes(double bytes) {
    if (attnlab::g_source) attnlab::g_source->on_cache_bytes(bytes);
}

}  // extern "C"
