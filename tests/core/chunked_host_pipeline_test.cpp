#include "core/chunked_host_pipeline.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gpukit/core/error.hpp"

namespace gpukit::detail {
namespace {

TEST(ChunkPlan, ZeroElementsHaveNoChunk) {
  const ChunkPlan plan(0, 16);
  EXPECT_EQ(plan.chunk_count(), 0);
  EXPECT_EQ(plan.chunk_size(), 0);
}

TEST(ChunkPlan, FewerElementsThanOneChunkMakeOneChunkOfThatSize) {
  const ChunkPlan plan(5, 16);
  ASSERT_EQ(plan.chunk_count(), 1);
  EXPECT_EQ(plan.chunk_size(), 5);  // the staging slot holds 5, not 16
  const HostChunk c = plan.chunk(0);
  EXPECT_EQ(c.index, 0);
  EXPECT_EQ(c.begin, 0);
  EXPECT_EQ(c.size, 5);
}

TEST(ChunkPlan, ChunksTileTheArrayAndOnlyTheLastIsPartial) {
  for (const std::int64_t count : {1, 15, 16, 17, 31, 32, 33, 1000}) {
    const ChunkPlan plan(count, 16);
    const std::int64_t expected_chunks = (count + 15) / 16;
    ASSERT_EQ(plan.chunk_count(), expected_chunks) << count;
    std::int64_t next = 0;
    for (std::int64_t k = 0; k < plan.chunk_count(); ++k) {
      const HostChunk c = plan.chunk(k);
      EXPECT_EQ(c.index, k);
      EXPECT_EQ(c.begin, next) << count << " chunk " << k;
      EXPECT_EQ(c.begin % 16, 0) << "chunks start on multiples of max_chunk";
      EXPECT_GT(c.size, 0);
      if (k + 1 < plan.chunk_count()) {
        EXPECT_EQ(c.size, std::min<std::int64_t>(16, count));
      }
      next = c.begin + c.size;
    }
    EXPECT_EQ(next, count) << "the chunks cover every element exactly once";
  }
}

TEST(ChunkPlan, SizesBeyondThirtyTwoBits) {
  const std::int64_t count = (std::int64_t{1} << 33) + 3;
  const ChunkPlan plan(count, std::int64_t{1} << 24);
  ASSERT_EQ(plan.chunk_count(), (std::int64_t{1} << 9) + 1);
  const HostChunk last = plan.chunk(plan.chunk_count() - 1);
  EXPECT_EQ(last.begin, std::int64_t{1} << 33);
  EXPECT_EQ(last.size, 3);
}

TEST(ChunkPlan, RejectsANegativeCountAndAnEmptyChunk) {
  EXPECT_THROW(ChunkPlan(-1, 16), InvalidInput);
  EXPECT_THROW(ChunkPlan(10, 0), InvalidInput);
}

// A staging slot that records, instead of doing, what the pipeline asks of it.
struct RecordingStream {
  std::vector<std::string>* log = nullptr;
  int slot = 0;
  void synchronize() const { log->push_back("sync " + std::to_string(slot)); }
};
struct RecordingSlot {
  RecordingStream stream;
};

std::vector<std::string> run(std::int64_t count, std::int64_t max_chunk, LastChunks last) {
  std::vector<std::string> log;
  std::array<RecordingSlot, 2> slots = {RecordingSlot{{&log, 0}}, RecordingSlot{{&log, 1}}};
  auto start = [&](RecordingSlot& slot, const HostChunk& c) {
    log.push_back("start " + std::to_string(c.index) + " on " + std::to_string(slot.stream.slot) +
                  " [" + std::to_string(c.begin) + "," + std::to_string(c.begin + c.size) + ")");
  };
  auto finish = [&](RecordingSlot& slot, const HostChunk& c) {
    log.push_back("finish " + std::to_string(c.index) + " on " + std::to_string(slot.stream.slot));
  };
  run_chunked_host_pipeline(ChunkPlan(count, max_chunk), slots, start, finish, last);
  return log;
}

TEST(ChunkedHostPipeline, ZeroElementsDoNothing) {
  EXPECT_TRUE(run(0, 4, LastChunks::finish).empty());
}

TEST(ChunkedHostPipeline, OneChunkStartsThenFinishesOnSlotZero) {
  const std::vector<std::string> expected = {"start 0 on 0 [0,3)", "sync 0", "finish 0 on 0"};
  EXPECT_EQ(run(3, 4, LastChunks::finish), expected);
}

// The schedule every host path relies on: a slot is synchronized and drained (chunk k-2) just
// before chunk k reuses it, so two chunks are in flight; chunks finish in chunk order.
TEST(ChunkedHostPipeline, SlotsAlternateAndChunksFinishInOrder) {
  const std::vector<std::string> expected = {"start 0 on 0 [0,4)",
                                             "start 1 on 1 [4,8)",
                                             "sync 0",
                                             "finish 0 on 0",
                                             "start 2 on 0 [8,12)",
                                             "sync 1",
                                             "finish 1 on 1",
                                             "start 3 on 1 [12,14)",
                                             "sync 0",
                                             "finish 2 on 0",
                                             "sync 1",
                                             "finish 3 on 1"};
  EXPECT_EQ(run(14, 4, LastChunks::finish), expected);
}

TEST(ChunkedHostPipeline, AnOddChunkCountFinishesTheLastTwoInOrder) {
  const std::vector<std::string> expected = {"start 0 on 0 [0,4)",
                                             "start 1 on 1 [4,8)",
                                             "sync 0",
                                             "finish 0 on 0",
                                             "start 2 on 0 [8,9)",
                                             "sync 1",
                                             "finish 1 on 1",
                                             "sync 0",
                                             "finish 2 on 0"};
  EXPECT_EQ(run(9, 4, LastChunks::finish), expected);
}

TEST(ChunkedHostPipeline, LeaveInFlightNeitherWaitsForNorFinishesTheLastTwo) {
  const std::vector<std::string> expected = {"start 0 on 0 [0,4)", "start 1 on 1 [4,8)", "sync 0",
                                             "finish 0 on 0", "start 2 on 0 [8,9)"};
  EXPECT_EQ(run(9, 4, LastChunks::leave_in_flight), expected);
}

}  // namespace
}  // namespace gpukit::detail
