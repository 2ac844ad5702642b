// NpyArray (aligned storage, checked shape) and the dtype names. The reader is npy_reader.cpp, the
// writer npy_writer.cpp.

#include "gpukit/io/npy.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "npy_format.hpp"

namespace gpukit::io {

namespace {

using npy_internal::checked_shape_size;
using npy_internal::info_of;
using npy_internal::kAlignment;

std::unique_ptr<std::byte[], detail::AlignedFree> allocate_aligned(std::size_t bytes,
                                                                   std::string_view where) {
  // At least one alignment unit, so that even an empty array has a valid, non-null pointer.
  const std::size_t allocated = std::max(bytes, kAlignment);
  void* storage = ::operator new (allocated, std::align_val_t{kAlignment}, std::nothrow);
  if (storage == nullptr) throw OutOfMemory(std::string(where), bytes);
  return std::unique_ptr<std::byte[], detail::AlignedFree>(static_cast<std::byte*>(storage));
}

}  // namespace

std::string_view dtype_name(NpyDtype dtype) { return info_of(dtype).name; }

std::size_t dtype_size(NpyDtype dtype) { return info_of(dtype).size; }

namespace detail {

void AlignedFree::operator()(std::byte* storage) const noexcept {
  ::operator delete (storage, std::align_val_t{kAlignment});
}

void throw_dtype_mismatch(NpyDtype held, NpyDtype asked) {
  throw InvalidInput(
      fmt::format("NpyArray holds {} elements, not {}", dtype_name(held), dtype_name(asked)));
}

}  // namespace detail

NpyArray::NpyArray(NpyDtype element_type, std::vector<std::int64_t> dimensions)
    : dtype(element_type), shape(std::move(dimensions)) {
  byte_size_ = checked_shape_size(shape, dtype_size(dtype), "NpyArray").bytes;
  storage_ = allocate_aligned(byte_size_, "NpyArray");
}

NpyArray::NpyArray(const NpyArray& other)
    : dtype(other.dtype), shape(other.shape), byte_size_(other.byte_size_) {
  if (other.storage_) {
    storage_ = allocate_aligned(byte_size_, "NpyArray copy");
    std::memcpy(storage_.get(), other.storage_.get(), byte_size_);
  }
}

NpyArray& NpyArray::operator=(const NpyArray& other) {
  if (this != &other) *this = NpyArray(other);
  return *this;
}

NpyArray::NpyArray(NpyArray&& other) noexcept
    : dtype(other.dtype),
      shape(std::exchange(other.shape, {0})),
      storage_(std::move(other.storage_)),
      byte_size_(std::exchange(other.byte_size_, 0)) {}

NpyArray& NpyArray::operator=(NpyArray&& other) noexcept {
  if (this != &other) {
    dtype = other.dtype;
    shape = std::exchange(other.shape, {0});
    storage_ = std::move(other.storage_);
    byte_size_ = std::exchange(other.byte_size_, 0);
  }
  return *this;
}

std::int64_t NpyArray::size() const {
  std::int64_t elements = 1;
  for (std::int64_t dim : shape) elements *= dim;
  return elements;
}

}  // namespace gpukit::io
