#pragma once
// The shape of a reduce or scan operation, as C++20 concepts. One shape serves both algorithms:
// an operation turns each input into an accumulator (`load`), combines two accumulators
// (`operator()`, associative; a reduction also needs it commutative) and names the combination's
// true identity (`identity`). The device engines (cuda/reduce.cuh, cuda/scan.cuh) take any such
// type, the library's own operations included; a scan operation may add `fits` (is this output
// representable?), `store` (the output from an accumulator) and `clamp_carry`, which the engines
// use when present. Associativity, commutativity and the identity's truth are the caller's
// promise: no compiler can check them.

#include <concepts>
#include <type_traits>

namespace gpukit::primitives {

/// A reduce or scan operation: `Input` and `Acc` types, `identity()`, `load(Input)` and
/// `operator()(Acc, Acc)`, each giving an `Acc`. The accumulator is trivially copyable, since the
/// engines move it through registers, shared memory and status words bit by bit.
template <class Op>
concept Operation = requires(const Op& op, const typename Op::Input& x, const typename Op::Acc& a) {
  { op.identity() } -> std::same_as<typename Op::Acc>;
  { op.load(x) } -> std::same_as<typename Op::Acc>;
  { op(a, a) } -> std::same_as<typename Op::Acc>;
}
&&std::is_trivially_copyable_v<typename Op::Acc>;

/// An operation with no state: default-constructible, its identity a static function. The
/// deterministic reduction engine needs this (it makes `Op{}` on the device and calls
/// `Op::identity()`); every operation of the library is one, so it serves scans as well.
template <class Op>
concept StatelessOperation = Operation<Op> && std::default_initializable<Op> && requires {
  { Op::identity() } -> std::same_as<typename Op::Acc>;
};

}  // namespace gpukit::primitives
