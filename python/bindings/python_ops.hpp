// A Python kernel as one more implementation under test: every op of
// IndexerOps becomes a call of the package's dispatcher (dsa_oracle/_fuzz.py)
// with the inputs under the golden schema's names and the output buffers the
// harness poisoned (docs/python.md, "Fuzzing a Python kernel").
#pragma once

#include <memory>

#include "bindings.hpp"
#include "dsa/indexer_ops.hpp"

namespace dsa::python {

// Shared by every instance of one campaign: a Ctrl-C seen in one call stops the rest.
struct CampaignState {
  bool interrupted = false;
};

// dispatch(op, tensors, params, outputs) -> {output name: C-contiguous numpy
// array} (a bool for skip_decode_fill). The GIL must be held.
std::unique_ptr<IndexerOps> make_python_ops(py::object dispatch, std::shared_ptr<CampaignState> state);

}  // namespace dsa::python
