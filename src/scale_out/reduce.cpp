// reduce: the canonical tree's blocks over the job's workers (reduce.hpp).

#include "gpukit/scale_out/reduce.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/primitives/reduce_partials.hpp"
#include "gpukit/scale_out/blocks.hpp"

namespace gpukit::scale_out {

namespace {

// The element types a reduction takes, numbered, for the check that every rank passes one.
template <class T>
constexpr std::int64_t element_code() {
  if constexpr (std::is_same_v<T, std::int32_t>) return 1;
  if constexpr (std::is_same_v<T, std::int64_t>) return 2;
  if constexpr (std::is_same_v<T, std::uint32_t>) return 3;
  if constexpr (std::is_same_v<T, float>) return 4;
  return 5;
}

}  // namespace

template <class T>
primitives::reduce_result_t<T> reduce(const Job& job, std::span<const T> values,
                                      primitives::ReduceOp op,
                                      const primitives::ReduceOptions& options, Results results) {
  using R = primitives::reduce_result_t<T>;
  if (!job.spread) return primitives::reduce<T>(job.workers.contexts.front(), values, op, options);
  distributed::Communicator& comm = *job.comm;
  const std::vector<std::int64_t> codes = comm.all_gather(element_code<T>());
  distributed::agree(comm, [&] {
    if (std::adjacent_find(codes.begin(), codes.end(), std::not_equal_to<>()) != codes.end()) {
      throw InvalidInput("reduce: the ranks of the job pass arrays of different element types");
    }
  });
  const std::int64_t count = from_root(job, static_cast<std::int64_t>(values.size()));
  const primitives::ReduceSplit split =
      distributed::agree(comm, [&] { return primitives::reduce_split<T>(count, op, options); });
  const BlockPlan plan(job, split.blocks);
  const BlockRange mine = plan.mine();
  const auto elements_of = [&](const BlockRange& r) {
    const std::int64_t first = r.first * split.block_elements;
    return std::min(count, r.end() * split.block_elements) - std::min(count, first);
  };

  // This rank's elements: the root's array itself in a job of one process, else what it sent.
  std::vector<std::byte> received = plan.scatter(std::as_bytes(values), [&](BlockRange r) {
    return elements_of(r) * static_cast<std::int64_t>(sizeof(T));
  });
  const std::span<const T> local =
      comm.distributed() ? std::span<const T>(reinterpret_cast<const T*>(received.data()),
                                              received.size() / sizeof(T))
                         : values;
  const std::vector<std::byte> partials = plan.gather<std::byte>(
      static_cast<std::int64_t>(split.partial_bytes),
      [&](const Context& context, BlockRange range, const ReportProgress&) {
        std::vector<std::byte> out(static_cast<std::size_t>(range.count) * split.partial_bytes);
        const std::int64_t at = (range.first - mine.first) * split.block_elements;
        primitives::reduce_partials<T>(context,
                                       local.subspan(static_cast<std::size_t>(at),
                                                     static_cast<std::size_t>(elements_of(range))),
                                       split, range.first, op, options, out);
        return out;
      });
  std::vector<std::byte>().swap(received);
  R result = on_root(job, [&] {
               return primitives::reduce_from_partials<T>(partials, split, op, options,
                                                          job.workers.contexts.front().cpu_threads);
             }).value_or(R{});
  if (results == Results::on_every_rank) result = from_root(job, result);
  return result;
}

#define GPUKIT_SCALE_OUT_REDUCE(T)                                                  \
  template primitives::reduce_result_t<T> reduce<T>(const Job&, std::span<const T>, \
                                                    primitives::ReduceOp,           \
                                                    const primitives::ReduceOptions&, Results);
GPUKIT_SCALE_OUT_REDUCE(std::int32_t)
GPUKIT_SCALE_OUT_REDUCE(std::int64_t)
GPUKIT_SCALE_OUT_REDUCE(std::uint32_t)
GPUKIT_SCALE_OUT_REDUCE(float)
GPUKIT_SCALE_OUT_REDUCE(double)
#undef GPUKIT_SCALE_OUT_REDUCE

}  // namespace gpukit::scale_out
