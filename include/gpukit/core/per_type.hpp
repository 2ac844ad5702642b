#pragma once
// The one shape of a variant's per-type functions in every case study's registry (black_scholes,
// saxpy, reduce, scan, compact, poisson, monte_carlo): a table of one function per element type,
// PerType<Launch, Types>, so that an entry holds every precision of a variant in one member, a
// caller reaches the one for T with get<T>(), and a type the table does not list fails to compile.
//
// The idiom, written the same way in each registry (reduce's names as the example):
//   - the registry's public header names the function type once, and its entry holds the table:
//       template <class T>
//       using ReduceLaunch = void(const T* input, std::int64_t count, ...);
//       struct ReduceVariant { VariantInfo info; ...; PerType<ReduceLaunch, PrimitiveTypes>
//       launchers; };
//   - the internal launchers header declares each launcher by that type, the signature not
//     repeated:
//       template <class T>
//       ReduceLaunch<T> launch_cub;
//   - the file that defines it instantiates it for the types of the table (the one macro of the
//     idiom: C++ has no explicit instantiation over a list of types):
//       GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ReduceLaunch, launch_cub)
//     (a launcher whose types are compiled in separate files, for build time, writes the one
//     explicit instantiation of its file: template ReduceLaunch<float> launch_x<float>;)
//   - the registry builds each entry's table with PerType::of:
//       .launchers = ReduceLaunchers::of([]<class T> { return &launch_cub<T>; })
// GEMM and rng keep one function per entry: a GEMM launcher takes the precision (four, on two
// storage types) in its GemmLaunch, and an rng entry makes a generator whose output type each fill
// chooses; neither has a function per element type.

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

namespace gpukit {

/// A list of element types, in the order a table holds them.
template <class... Ts>
struct TypeList {};

/// The floating-point types (Black-Scholes, SAXPY, Poisson, Monte Carlo).
using RealTypes = TypeList<float, double>;
/// The element types of the primitives (reduce, scan, compact: the CLI's .npy dtypes).
using PrimitiveTypes = TypeList<std::int32_t, std::int64_t, std::uint32_t, float, double>;

template <template <class> class Launch, class Types>
class PerType;

/// One function of type Launch<T> (a function type) for each T of Ts, each a pointer (null in a
/// default-constructed table).
template <template <class> class Launch, class... Ts>
class PerType<Launch, TypeList<Ts...>> {
 public:
  /// Whether the table has an entry for T.
  template <class T>
  static constexpr bool holds = (std::is_same_v<T, Ts> || ...);

  constexpr PerType() = default;

  /// The table of make.template operator()<T>() for each T, a pointer to a Launch<T>:
  /// `PerType::of([]<class T> { return &launch_seed<T>; })`. A constant expression, so that a
  /// registry of such tables is constexpr.
  template <class Make>
  static constexpr PerType of(Make make) {
    PerType table;
    table.functions_ = {make.template operator()<Ts>()...};
    return table;
  }

  /// The function for T.
  template <class T>
  constexpr Launch<T>* get() const {
    static_assert(holds<T>, "this table has no function for that element type");
    return std::get<index_of<T>()>(functions_);
  }

 private:
  template <class T>
  static constexpr std::size_t index_of() {
    constexpr bool same[] = {std::is_same_v<T, Ts>...};
    std::size_t i = 0;
    while (!same[i]) ++i;
    return i;
  }

  std::tuple<Launch<Ts>*...> functions_{};
};

// The lists GPUKIT_INSTANTIATE_PER_TYPE expands, kept beside the TypeLists they spell out.
static_assert(std::is_same_v<RealTypes, TypeList<float, double>>);
static_assert(std::is_same_v<PrimitiveTypes,
                             TypeList<std::int32_t, std::int64_t, std::uint32_t, float, double>>);
#define GPUKIT_DETAIL_INSTANTIATE_RealTypes(Launch, name, ...)   \
  template Launch<float> name<float __VA_OPT__(, ) __VA_ARGS__>; \
  template Launch<double> name<double __VA_OPT__(, ) __VA_ARGS__>;
#define GPUKIT_DETAIL_INSTANTIATE_PrimitiveTypes(Launch, name, ...)              \
  template Launch<std::int32_t> name<std::int32_t __VA_OPT__(, ) __VA_ARGS__>;   \
  template Launch<std::int64_t> name<std::int64_t __VA_OPT__(, ) __VA_ARGS__>;   \
  template Launch<std::uint32_t> name<std::uint32_t __VA_OPT__(, ) __VA_ARGS__>; \
  GPUKIT_DETAIL_INSTANTIATE_RealTypes(Launch, name __VA_OPT__(, ) __VA_ARGS__)

/// Explicitly instantiates the function template `name`, declared `template <class T> Launch<T>
/// name;`, for every type of `Types` (RealTypes or PrimitiveTypes), in the namespace of `name`:
/// what the file that defines a launcher writes once for it. Template arguments after the type
/// follow `name` (a launcher declared `template <class T, Kind kKind> Launch<T> name;`).
#define GPUKIT_INSTANTIATE_PER_TYPE(Types, Launch, name, ...) \
  GPUKIT_DETAIL_INSTANTIATE_##Types(Launch, name __VA_OPT__(, ) __VA_ARGS__)

}  // namespace gpukit
