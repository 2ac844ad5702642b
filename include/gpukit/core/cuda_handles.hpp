#pragma once
// CUDA handle types named without including CUDA headers, so public gpukit headers compile with a
// plain C++ compiler. They are the very types the CUDA runtime uses (cudaStream_t is CUstream_st*).

struct CUstream_st;
struct CUevent_st;

namespace gpukit {
using StreamHandle = CUstream_st*;  // nullptr is the legacy default stream
using EventHandle = CUevent_st*;
}  // namespace gpukit
