// libFuzzer target: arbitrary bytes as a shard's units.txt, the per-unit records `attnlab merge`
// reads back (analysis/unit_slice.h). Besides crashes and sanitizer reports, it traps when
// accepted records do not survive a round trip exactly (formatted as a shard writes them and
// parsed again: the same keys and the same doubles, NaN for NaN), or when the same text read a
// second time into the same map is not refused as a unit in two shards. Built and run by
// scripts/fuzz.sh.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "analysis/unit_slice.h"

namespace {

void check(bool ok) {
    if (!ok) __builtin_trap();
}

bool same_value(double a, double b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return std::memcmp(&a, &b, sizeof a) == 0;  // -0 and 0 apart too: %.17g keeps the sign
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace attnlab;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    UnitRecords records;
    std::string error;
    if (!parse_unit_records(text, "units.txt", records, error)) {
        check(error.rfind("units.txt:", 0) == 0);
        return 0;
    }
    UnitRecords again;
    check(parse_unit_records(format_unit_records(records), "again", again, error));
    check(again.size() == records.size());
    for (auto a = records.begin(), b = again.begin(); a != records.end(); ++a, ++b) {
        check(a->first == b->first && a->second.size() == b->second.size());
        for (size_t i = 0; i < a->second.size(); ++i) check(same_value(a->second[i], b->second[i]));
    }
    if (!records.empty()) check(!parse_unit_records(text, "twice", again, error) && error.find("is in two shards") != std::string::npos);
    return 0;
}
