// Matrix multiplication: argument checks, the plan (special values, the canonical row-major form
// the CUDA variants take) and the host-data API.

#include "gpukit/blas/gemm.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "blas/cpu/gemm_openblas.hpp"
#include "gpukit/blas/gemm_variants.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"

#if GPUKIT_HAVE_CUDA
#include "blas/cuda/gemm_host_pipeline.hpp"
#include "blas/cuda/gemm_launchers.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#endif

namespace gpukit::blas {

namespace {

constexpr std::string_view kCpuVariant = "openblas";

struct StoredShape {
  std::int64_t rows = 0;
  std::int64_t columns = 0;
};

StoredShape stored_a(const GemmProblem& p) {
  return p.transpose_a ? StoredShape{p.k, p.m} : StoredShape{p.m, p.k};
}
StoredShape stored_b(const GemmProblem& p) {
  return p.transpose_b ? StoredShape{p.n, p.k} : StoredShape{p.k, p.n};
}
StoredShape stored_c(const GemmProblem& p) { return {p.m, p.n}; }

// The smallest leading dimension BLAS allows: the contiguous extent, at least 1.
std::int64_t packed_ld(StoredShape s, Layout layout) {
  return std::max<std::int64_t>(1, layout == Layout::row_major ? s.columns : s.rows);
}

std::int64_t effective(std::int64_t ld, StoredShape s, Layout layout) {
  return ld == 0 ? packed_ld(s, layout) : ld;
}

// (outer - 1) * ld + inner, or -1 when it overflows int64.
std::int64_t elements(StoredShape s, std::int64_t ld, Layout layout) {
  if (s.rows == 0 || s.columns == 0) return 0;
  const std::int64_t outer = layout == Layout::row_major ? s.rows : s.columns;
  const std::int64_t inner = layout == Layout::row_major ? s.columns : s.rows;
  std::int64_t span = 0;
  if (__builtin_mul_overflow(outer - 1, ld, &span) || __builtin_add_overflow(span, inner, &span))
    return -1;
  return span;
}

std::string_view layout_name(Layout layout) {
  return layout == Layout::row_major ? "row-major" : "column-major";
}

template <class T>
void scale_c_on_cpu(const GemmProblem& p, T beta, T* c) {
  const std::int64_t ldc = p.effective_ldc();
  const bool row_major = p.layout == Layout::row_major;
  for (std::int64_t i = 0; i < p.m; ++i) {
    for (std::int64_t j = 0; j < p.n; ++j) {
      T& x = c[row_major ? i * ldc + j : i + j * ldc];
      x = beta == T(0) ? T(0) : beta * x;  // beta = 0 never reads C
    }
  }
}

bool overlaps(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return false;
  const auto a0 = reinterpret_cast<std::uintptr_t>(a);
  const auto b0 = reinterpret_cast<std::uintptr_t>(b);
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

}  // namespace

std::string_view gemm_precision_name(GemmPrecision precision) {
  switch (precision) {
    case GemmPrecision::float32:
      return "float";
    case GemmPrecision::float64:
      return "double";
    case GemmPrecision::tf32:
      return "tf32";
    case GemmPrecision::bf16:
      return "bf16";
  }
  return "?";
}

GemmPrecision parse_gemm_precision(std::string_view name) {
  if (name == "float" || name == "float32") return GemmPrecision::float32;
  if (name == "double" || name == "float64") return GemmPrecision::float64;
  if (name == "tf32") return GemmPrecision::tf32;
  if (name == "bf16") return GemmPrecision::bf16;
  throw InvalidInput("unknown precision '" + std::string(name) +
                     "' (known: float, double, tf32, bf16)");
}

float round_to_tf32(float x) {
  if (!std::isfinite(x)) return x;
  // Keep 10 of float's 23 explicit mantissa bits: add half of the last kept bit's unit to the
  // magnitude (ties away from zero, as cvt.rna), then clear the 13 dropped bits. A carry into the
  // exponent is the correct rounding up; past the largest finite value it gives Inf.
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  bits += 0x1000u;
  bits &= ~0x1FFFu;
  return std::bit_cast<float>(bits);
}

float round_to_bf16(float x) {
  if (std::isnan(x)) return x;
  // Keep the upper 16 bits, rounding to nearest with ties to even (__float2bfloat16_rn): add
  // 0x7FFF plus the lowest kept bit, then clear the 16 dropped bits.
  std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  bits &= 0xFFFF0000u;
  return std::bit_cast<float>(bits);
}

std::int64_t GemmProblem::effective_lda() const { return effective(lda, stored_a(*this), layout); }
std::int64_t GemmProblem::effective_ldb() const { return effective(ldb, stored_b(*this), layout); }
std::int64_t GemmProblem::effective_ldc() const { return effective(ldc, stored_c(*this), layout); }
std::int64_t GemmProblem::a_elements() const {
  return elements(stored_a(*this), effective_lda(), layout);
}
std::int64_t GemmProblem::b_elements() const {
  return elements(stored_b(*this), effective_ldb(), layout);
}
std::int64_t GemmProblem::c_elements() const {
  return elements(stored_c(*this), effective_ldc(), layout);
}

std::string GemmProblem::describe() const {
  std::string text =
      fmt::format("{} {}x{}x{} ({}", gemm_precision_name(precision), m, n, k, layout_name(layout));
  if (transpose_a) text += ", A^T";
  if (transpose_b) text += ", B^T";
  if (lda != 0) text += fmt::format(", lda {}", lda);
  if (ldb != 0) text += fmt::format(", ldb {}", ldb);
  if (ldc != 0) text += fmt::format(", ldc {}", ldc);
  return text + ")";
}

void validate_gemm_problem(const GemmProblem& p) {
  if (p.m < 0 || p.n < 0 || p.k < 0) {
    throw InvalidInput(
        fmt::format("gemm: M, N and K must be >= 0, not {}, {} and {}", p.m, p.n, p.k));
  }
  const std::size_t value_bytes = p.precision == GemmPrecision::float64 ? 8 : 4;
  const struct {
    const char* matrix;
    const char* ld_name;
    StoredShape shape;
    std::int64_t ld;
  } matrices[] = {{"A", "lda", stored_a(p), p.lda},
                  {"B", "ldb", stored_b(p), p.ldb},
                  {"C", "ldc", stored_c(p), p.ldc}};
  for (const auto& m : matrices) {
    const std::int64_t minimum = packed_ld(m.shape, p.layout);
    if (m.ld != 0 && m.ld < minimum) {
      throw InvalidInput(fmt::format(
          "gemm: {} {} is below the smallest allowed, {}, for {} stored {}x{} {}", m.ld_name, m.ld,
          minimum, m.matrix, m.shape.rows, m.shape.columns, layout_name(p.layout)));
    }
    const std::int64_t count = elements(m.shape, m.ld == 0 ? minimum : m.ld, p.layout);
    std::int64_t bytes = 0;
    if (count < 0 ||
        __builtin_mul_overflow(count, static_cast<std::int64_t>(value_bytes), &bytes)) {
      throw InvalidInput(fmt::format("gemm: {} stored {}x{} with {} {} is too large to address",
                                     m.matrix, m.shape.rows, m.shape.columns, m.ld_name,
                                     m.ld == 0 ? minimum : m.ld));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// A product as the front doors are given it.

namespace {

// numpy's spelling of a shape: "(3, 4)", "(4,)".
std::string shape_text(std::span<const std::int64_t> shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    text += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  }
  return text + (shape.size() == 1 ? ",)" : ")");
}

void check_operand(const GemmOperand& x) {
  if (x.shape.size() != 2) {
    throw InvalidInput(fmt::format("gemm takes 2-D arrays, not {}-D ({} has shape {})",
                                   x.shape.size(), x.name, shape_text(x.shape)));
  }
  if (x.dtype != "float32" && x.dtype != "float64") {
    throw InvalidInput(fmt::format("gemm takes float32 or float64, not {} ({})", x.dtype, x.name));
  }
}

// The dtype of a problem's data: float64 for double, float32 for the others.
std::string_view data_dtype(GemmPrecision precision) {
  return precision == GemmPrecision::float64 ? "float64" : "float32";
}

}  // namespace

GemmProblem gemm_problem(const GemmOperand& a, const GemmOperand& b, bool transpose_a,
                         bool transpose_b, std::string_view precision,
                         std::string_view precision_argument) {
  check_operand(a);
  check_operand(b);
  if (a.dtype != b.dtype) {
    throw InvalidInput(fmt::format("gemm: {} is {} but {} is {}; give both the same dtype", a.name,
                                   a.dtype, b.name, b.dtype));
  }
  const bool single = a.dtype == "float32";
  GemmProblem problem;
  problem.precision = precision.empty() ? (single ? GemmPrecision::float32 : GemmPrecision::float64)
                                        : parse_gemm_precision(precision);
  if (data_dtype(problem.precision) != a.dtype) {
    throw InvalidInput(fmt::format(
        "gemm: {} {} computes on {} data, but the inputs are {} (the output keeps the inputs' "
        "dtype)",
        precision_argument, precision, data_dtype(problem.precision), a.dtype));
  }
  // numpy's matmul of 2-D arrays: op(A) is M x K, op(B) is K x N.
  problem.transpose_a = transpose_a;
  problem.transpose_b = transpose_b;
  problem.m = transpose_a ? a.shape[1] : a.shape[0];
  problem.k = transpose_a ? a.shape[0] : a.shape[1];
  const std::int64_t b_rows = transpose_b ? b.shape[1] : b.shape[0];
  problem.n = transpose_b ? b.shape[0] : b.shape[1];
  if (b_rows != problem.k) {
    throw InvalidInput(fmt::format(
        "gemm: shapes do not match: {}{} has shape {} and {}{} has shape {} ({} columns against {} "
        "rows)",
        a.name, transpose_a ? " (transposed)" : "", shape_text(a.shape), b.name,
        transpose_b ? " (transposed)" : "", shape_text(b.shape), problem.k, b_rows));
  }
  // Sizes whose product overflows (an M x N output of two empty inputs, say) stop here, before
  // anything is allocated or written.
  validate_gemm_problem(problem);
  return problem;
}

void check_gemm_c0(const GemmProblem& problem, const GemmOperand& c0) {
  const std::string_view dtype = data_dtype(problem.precision);
  if (c0.dtype != dtype) {
    throw InvalidInput(
        fmt::format("gemm: {} is {} but the inputs are {}", c0.name, c0.dtype, dtype));
  }
  if (c0.shape.size() != 2 || c0.shape[0] != problem.m || c0.shape[1] != problem.n) {
    throw InvalidInput(fmt::format("gemm: {} has shape {}, but the product has shape ({}, {})",
                                   c0.name, shape_text(c0.shape), problem.m, problem.n));
  }
}

// ---------------------------------------------------------------------------------------------
// The plan.

struct GemmPlan::Impl {
  Context context;
  GemmProblem problem;
  std::string variant_name;
#if GPUKIT_HAVE_CUDA
  const GemmVariant* variant = nullptr;
  cuda::DeviceBuffer<std::byte> workspace;
  void* cublas_handle = nullptr;
#endif

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
#if GPUKIT_HAVE_CUDA
    if (cublas_handle != nullptr) cuda_detail::destroy_cublas_handle(cublas_handle);
#endif
  }
};

GemmSupport GemmPlan::can_implement(const Context& context, const GemmProblem& problem,
                                    std::string_view variant) {
  try {
    validate_gemm_problem(problem);
  } catch (const InvalidInput& e) {
    return {false, e.what()};
  }
  if (context.backend == Backend::cpu) {
    if (!variant.empty() && variant != kCpuVariant) {
      return {false,
              fmt::format("the CPU backend has one variant, '{}', not '{}'", kCpuVariant, variant)};
    }
    return cpu_detail::openblas_can_implement(problem);
  }
  if (!built_with_cuda()) return {false, "this gpukit was built without CUDA"};
  const std::string name =
      variant.empty() ? default_gemm_variant(problem.precision) : std::string(variant);
  for (const GemmVariant& v : gemm_variants()) {
    if (v.info.name != name) continue;
    if (!v.computes(problem.precision)) {
      std::string computes;
      for (GemmPrecision q : {GemmPrecision::float32, GemmPrecision::float64, GemmPrecision::tf32,
                              GemmPrecision::bf16}) {
        if (!v.computes(q)) continue;
        computes += computes.empty() ? "" : ", ";
        computes += gemm_precision_name(q);
      }
      return {false, fmt::format("variant '{}' computes {}, not {}", name, computes,
                                 gemm_precision_name(problem.precision))};
    }
    if (v.workspace == GemmWorkspace::k_major_operands) {
      // TMA's box coordinates and the kernels' tile indices are 32-bit.
      constexpr std::int64_t kLimit = std::numeric_limits<std::int32_t>::max();
      if (problem.m > kLimit || problem.n > kLimit || problem.k > kLimit) {
        return {false, fmt::format("variant '{}' takes M, N and K below 2^31", name)};
      }
    }
    if (std::string device = gemm_variant_device_support(v, context.cuda_device); !device.empty()) {
      return {false, std::move(device)};
    }
    return {};
  }
  try {
    check_gemm_variant_name(name);
  } catch (const InvalidInput& e) {
    return {false, e.what()};
  }
  return {false, fmt::format("variant '{}' runs on the CPU, not on a GPU", name)};
}

std::vector<std::string> gemm_variant_names() {
  std::vector<std::string> names = {std::string(kCpuVariant)};
  for (const GemmVariant& v : gemm_variants()) names.emplace_back(v.info.name);
  return names;
}

void check_gemm_variant_name(std::string_view name) {
  const std::vector<std::string> names = gemm_variant_names();
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  throw InvalidInput(fmt::format("unknown gemm variant '{}' (known: {}{})", name,
                                 fmt::join(names, ", "),
                                 built_with_cuda() ? "" : "; this gpukit was built without CUDA"));
}

GemmPlan::GemmPlan(const Context& context, const GemmProblem& problem, std::string_view variant)
    : impl_(std::make_unique<Impl>()) {
  validate_gemm_problem(problem);
  if (context.backend == Backend::cuda && !built_with_cuda()) {
    throw DeviceUnavailable("gemm: this gpukit was built without CUDA");
  }
  const GemmSupport support = can_implement(context, problem, variant);
  if (!support) throw InvalidInput("gemm: " + support.reason + " for " + problem.describe());
  impl_->context = context;
  impl_->problem = problem;
  if (context.backend == Backend::cpu) {
    impl_->variant_name = kCpuVariant;
    return;
  }
#if GPUKIT_HAVE_CUDA
  impl_->variant_name =
      variant.empty() ? default_gemm_variant(problem.precision) : std::string(variant);
  impl_->variant = &find_gemm_variant(impl_->variant_name);
  cuda::set_device(context.cuda_device);
  const std::size_t bytes = gemm_workspace_bytes(*impl_->variant, problem);
  if (bytes > 0) impl_->workspace = cuda::DeviceBuffer<std::byte>(bytes);
  if (impl_->variant->needs_cublas) impl_->cublas_handle = cuda_detail::create_cublas_handle();
#endif
}

GemmPlan::GemmPlan(GemmPlan&&) noexcept = default;
GemmPlan& GemmPlan::operator=(GemmPlan&&) noexcept = default;
GemmPlan::~GemmPlan() = default;

const GemmProblem& GemmPlan::problem() const { return impl_->problem; }
std::string_view GemmPlan::variant() const { return impl_->variant_name; }
std::size_t GemmPlan::workspace_bytes() const {
#if GPUKIT_HAVE_CUDA
  return impl_->workspace.size();
#else
  return 0;
#endif
}

template <class T>
void GemmPlan::run(T alpha, const T* a, const T* b, T beta, T* c, StreamHandle stream) {
  const GemmProblem& p = impl_->problem;
  if (!gemm_stores<T>(p.precision)) {
    throw InvalidInput(fmt::format("gemm: a {} plan runs on {} data, not {}",
                                   gemm_precision_name(p.precision),
                                   p.precision == GemmPrecision::float64 ? "double" : "float",
                                   sizeof(T) == 8 ? "double" : "float"));
  }
  if (p.m == 0 || p.n == 0) return;
  const bool reads_operands = p.k > 0 && alpha != T(0);
  if (c == nullptr || (reads_operands && (a == nullptr || b == nullptr))) {
    throw InvalidInput("gemm: a null pointer for a matrix the multiplication uses");
  }
  if (impl_->context.backend == Backend::cpu) {
    if (!reads_operands) {
      scale_c_on_cpu(p, beta, c);
    } else {
      cpu_detail::gemm_openblas(p, alpha, a, b, beta, c, impl_->context.effective_cpu_threads());
    }
    return;
  }
#if GPUKIT_HAVE_CUDA
  cuda::set_device(impl_->context.cuda_device);
  GemmLaunch launch;
  // The canonical form: C row-major. A column-major C is the row-major C^T = op(B)^T op(A)^T,
  // and a column-major stored matrix is the row-major storage of its transpose with the same
  // leading dimension, so the operands swap and keep their transpose flags.
  const bool row_major = p.layout == Layout::row_major;
  launch.m = row_major ? p.m : p.n;
  launch.n = row_major ? p.n : p.m;
  launch.k = p.k;
  launch.a = row_major ? static_cast<const void*>(a) : b;
  launch.lda = row_major ? p.effective_lda() : p.effective_ldb();
  launch.transpose_a = row_major ? p.transpose_a : p.transpose_b;
  launch.b = row_major ? static_cast<const void*>(b) : a;
  launch.ldb = row_major ? p.effective_ldb() : p.effective_lda();
  launch.transpose_b = row_major ? p.transpose_b : p.transpose_a;
  launch.c = c;
  launch.ldc = p.effective_ldc();
  launch.alpha = static_cast<double>(alpha);
  launch.beta = static_cast<double>(beta);
  launch.precision = p.precision;
  launch.workspace = impl_->workspace.data();
  launch.cublas_handle = impl_->cublas_handle;
  launch.stream = stream;
  if (!reads_operands) {
    cuda_detail::launch_scale_c(launch);
  } else {
    impl_->variant->launch(launch);
  }
#else
  (void)stream;
  throw DeviceUnavailable("gemm: this gpukit was built without CUDA");
#endif
}

template void GemmPlan::run<float>(float, const float*, const float*, float, float*, StreamHandle);
template void GemmPlan::run<double>(double, const double*, const double*, double, double*,
                                    StreamHandle);

std::string default_gemm_variant(GemmPrecision) {
  if (!built_with_cuda()) throw DeviceUnavailable("gemm: this gpukit was built without CUDA");
  return "cublas";
}

// ---------------------------------------------------------------------------------------------
// The plan cache of gemm() and gemm_on_device() (gemm.hpp).

namespace {

bool same_problem(const GemmProblem& a, const GemmProblem& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.layout == b.layout &&
         a.transpose_a == b.transpose_a && a.transpose_b == b.transpose_b && a.lda == b.lda &&
         a.ldb == b.ldb && a.ldc == b.ldc && a.precision == b.precision;
}

bool same_context(const Context& a, const Context& b) {
  return a.backend == b.backend && a.cuda_device == b.cuda_device && a.cpu_threads == b.cpu_threads;
}

// The calling thread's plan of its last product, and the stream its last queued run went to.
struct ThreadPlan {
  Context context;
  GemmProblem problem;
  std::string variant;
  std::unique_ptr<GemmPlan> plan;
  StreamHandle last_stream = {};
  bool in_flight = false;

  // Waits for the plan's last queued run.
  void settle() {
    if (!in_flight) return;
#if GPUKIT_HAVE_CUDA
    cuda::synchronize_stream(last_stream);
#endif
    in_flight = false;
  }

  // The plan for a product, made when the last differs. `queue`: the stream a device-data run
  // will be queued on; none for a host call, which finds the plan idle.
  GemmPlan& plan_for(const Context& wanted_context, const GemmProblem& wanted,
                     std::string_view wanted_variant, const StreamHandle* queue) {
    const bool same = plan && same_context(context, wanted_context) &&
                      same_problem(problem, wanted) && variant == wanted_variant;
    if (!same || queue == nullptr || *queue != last_stream) settle();
    if (!same) {
      plan.reset();
      plan = std::make_unique<GemmPlan>(wanted_context, wanted, wanted_variant);
      context = wanted_context, problem = wanted, variant = std::string(wanted_variant);
    }
    return *plan;
  }
};

ThreadPlan& thread_plan() {
  thread_local ThreadPlan cached;
  return cached;
}

}  // namespace

template <class T>
void gemm_on_device(const Context& context, const GemmProblem& problem, T alpha, const T* a,
                    const T* b, T beta, T* c, StreamHandle stream, std::string_view variant) {
  if (context.backend != Backend::cuda) {
    throw DeviceUnavailable("gemm_on_device: the matrices are on a GPU; give a CUDA context");
  }
  ThreadPlan& cached = thread_plan();
  GemmPlan& plan = cached.plan_for(context, problem, variant, &stream);
  plan.run(alpha, a, b, beta, c, stream);
  cached.last_stream = stream;
  cached.in_flight = true;
}

template void gemm_on_device<float>(const Context&, const GemmProblem&, float, const float*,
                                    const float*, float, float*, StreamHandle, std::string_view);
template void gemm_on_device<double>(const Context&, const GemmProblem&, double, const double*,
                                     const double*, double, double*, StreamHandle,
                                     std::string_view);

// ---------------------------------------------------------------------------------------------
// The host-data API.

template <class T>
void gemm(const Context& context, const GemmProblem& problem, T alpha, std::span<const T> a,
          std::span<const T> b, T beta, std::span<T> c, std::string_view variant) {
  validate_gemm_problem(problem);
  const struct {
    const char* name;
    std::size_t held;
    std::int64_t needed;
  } spans[] = {{"A", a.size(), problem.a_elements()},
               {"B", b.size(), problem.b_elements()},
               {"C", c.size(), problem.c_elements()}};
  for (const auto& s : spans) {
    if (s.held < static_cast<std::size_t>(s.needed)) {
      throw InvalidInput(fmt::format("gemm: {} holds {} elements; {} needs {}", s.name, s.held,
                                     problem.describe(), s.needed));
    }
  }
  const std::size_t a_bytes = static_cast<std::size_t>(problem.a_elements()) * sizeof(T);
  const std::size_t b_bytes = static_cast<std::size_t>(problem.b_elements()) * sizeof(T);
  const std::size_t c_bytes = static_cast<std::size_t>(problem.c_elements()) * sizeof(T);
  if (overlaps(c.data(), c_bytes, a.data(), a_bytes) ||
      overlaps(c.data(), c_bytes, b.data(), b_bytes)) {
    throw InvalidInput("gemm: C overlaps A or B");
  }
  GemmPlan& plan = thread_plan().plan_for(context, problem, variant, nullptr);
  if (context.backend == Backend::cpu) {
    plan.run(alpha, a.data(), b.data(), beta, c.data());
    return;
  }
#if GPUKIT_HAVE_CUDA
  detail::gemm_through_device<T>(context, plan, alpha, a, b, beta, c);
#endif
}

template void gemm<float>(const Context&, const GemmProblem&, float, std::span<const float>,
                          std::span<const float>, float, std::span<float>, std::string_view);
template void gemm<double>(const Context&, const GemmProblem&, double, std::span<const double>,
                           std::span<const double>, double, std::span<double>, std::string_view);

}  // namespace gpukit::blas
