// The canonical sums of an array split into parts (tile_sums.hpp).

#include "scale_out/tile_sums.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "gpukit/primitives/reduce_canonical.hpp"

namespace gpukit::scale_out::detail {

namespace canonical = primitives::canonical;
using pde::detail::MeanSums;

TileSplit split_tiles(std::int64_t offset, std::int64_t count, std::int64_t total) {
  const std::int64_t end = offset + count;
  const std::int64_t first = (offset + canonical::kTile - 1) / canonical::kTile;
  // The last tile of the array is short: it ends at `total`, so a part reaching the end holds it
  // whole.
  const std::int64_t stop = end == total ? canonical::tile_count(total) : end / canonical::kTile;
  TileSplit split;
  if (count == 0 || first >= stop) {
    split.head = count;
    split.tail_begin = count;
    split.first_tile = first;
    return split;
  }
  split.first_tile = first;
  split.tile_count = stop - first;
  split.head = first * canonical::kTile - offset;
  split.tail_begin = std::min(end, stop * canonical::kTile) - offset;
  return split;
}

template <class Real>
TileContribution host_tile_contribution(std::span<const Real> part, std::int64_t offset,
                                        std::int64_t total, int threads) {
  const auto count = static_cast<std::int64_t>(part.size());
  const TileSplit split = split_tiles(offset, count, total);
  TileContribution c;
  c.first_tile = split.first_tile;
  c.tiles.resize(static_cast<std::size_t>(split.tile_count));
  const pde::detail::MeanSumsOp<Real> op;
  const auto load = [](Real x) { return pde::detail::MeanSumsOp<Real>::load(x); };
  const int team = cpu_threads_for({count, canonical::kCpuNsPerElement, split.tile_count}, threads);
#pragma omp parallel for schedule(static) num_threads(team)
  for (std::int64_t t = 0; t < split.tile_count; ++t) {
    const std::int64_t begin = (split.first_tile + t) * canonical::kTile;
    const std::int64_t length = std::min(canonical::kTile, total - begin);
    c.tiles[static_cast<std::size_t>(t)] =
        canonical::reduce_tile(part.data() + (begin - offset), length, op, load);
  }
  auto fragment = [&](std::int64_t from, std::int64_t to) {
    if (from >= to) return;
    TileContribution::Fragment f;
    f.offset = offset + from;
    f.values.assign(part.begin() + from, part.begin() + to);
    c.fragments.push_back(std::move(f));
  };
  fragment(0, split.head);
  if (split.tile_count > 0) fragment(split.tail_begin, count);
  return c;
}

MeanSums combine_tile_contributions(std::span<const TileContribution> all, std::int64_t total) {
  if (total == 0) return pde::detail::MeanSumsOp<double>::identity();
  const std::int64_t tiles = canonical::tile_count(total);
  std::vector<MeanSums> level(static_cast<std::size_t>(tiles));
  // Per tile: elements placed (a whole tile counts kTile + 1, so that any overlap shows).
  std::vector<std::int64_t> placed(static_cast<std::size_t>(tiles), 0);
  auto tile_length = [&](std::int64_t t) {
    return std::min(canonical::kTile, total - t * canonical::kTile);
  };
  for (const TileContribution& c : all) {
    for (std::size_t i = 0; i < c.tiles.size(); ++i) {
      const std::int64_t t = c.first_tile + static_cast<std::int64_t>(i);
      if (t < 0 || t >= tiles || placed[static_cast<std::size_t>(t)] != 0)
        throw std::logic_error(fmt::format("distributed mean sums: tile {} given twice", t));
      level[static_cast<std::size_t>(t)] = c.tiles[i];
      placed[static_cast<std::size_t>(t)] = canonical::kTile + 1;
    }
  }
  // The shared tiles, reassembled from the fragments in element order.
  std::vector<std::vector<double>> shared(static_cast<std::size_t>(tiles));
  for (const TileContribution& c : all) {
    for (const TileContribution::Fragment& f : c.fragments) {
      for (std::size_t i = 0; i < f.values.size(); ++i) {
        const std::int64_t g = f.offset + static_cast<std::int64_t>(i);
        const std::int64_t t = g / canonical::kTile;
        if (g < 0 || g >= total || placed[static_cast<std::size_t>(t)] > canonical::kTile)
          throw std::logic_error(fmt::format("distributed mean sums: element {} misplaced", g));
        std::vector<double>& tile = shared[static_cast<std::size_t>(t)];
        if (tile.empty()) tile.assign(static_cast<std::size_t>(tile_length(t)), 0.0);
        tile[static_cast<std::size_t>(g % canonical::kTile)] = f.values[i];
        ++placed[static_cast<std::size_t>(t)];
      }
    }
  }
  const pde::detail::MeanSumsOp<double> op;
  const auto load = [](double x) { return pde::detail::MeanSumsOp<double>::load(x); };
  for (std::int64_t t = 0; t < tiles; ++t) {
    const auto ti = static_cast<std::size_t>(t);
    if (placed[ti] == canonical::kTile + 1) continue;
    if (placed[ti] != tile_length(t))
      throw std::logic_error(fmt::format("distributed mean sums: tile {} has {} of {} elements", t,
                                         placed[ti], tile_length(t)));
    level[ti] = canonical::reduce_tile(shared[ti].data(), tile_length(t), op, load);
  }
  // One tile: its result is the sum (reduce_canonical's count <= kTile case). More: the upper
  // levels are reduce_canonical over the first level, element for element.
  if (tiles == 1) return level[0];
  return canonical::reduce_canonical(
      level.data(), tiles, op, [](const MeanSums& a) { return a; }, 1);
}

namespace {

void put(std::vector<std::byte>& out, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const std::byte*>(data);
  out.insert(out.end(), p, p + bytes);
}
void put_i64(std::vector<std::byte>& out, std::int64_t v) { put(out, &v, sizeof v); }

struct Reader {
  std::span<const std::byte> in;
  std::size_t at = 0;
  void get(void* data, std::size_t bytes) {
    if (at + bytes > in.size()) throw std::logic_error("distributed mean sums: short message");
    std::memcpy(data, in.data() + at, bytes);
    at += bytes;
  }
  std::int64_t i64() {
    std::int64_t v = 0;
    get(&v, sizeof v);
    return v;
  }
};

}  // namespace

MeanSums distributed_mean_sums(distributed::Communicator& comm,
                               std::span<const TileContribution> local, std::int64_t total) {
  std::vector<std::byte> message;
  put_i64(message, static_cast<std::int64_t>(local.size()));
  for (const TileContribution& c : local) {
    put_i64(message, c.first_tile);
    put_i64(message, static_cast<std::int64_t>(c.tiles.size()));
    put(message, c.tiles.data(), c.tiles.size() * sizeof(MeanSums));
    put_i64(message, static_cast<std::int64_t>(c.fragments.size()));
    for (const TileContribution::Fragment& f : c.fragments) {
      put_i64(message, f.offset);
      put_i64(message, static_cast<std::int64_t>(f.values.size()));
      put(message, f.values.data(), f.values.size() * sizeof(double));
    }
  }
  std::vector<std::int64_t> sizes;
  const std::vector<std::byte> all = comm.gather(message, 0, &sizes);
  MeanSums sums{};
  if (comm.is_root()) {
    std::vector<TileContribution> contributions;
    Reader reader{all};
    for (std::size_t r = 0; r < sizes.size(); ++r) {
      for (std::int64_t k = reader.i64(); k > 0; --k) {
        TileContribution c;
        c.first_tile = reader.i64();
        c.tiles.resize(static_cast<std::size_t>(reader.i64()));
        reader.get(c.tiles.data(), c.tiles.size() * sizeof(MeanSums));
        for (std::int64_t f = reader.i64(); f > 0; --f) {
          TileContribution::Fragment fragment;
          fragment.offset = reader.i64();
          fragment.values.resize(static_cast<std::size_t>(reader.i64()));
          reader.get(fragment.values.data(), fragment.values.size() * sizeof(double));
          c.fragments.push_back(std::move(fragment));
        }
        contributions.push_back(std::move(c));
      }
    }
    sums = combine_tile_contributions(contributions, total);
  }
  comm.broadcast_value(sums, 0);
  return sums;
}

template TileContribution host_tile_contribution<float>(std::span<const float>, std::int64_t,
                                                        std::int64_t, int);
template TileContribution host_tile_contribution<double>(std::span<const double>, std::int64_t,
                                                         std::int64_t, int);

}  // namespace gpukit::scale_out::detail
