#include "platform/mapped_file.h"

#include <cerrno>
#include <cstdint>
#include <limits>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attnlab {

namespace {

// errno as words ("No such file or directory"); std::system_category is thread-safe where
// strerror is not.
std::string errno_text(int err) { return std::system_category().message(err); }

}  // namespace

MappedFile::~MappedFile() { close(); }

MappedFile::MappedFile(MappedFile&& other) noexcept : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
    if (this != &other) {
        close();
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
    }
    return *this;
}

void MappedFile::close() {
    // An empty file was never mapped (mmap refuses length 0), so data_ is null for it.
    if (data_) munmap(const_cast<std::uint8_t*>(data_), size_);
    data_ = nullptr;
    size_ = 0;
}

bool MappedFile::open(const std::string& path, std::string& error) {
    close();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error = path + ": cannot open: " + errno_text(errno);
        return false;
    }
    // The descriptor is only needed to make the mapping; the mapping keeps the file alive.
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};

    struct stat st {};
    if (fstat(fd, &st) != 0) {
        error = path + ": cannot read its size: " + errno_text(errno);
        return false;
    }
    // open() succeeds on a directory for reading; say what it is rather than let mmap fail
    // with "No such device".
    if (S_ISDIR(st.st_mode)) {
        error = path + ": is a directory, not a file";
        return false;
    }
    if (!S_ISREG(st.st_mode)) {
        error = path + ": is not a regular file (a pipe, socket or device cannot be mapped)";
        return false;
    }
    if (st.st_size == 0) return true;
    if (static_cast<std::uintmax_t>(st.st_size) > std::numeric_limits<std::size_t>::max()) {
        error = path + ": is " + std::to_string(st.st_size) + " bytes, too large to map in this address space";
        return false;
    }
    const std::size_t size = static_cast<std::size_t>(st.st_size);
    void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
        error = path + ": cannot map " + std::to_string(size) + " bytes: " + errno_text(errno);
        return false;
    }
    data_ = static_cast<const std::uint8_t*>(p);
    size_ = size;
    return true;
}

void MappedFile::drop_resident_pages() const {
    if (data_) madvise(const_cast<std::uint8_t*>(data_), size_, MADV_DONTNEED);
}

}  // namespace attnlab
