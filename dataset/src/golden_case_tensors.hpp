// Typed tensors of the golden schema shared by the reader and the writer.
#pragma once

#include <string>
#include <vector>

#include "dsa/dataset/golden_case.hpp"

namespace dsa::dataset::detail {

// Throws InvalidInput(name) unless the dtype can hold the element's codes.
void check_codes_dtype(const Safetensors& file, const std::string& name, ElementFormat element);
// fp8 codes of q or k: e4m3fn as F8_E4M3 or U8; e4m3fnuz and packed MXFP4 as U8.
std::vector<uint8_t> read_codes(const Safetensors& file, const std::string& name, ElementFormat element,
                                const Shape& shape);
void put_codes(Safetensors& file, const std::string& name, ElementFormat element, const Shape& shape,
               const std::vector<uint8_t>& codes);
// F32, or BF16 widened exactly.
std::vector<float> read_weights(const Safetensors& file, const std::string& name, const Shape& shape);
void put_weights(Safetensors& file, const std::string& name, const Shape& shape, const std::vector<float>& weights,
                 bool bf16);
// The named outputs of a case, each checked for dtype and shape.
GoldenOutputs read_output_tensors(const Safetensors& file, const GoldenCase& golden,
                                  const std::vector<std::string>& names);

}  // namespace dsa::dataset::detail
