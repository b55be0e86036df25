#include "base/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>

#include "base/json.h"

namespace attnlab {

// The format stores every number little-endian. We read F32 data in place (f32_view, and a
// memcpy in to_f32), which is only right on a little-endian machine; x86-64, ARM64 (as
// Linux and macOS run it) and WebAssembly all are.
static_assert(std::endian::native == std::endian::little, "safetensors views assume a little-endian host");

namespace {

struct DTypeEntry {
    DType type;
    const char* name;
    std::size_t size;
};

// The format's dtype strings, spelled exactly as in the header.
constexpr DTypeEntry kDTypes[] = {
    {DType::F64, "F64", 8},   {DType::F32, "F32", 4},         {DType::F16, "F16", 2},         {DType::BF16, "BF16", 2},
    {DType::I64, "I64", 8},   {DType::I32, "I32", 4},         {DType::I16, "I16", 2},         {DType::I8, "I8", 1},
    {DType::U64, "U64", 8},   {DType::U32, "U32", 4},         {DType::U16, "U16", 2},         {DType::U8, "U8", 1},
    {DType::BOOL, "BOOL", 1}, {DType::F8_E4M3, "F8_E4M3", 1}, {DType::F8_E5M2, "F8_E5M2", 1},
};

// A float from its IEEE bits. memcpy rather than std::bit_cast, which Emscripten 3.1.6's
// libc++ (Debian 12) does not have; compilers turn either into a single move.
float float_from_bits(std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

std::optional<DType> dtype_from_name(std::string_view s) {
    for (const DTypeEntry& e : kDTypes)
        if (s == e.name) return e.type;
    return std::nullopt;
}

// Built with append rather than "'" + s + "'": GCC 12 warns falsely (-Wrestrict, its bug
// 105329) on a literal prepended to a temporary string, and warnings are errors here.
std::string quoted(std::string_view name) {
    std::string s;
    s.reserve(name.size() + 2);
    s.append(1, '\'').append(name).append(1, '\'');
    return s;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

std::string offsets_text(std::uint64_t begin, std::uint64_t end) {
    std::string s = "[";
    s.append(std::to_string(begin)).append(", ").append(std::to_string(end)).append("]");
    return s;
}

// json::parse reports "at byte N: what", N counted in the text it was given. The header
// starts at file byte 8, so say both, which is what someone opening the file in a hex
// editor needs.
std::string json_error_in_file(const std::string& error) {
    constexpr std::string_view prefix = "at byte ";
    if (error.rfind(prefix, 0) != 0) return error;
    std::size_t i = prefix.size();
    std::uint64_t n = 0;
    while (i < error.size() && error[i] >= '0' && error[i] <= '9' && n < (1ull << 56))
        n = n * 10 + static_cast<std::uint64_t>(error[i++] - '0');
    if (i == prefix.size() || error.compare(i, 2, ": ") != 0) return error;
    return "at byte " + std::to_string(n) + " of the header (file byte " + std::to_string(n + 8) + "): " + error.substr(i + 2);
}

// Reads the fields of one tensor entry. Returns an empty string on success, else the part of
// the message after "source: tensor 'name': ".
std::string read_tensor_entry(const json::Value& v, TensorInfo& t) {
    if (!v.is_object())
        return "expected an object with dtype, shape and data_offsets, found " + std::string(json::Value::type_name(v.type()));

    const json::Value* dtype = nullptr;
    const json::Value* shape = nullptr;
    const json::Value* offsets = nullptr;
    for (const json::Value::Member& m : v.members()) {
        const json::Value** slot = m.first == "dtype"          ? &dtype
                                   : m.first == "shape"        ? &shape
                                   : m.first == "data_offsets" ? &offsets
                                                               : nullptr;
        if (!slot) return "unexpected member " + quoted(m.first) + " (a tensor has exactly dtype, shape and data_offsets)";
        if (*slot) return "member " + quoted(m.first) + " appears twice";
        *slot = &m.second;
    }
    if (!dtype) return "no 'dtype'";
    if (!shape) return "no 'shape'";
    if (!offsets) return "no 'data_offsets'";

    if (!dtype->is_string()) return "dtype is " + std::string(json::Value::type_name(dtype->type())) + ", not a string";
    const std::optional<DType> dt = dtype_from_name(dtype->as_string());
    if (!dt) return "unknown dtype '" + dtype->as_string() + "'";
    t.dtype = *dt;

    if (!shape->is_array()) return "shape is " + std::string(json::Value::type_name(shape->type())) + ", not an array";
    t.shape.clear();
    for (std::size_t i = 0; i < shape->items().size(); ++i) {
        const json::Value& d = shape->items()[i];
        const std::optional<std::uint64_t> n = d.as_uint64();
        const std::string what = d.is_number() ? d.as_string() : std::string(json::Value::type_name(d.type()));
        if (!n) return "shape[" + std::to_string(i) + "] is " + what + ", not a non-negative integer";
        if (*n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
            return "shape[" + std::to_string(i) + "] is " + what + ", too large";
        t.shape.push_back(static_cast<std::int64_t>(*n));
    }

    if (!offsets->is_array() || offsets->items().size() != 2)
        return "data_offsets must be an array [begin, end] of two non-negative integers";
    const std::optional<std::uint64_t> b = offsets->items()[0].as_uint64();
    const std::optional<std::uint64_t> e = offsets->items()[1].as_uint64();
    if (!b || !e) return "data_offsets must be an array [begin, end] of two non-negative integers";
    t.begin = *b;
    t.end = *e;
    if (t.begin > t.end) return "data_offsets " + offsets_text(t.begin, t.end) + " end before they begin";

    // end - begin must be exactly the tensor's size. The product is checked for overflow
    // left to right, as the format's reference reader does, and must fit element_count()'s
    // int64 as well.
    std::uint64_t bytes = dtype_size(t.dtype);
    bool overflow = false;
    std::uint64_t count = 1;
    for (std::int64_t d : t.shape) {
        const std::uint64_t u = static_cast<std::uint64_t>(d);
        if (u != 0 && count > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) / u) {
            overflow = true;
            break;
        }
        count *= u;
    }
    if (!overflow && count != 0 && bytes > std::numeric_limits<std::uint64_t>::max() / count) overflow = true;
    if (overflow) return "shape " + shape_text(t.shape) + " of " + dtype_name(t.dtype) + " has more elements than a 64-bit size can count";
    bytes *= count;
    if (t.end - t.begin != bytes)
        return "data_offsets " + offsets_text(t.begin, t.end) + " hold " + std::to_string(t.end - t.begin) + " bytes but shape " +
               shape_text(t.shape) + " of " + dtype_name(t.dtype) + " needs " + std::to_string(bytes);
    return {};
}

}  // namespace

const char* dtype_name(DType t) {
    for (const DTypeEntry& e : kDTypes)
        if (e.type == t) return e.name;
    return "?";
}

std::size_t dtype_size(DType t) {
    for (const DTypeEntry& e : kDTypes)
        if (e.type == t) return e.size;
    return 0;
}

std::int64_t TensorInfo::element_count() const {
    // Unsigned so that a hand-made TensorInfo with an absurd shape wraps instead of being
    // undefined behaviour; shapes the reader accepted always fit.
    std::uint64_t n = 1;
    for (std::int64_t d : shape) n *= static_cast<std::uint64_t>(d);
    return static_cast<std::int64_t>(n);
}

bool SafetensorsReader::open(std::span<const std::uint8_t> file, std::string source, std::string& error) {
    source_ = std::move(source);
    data_.clear();
    sources_.clear();
    tensors_.clear();
    const auto fail = [&](const std::string& what) {
        error = source_ + ": " + what;
        tensors_.clear();
        return false;
    };

    if (file.empty()) return fail("the file is empty; a safetensors file starts with an 8-byte header length");
    if (file.size() < 8)
        return fail("the file is " + std::to_string(file.size()) + " bytes long, too short for the 8-byte header length at byte 0");

    std::uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | file[static_cast<std::size_t>(i)];
    const std::uint64_t room = file.size() - 8;
    // The cap comes first: a header length in the exabytes is a lie, not a truncated file.
    if (n > kMaxHeaderBytes)
        return fail("the header length at byte 0 says " + std::to_string(n) + " bytes, over the " + std::to_string(kMaxHeaderBytes) +
                    "-byte limit");
    if (n > room)
        return fail("the header length at byte 0 says " + std::to_string(n) + " bytes but only " + std::to_string(room) +
                    " follow it (the file is " + std::to_string(file.size()) + " bytes): truncated, or not a safetensors file");

    const std::string_view text(reinterpret_cast<const char*>(file.data()) + 8, static_cast<std::size_t>(n));
    // The format requires the header to start with '{' (padding is allowed only after it).
    if (text.empty() || text[0] != '{') return fail("the header at byte 8 does not start with '{'; it must be a JSON object");
    json::ParseResult parsed = json::parse(text);
    if (!parsed.value) return fail("the header is not valid JSON: " + json_error_in_file(parsed.error));
    const json::Value& root = *parsed.value;
    if (!root.is_object()) return fail("the header is not a JSON object");

    std::vector<std::string_view> names;  // to find duplicates after the loop
    for (const json::Value::Member& m : root.members()) {
        const std::string& name = m.first;
        names.push_back(name);
        if (name == "__metadata__") {
            // Free-form string pairs for the writer's use; we read none, but the format
            // defines their type, and a file that breaks it is not what it claims to be.
            if (!m.second.is_object())
                return fail("'__metadata__' is " + std::string(json::Value::type_name(m.second.type())) +
                            ", it must be an object of strings");
            for (const json::Value::Member& kv : m.second.members())
                if (!kv.second.is_string())
                    return fail("'__metadata__' member " + quoted(kv.first) + " is " + json::Value::type_name(kv.second.type()) +
                                ", it must be a string");
            continue;
        }
        TensorInfo t;
        t.name = name;
        const std::string why = read_tensor_entry(m.second, t);
        if (!why.empty()) return fail("tensor " + quoted(name) + ": " + why);
        tensors_.push_back(std::move(t));
    }

    std::sort(names.begin(), names.end());
    const auto dup = std::adjacent_find(names.begin(), names.end());
    if (dup != names.end()) return fail("the header names " + quoted(*dup) + " more than once");

    // Data order: by begin, then end, so that empty tensors sharing an offset with the next
    // tensor come before it; then name, so the order never depends on the header's.
    std::sort(tensors_.begin(), tensors_.end(), [](const TensorInfo& a, const TensorInfo& b) {
        if (a.begin != b.begin) return a.begin < b.begin;
        if (a.end != b.end) return a.end < b.end;
        return a.name < b.name;
    });

    // The tensors must tile the data section: no byte unaccounted for, none claimed twice.
    const std::uint64_t data_start = 8 + n;
    const std::uint64_t data_size = file.size() - data_start;
    const auto file_byte = [&](std::uint64_t offset) { return std::to_string(data_start + offset); };
    std::uint64_t at = 0;
    const TensorInfo* previous = nullptr;
    for (const TensorInfo& t : tensors_) {
        // Bounds first: a tensor past the end of the file is the clearest thing to report.
        if (t.end > data_size)
            return fail("tensor " + quoted(t.name) + ": data_offsets " + offsets_text(t.begin, t.end) +
                        " end past the data section, which holds " + std::to_string(data_size) + " bytes (file bytes " + file_byte(0) +
                        " to " + std::to_string(file.size()) + ")");
        if (t.begin > at) {
            if (!previous)
                return fail("the first tensor " + quoted(t.name) + " begins at data byte " + std::to_string(t.begin) +
                            ", not 0: " + std::to_string(t.begin) + " bytes from file byte " + file_byte(0) + " belong to no tensor");
            return fail("a hole of " + std::to_string(t.begin - at) + " bytes at file byte " + file_byte(at) + ": tensor " +
                        quoted(previous->name) + " ends at data byte " + std::to_string(at) + " but the next, " + quoted(t.name) +
                        ", begins at " + std::to_string(t.begin));
        }
        if (t.begin < at)
            return fail("tensor " + quoted(t.name) + " (data_offsets " + offsets_text(t.begin, t.end) + ") overlaps " +
                        quoted(previous->name) + " (which ends at data byte " + std::to_string(at) + ", file byte " + file_byte(at) + ")");
        at = t.end;
        previous = &t;
    }
    if (at != data_size) {
        if (!previous)
            return fail("the header lists no tensors but " + std::to_string(data_size) + " bytes of data follow it at file byte " +
                        file_byte(0));
        return fail("the last tensor " + quoted(previous->name) + " ends at data byte " + std::to_string(at) +
                    " but the data section holds " + std::to_string(data_size) + " bytes: " + std::to_string(data_size - at) +
                    " bytes from file byte " + file_byte(at) + " belong to no tensor");
    }

    data_ = {file.subspan(static_cast<std::size_t>(data_start))};
    sources_ = {source_};
    return true;
}

const std::string& SafetensorsReader::source_of(const TensorInfo& t) const {
    return t.shard >= 0 && static_cast<std::size_t>(t.shard) < sources_.size() ? sources_[static_cast<std::size_t>(t.shard)] : source_;
}

const TensorInfo* SafetensorsReader::find(std::string_view name) const {
    for (const TensorInfo& t : tensors_)
        if (t.name == name) return &t;
    return nullptr;
}

std::span<const std::uint8_t> SafetensorsReader::bytes(const TensorInfo& t) const {
    // Guards a TensorInfo that did not come from this reader; ours always pass.
    if (t.shard < 0 || static_cast<std::size_t>(t.shard) >= data_.size()) return {};
    const std::span<const std::uint8_t> data = data_[static_cast<std::size_t>(t.shard)];
    if (t.begin > t.end || t.end > data.size()) return {};
    return data.subspan(static_cast<std::size_t>(t.begin), static_cast<std::size_t>(t.end - t.begin));
}

std::span<const float> SafetensorsReader::f32_view(const TensorInfo& t) const {
    if (t.dtype != DType::F32) return {};
    const std::span<const std::uint8_t> b = bytes(t);
    if (b.size() != static_cast<std::uint64_t>(t.element_count()) * 4) return {};
    if (b.empty()) return {};
    if (reinterpret_cast<std::uintptr_t>(b.data()) % alignof(float) != 0) return {};
    // The bytes are the file's little-endian IEEE floats, which is what a float is here.
    return {reinterpret_cast<const float*>(b.data()), b.size() / 4};
}

bool SafetensorsReader::to_f32(const TensorInfo& t, std::span<float> out, std::string& error) const {
    const std::span<const std::uint8_t> b = bytes(t);
    const std::uint64_t count = static_cast<std::uint64_t>(t.element_count());
    if (b.size() != count * dtype_size(t.dtype)) {
        error = source_of(t) + ": tensor " + quoted(t.name) + " is not one this reader indexed";
        return false;
    }
    if (out.size() != count) {
        error = source_of(t) + ": tensor " + quoted(t.name) + " has " + std::to_string(count) + " elements but the output holds " +
                std::to_string(out.size()) + " floats";
        return false;
    }
    switch (t.dtype) {
        case DType::F32:
            if (!b.empty()) std::memcpy(out.data(), b.data(), b.size());
            return true;
        case DType::F16:
            for (std::size_t i = 0; i < out.size(); ++i) out[i] = f16_to_f32(static_cast<std::uint16_t>(b[2 * i] | (b[2 * i + 1] << 8)));
            return true;
        case DType::BF16:
            for (std::size_t i = 0; i < out.size(); ++i) out[i] = bf16_to_f32(static_cast<std::uint16_t>(b[2 * i] | (b[2 * i + 1] << 8)));
            return true;
        default:
            error = source_of(t) + ": tensor " + quoted(t.name) + " is " + dtype_name(t.dtype) + "; only F32, F16 and BF16 convert to fp32";
            return false;
    }
}

float f16_to_f32(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exp = (h >> 10) & 0x1Fu;
    const std::uint32_t mant = h & 0x3FFu;
    if (exp == 0) {
        // Zero or subnormal: mant * 2^-24, exact in float (at most 10 significant bits, and
        // 2^-24 is far inside float's normal range).
        const float magnitude = static_cast<float>(mant) * 0x1p-24f;
        return sign ? -magnitude : magnitude;
    }
    if (exp == 31) {
        // Infinity (mant == 0) or NaN; the payload moves to the top of float's mantissa,
        // keeping the quiet bit where float keeps it.
        return float_from_bits(sign | 0x7F800000u | (mant << 13));
    }
    // Normal: rebias the exponent from 15 to 127; the mantissa widens with zeros.
    return float_from_bits(sign | ((exp + 127 - 15) << 23) | (mant << 13));
}

float bf16_to_f32(std::uint16_t b) {
    // bfloat16 is the top half of a float, by definition.
    return float_from_bits(static_cast<std::uint32_t>(b) << 16);
}

namespace {

std::uint32_t float_bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

// u >> shift, rounded to nearest, ties to even.
std::uint32_t shift_right_rounded(std::uint32_t u, int shift) {
    if (shift >= 32) return 0;
    const std::uint32_t kept = u >> shift, rest = u & ((1u << shift) - 1), half = 1u << (shift - 1);
    return kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
}

}  // namespace

std::uint16_t f32_to_f16(float f) {
    const std::uint32_t u = float_bits(f);
    const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
    const std::uint32_t exp = (u >> 23) & 0xFFu, mant = u & 0x7FFFFFu;
    if (exp == 0xFF) return static_cast<std::uint16_t>(sign | 0x7C00u | (mant ? 0x200u | (mant >> 13) : 0u));
    const int e = static_cast<int>(exp) - 127 + 15;  // half's biased exponent
    if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7C00u);
    if (e <= 0) {
        // A subnormal half (or zero): the significand with its implicit bit, in units of 2^-24.
        if (e < -10) return sign;  // below half the smallest subnormal: rounds to zero
        return static_cast<std::uint16_t>(sign | shift_right_rounded(mant | 0x800000u, 14 - e));
    }
    // Rounding may carry into the exponent, up to infinity: the bit layout makes that right.
    return static_cast<std::uint16_t>(sign | ((static_cast<std::uint32_t>(e) << 10) + shift_right_rounded(mant, 13)));
}

std::uint16_t f32_to_bf16(float f) {
    const std::uint32_t u = float_bits(f);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // NaN, quiet
    return static_cast<std::uint16_t>(shift_right_rounded(u, 16));
}

}  // namespace attnlab
