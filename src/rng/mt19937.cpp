// The CPU MT19937: seeding and the regeneration of the 624-word state.

#include "gpukit/rng/mt19937.hpp"

#include "gpukit/core/error.hpp"

namespace gpukit::rng {

void Mt19937::seed(std::uint32_t seed) {
  detail::mt_seed_state(state_.data(), seed);
  index_ = state_words;
}

void Mt19937::seed(std::span<const std::uint32_t> key) {
  if (key.empty()) throw InvalidInput("Mt19937: empty seed key");
  if (key.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw InvalidInput("Mt19937: seed key longer than 2^31 - 1 words");
  }
  detail::mt_seed_state_by_array(state_.data(), key.data(), static_cast<int>(key.size()));
  index_ = state_words;
}

void Mt19937::regenerate() {
  using detail::kMtShift;
  using detail::mt_next_word;
  constexpr int n = state_words;
  // In place, in the reference's order: from n - m on, word i + m - n is already the new one.
  for (int i = 0; i < n - kMtShift; ++i) {
    state_[i] = mt_next_word(state_[i], state_[i + 1], state_[i + kMtShift]);
  }
  for (int i = n - kMtShift; i < n - 1; ++i) {
    state_[i] = mt_next_word(state_[i], state_[i + 1], state_[i + kMtShift - n]);
  }
  state_[n - 1] = mt_next_word(state_[n - 1], state_[0], state_[kMtShift - 1]);
  index_ = 0;
}

void Mt19937::discard(std::uint64_t count) {
  while (count > 0) {
    if (index_ >= state_words) regenerate();
    const auto available = static_cast<std::uint64_t>(state_words - index_);
    const std::uint64_t step = count < available ? count : available;
    index_ += static_cast<int>(step);
    count -= step;
  }
}

}  // namespace gpukit::rng
