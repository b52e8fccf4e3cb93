// Where a row's block of RowTopK is (row_topk.hpp, row_sample.hpp): the points at which bench/gpu/row_phases.cu,
// which defines DSA_ROW_PHASE and DSA_ROW_PHASE_DRAWN before it includes the kernels, stamps the clock. Every other
// build defines them as nothing. Phases 2 to 5 are the sampled way's (row_sample.hpp).
#pragma once

namespace dsa::common::select {

enum RowPhase : int {
  kRowStarted,       // the row's block begins
  kRowCleared,       // histogram, bitmaps and thresholds cleared
  kSampleDrawn,      // every drawn value loaded (the stamp depends on them)
  kSampleCounted,    // the sample's coarse histogram counted (after its barrier)
  kSampleKeyed,      // the sample's key T
  kRowScanned,       // the one read of the row: entries above T listed, at T marked
  kListKeyed,        // the list's values made keys
  kCutFound,         // the cut among the listed entries, marked
  kRanksScanned,     // the bitmaps' counts and their prefixes over the block
  kRowEmitted,       // every output entry written
  kRowPhases
};

}  // namespace dsa::common::select

#ifndef DSA_ROW_PHASE
#define DSA_ROW_PHASE(row, phase) ((void)0)
#define DSA_ROW_PHASE_DRAWN(row, phase, values) ((void)0)
#endif
