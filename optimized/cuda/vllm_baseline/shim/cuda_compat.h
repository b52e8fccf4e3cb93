// Stand-in for vLLM's csrc/cuda_compat.h, so that vLLM's own kernel file
// (fetched into the git-ignored third_party/vllm, never committed) compiles
// in our benchmark on CUDA: the warp width is all it needs from it.
#pragma once
#define WARP_SIZE 32
