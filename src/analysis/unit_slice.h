#pragma once
// One slice of an experiment's work for a cluster's job array (`--shard K/N`), and the records
// that let `attnlab merge` rebuild the whole run's tables from the slices exactly.
//
// An experiment's work is a list of units (the heads of the five experiments, the windows of
// fading). Each unit's result is a vector of doubles, a record, from which the tables are built
// by the same code in every mode:
//   - no slice: compute every unit, build the tables;
//   - a shard: compute the units [first, end) only, keep their records, build nothing;
//   - a merge: compute nothing, take every unit's record from `given`, build the tables.
// The tables see the same doubles summed in the same order in the three modes, so the last bits
// agree. No I/O: the CLI writes and reads the records.
#include <climits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace attnlab {

// (stage, unit) -> record. A stage tells apart the kinds of record one run keeps (one experiment
// of `all`, one chunk of the critical-N search).
using UnitRecords = std::map<std::pair<int, int>, std::vector<double>>;

// A shard's units.txt: a comment line, then one record a line, "stage unit values..." with each
// value in %.17g (which reads back exactly; "nan" for any NaN).
std::string format_unit_records(const UnitRecords& records);
// Adds the records of `text` (named `name` in messages) to `records`; false with "name:LINE: why"
// on a line that is not a record, or a (stage, unit) already in `records` (from another shard).
bool parse_unit_records(std::string_view text, const std::string& name, UnitRecords& records, std::string& error);

struct UnitSlice {
    int first = 0, end = INT_MAX;        // the units this run computes (a shard)
    const UnitRecords* given = nullptr;  // a merge: every unit's record, computed by the shards
    UnitRecords produced;                // a shard: the records of the units it computed

    bool merging() const { return given != nullptr; }
    bool computes(int unit) const { return !merging() && unit >= first && unit < end; }
};

// Whether the run computes `unit` (every unit without a slice).
inline bool computes_unit(const UnitSlice* slice, int unit) { return !slice || slice->computes(unit); }

// Whether the run builds the tables (no slice, or a merge): a shard only keeps records.
inline bool builds_tables(const UnitSlice* slice) { return !slice || slice->merging(); }

// After the units of `stage` ran: a shard keeps save(u) for each unit it computed; a merge hands
// each of the `units` records to load(u, record). False with a message when a record is missing
// or has the wrong length (`size` values; 0: any).
template <typename Save, typename Load>
bool exchange_records(UnitSlice* slice, int stage, int units, Save&& save, Load&& load, std::string& error) {
    if (!slice) return true;
    for (int u = 0; u < units; ++u) {
        if (slice->computes(u)) slice->produced[{stage, u}] = save(u);
        if (!slice->merging()) continue;
        const auto it = slice->given->find({stage, u});
        if (it == slice->given->end()) {
            error = "no shard holds unit " + std::to_string(u) + " of stage " + std::to_string(stage);
            return false;
        }
        if (!load(u, it->second)) {
            error = "the record of unit " + std::to_string(u) + " of stage " + std::to_string(stage) + " has the wrong length";
            return false;
        }
    }
    return true;
}

}  // namespace attnlab
