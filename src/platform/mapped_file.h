#pragma once
// A file mapped read-only into memory (POSIX mmap), natively only: the CLI's and the tools'
// way to hand a checkpoint to SafetensorsReader without reading 548 MB into a buffer. Pages
// load on first touch and are shared with the page cache, so F32 weights are used in place.
// The browser build has no files: it hands the reader the downloaded bytes instead.
//
// The mapping is private and read-only. If another process truncates the file while it is
// mapped, touching the lost pages raises SIGBUS; nothing in a read-only mapping can prevent
// that, and checkpoints are not rewritten under a running program.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace attnlab {

class MappedFile {
public:
    MappedFile() = default;
    ~MappedFile();
    MappedFile(MappedFile&& other) noexcept;
    MappedFile& operator=(MappedFile&& other) noexcept;
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    // Maps `path` (closing any file mapped before). On failure returns false, leaves the
    // object empty and sets `error` to "path: why" (missing, a directory, not permitted, ...).
    // An empty file succeeds with an empty span: whether empty is acceptable is the format
    // reader's call, and it says so in its own terms.
    bool open(const std::string& path, std::string& error);
    void close();

    // The file's bytes; valid until close(), the next open() or destruction. A move keeps
    // them valid (the mapping itself does not move), so views taken earlier stay good.
    std::span<const std::uint8_t> bytes() const { return {data_, size_}; }

    // Lets the kernel drop the pages read so far from this process's memory (madvise
    // MADV_DONTNEED): after a model has packed its weights into copies of its own, the file's
    // pages it read to do so would otherwise stay resident beside them. Pages touched again load
    // again from the file (the mapping is private and never written), so bytes() stays valid.
    void drop_resident_pages() const;

private:
    const std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

}  // namespace attnlab
