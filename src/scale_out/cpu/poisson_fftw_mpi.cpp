// The CPU engine of the distributed Poisson solver: FFTW's MPI interface, one slab of axis 0 per
// rank, the spectrum scaled where FFTW's transposed output leaves it (3D: rows of axis 1 local,
// each with every row of axis 0 and all of axis 2; 2D: rows of axis 1 local, each with every row
// of axis 0), so that each solve is two global transposes, FFTW's own (MPI_Alltoall) over the
// job's communicator (Communicator::native_handle(): the only MPI handle outside
// gpukit_distributed). The transforms are the serial CPU plan's (src/pde/cpu/):
// - a periodic grid: fftw_mpi_plan_dft_r2c with FFTW_MPI_TRANSPOSED_OUT on FFTW's padded real
//   layout, the half spectrum scaled, the c2r plan with FFTW_MPI_TRANSPOSED_IN back;
// - a grid with a dirichlet or neumann axis: fftw_mpi_plan_r2r with the same flags, in place on
//   the slab, each axis its boundary's kind (fftw_traits.hpp: RODFT00, REDFT10 / REDFT01, R2HC /
//   HC2R), every coefficient a mode of the grid.
// Both divide by the serial plan's multipliers, bit for bit: the shared eigenvalue magnitudes
// (laplacian_eigenvalues) summed in its order, plus lambda, times the transforms' normalisation,
// in double and rounded once; 0 where the sum is 0 (the constant mode of a singular problem).
// Planned with FFTW_ESTIMATE: the same plan, hence the same bits, every run for the same rank
// and thread counts.

#include <fftw3-mpi.h>
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <mutex>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/pde/detail/fftw_traits.hpp"
#include "gpukit/pde/detail/poisson_building_blocks.hpp"
#include "scale_out/poisson_engines.hpp"

namespace gpukit::scale_out {

namespace {

using pde::Boundary;
using pde::PoissonGrid;
using pde::PoissonOptions;

// Planning across the ranks of a communicator; the rest is FftwCommon.
template <class Real>
struct FftwMpi;
template <>
struct FftwMpi<double> : pde::detail::FftwCommon<double> {
  static ptrdiff_t local_size(int rank, const ptrdiff_t* n, MPI_Comm comm, ptrdiff_t* ln0,
                              ptrdiff_t* l0s, ptrdiff_t* ln1, ptrdiff_t* l1s) {
    return fftw_mpi_local_size_transposed(rank, n, comm, ln0, l0s, ln1, l1s);
  }
  static Plan r2c(int rank, const ptrdiff_t* n, double* in, Complex* out, MPI_Comm comm) {
    return fftw_mpi_plan_dft_r2c(rank, n, in, out, comm, FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_OUT);
  }
  static Plan c2r(int rank, const ptrdiff_t* n, Complex* in, double* out, MPI_Comm comm) {
    return fftw_mpi_plan_dft_c2r(rank, n, in, out, comm, FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_IN);
  }
  static Plan r2r(int rank, const ptrdiff_t* n, double* data, MPI_Comm comm,
                  const fftw_r2r_kind* kinds, unsigned transposed) {
    return fftw_mpi_plan_r2r(rank, n, data, data, comm, kinds, FFTW_ESTIMATE | transposed);
  }
};
template <>
struct FftwMpi<float> : pde::detail::FftwCommon<float> {
  static ptrdiff_t local_size(int rank, const ptrdiff_t* n, MPI_Comm comm, ptrdiff_t* ln0,
                              ptrdiff_t* l0s, ptrdiff_t* ln1, ptrdiff_t* l1s) {
    return fftwf_mpi_local_size_transposed(rank, n, comm, ln0, l0s, ln1, l1s);
  }
  static Plan r2c(int rank, const ptrdiff_t* n, float* in, Complex* out, MPI_Comm comm) {
    return fftwf_mpi_plan_dft_r2c(rank, n, in, out, comm, FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_OUT);
  }
  static Plan c2r(int rank, const ptrdiff_t* n, Complex* in, float* out, MPI_Comm comm) {
    return fftwf_mpi_plan_dft_c2r(rank, n, in, out, comm, FFTW_ESTIMATE | FFTW_MPI_TRANSPOSED_IN);
  }
  static Plan r2r(int rank, const ptrdiff_t* n, float* data, MPI_Comm comm,
                  const fftwf_r2r_kind* kinds, unsigned transposed) {
    return fftwf_mpi_plan_r2r(rank, n, data, data, comm, kinds, FFTW_ESTIMATE | transposed);
  }
};

// fftw(f)_mpi_init after the threads' init (FFTW's order), once per process.
void init_fftw_mpi_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    pde::detail::init_fftw_threads_once();
    fftw_mpi_init();
    fftwf_mpi_init();
  });
}

template <class Real>
class FftwMpiPoisson final : public DistributedPoissonPlan<Real>::Impl {
  using F = FftwMpi<Real>;
  using Base = typename DistributedPoissonPlan<Real>::Impl;

 public:
  FftwMpiPoisson(const Context& context, const PoissonGrid& plan_grid,
                 const PoissonOptions& plan_options, distributed::Communicator& communicator)
      : Base(communicator),
        // Each rank's share of the grid, the same on every rank.
        threads_(cpu_threads_for(
            {plan_grid.size() / std::max(1, communicator.size()), pde::detail::kCpuNsPerGridPoint},
            context.effective_cpu_threads())),
        // The serial plan's choice (src/pde/cpu/poisson_plan.cpp): real-to-complex for a
        // periodic grid, real-to-real for one with a wall.
        real_to_real_(!plan_grid.periodic()) {
    this->grid = plan_grid;
    this->options = plan_options;
    this->engine = std::string(kFftwMpiEngine);
    const MPI_Comm mpi_comm = *static_cast<const MPI_Comm*>(communicator.native_handle());
    const int rank = plan_grid.rank();
    for (int a = 0; a < rank; ++a) dims_.push_back(plan_grid.shape[static_cast<std::size_t>(a)]);
    last_ = dims_.back();
    // The layout FFTW distributes: the real grid (real-to-real), or the half spectrum whose slab
    // of real input is padded to 2 (n/2 + 1) a line (real-to-complex).
    std::vector<ptrdiff_t> spectrum_dims = dims_;
    if (!real_to_real_) spectrum_dims.back() = last_ / 2 + 1;
    padded_ = real_to_real_ ? last_ : 2 * (last_ / 2 + 1);
    ptrdiff_t ln0 = 0, l0s = 0, ln1 = 0, l1s = 0;
    init_fftw_mpi_once();
    alloc_ = F::local_size(rank, spectrum_dims.data(), mpi_comm, &ln0, &l0s, &ln1, &l1s);
    const int part_count = communicator.size(), part = communicator.rank();
    // The partition every gpukit engine uses is FFTW's block distribution; say so loudly if an
    // FFTW ever chose another.
    const SlabRange rows = slab_range(dims_[0], part_count, part);
    const SlabRange columns = slab_range(spectrum_dims[1], part_count, part);
    distributed::agree(communicator, [&] {
      // (FFTW starts an empty range at 0; the partition at the end of the axis.)
      auto same = [](const SlabRange& r, ptrdiff_t start, ptrdiff_t count) {
        return r.count == count && (count == 0 || r.begin == start);
      };
      if (!same(rows, l0s, ln0) || !same(columns, l1s, ln1)) {
        throw std::logic_error(fmt::format(
            "FFTW's MPI distribution (rows {}+{}, columns {}+{}) is not the slab partition "
            "(rows {}+{}, columns {}+{})",
            l0s, ln0, l1s, ln1, rows.begin, rows.count, columns.begin, columns.count));
      }
    });
    local_columns_ = ln1;
    column_start_ = l1s;
    try {
      plan(plan_grid, plan_options, mpi_comm);
    } catch (...) {
      release();  // a constructor that throws runs no destructor
      throw;
    }
  }
  ~FftwMpiPoisson() override { release(); }

 protected:
  void transform_host(std::span<const std::span<const Real>> f,
                      std::span<const std::span<Real>> u) override {
    const std::span<const Real> in = f[0];
    const std::int64_t lines =
        static_cast<std::int64_t>(in.size()) / std::max<std::int64_t>(1, last_);
    // Into FFTW's layout (real-to-complex: each line of the last axis padded to 2 (n/2 + 1)).
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t line = 0; line < lines; ++line) {
      for (std::int64_t k = 0; k < last_; ++k)
        real_[line * padded_ + k] = in[static_cast<std::size_t>(line * last_ + k)];
    }
    F::execute(forward_);
    if (real_to_real_) {
      scale_coefficients([this](std::int64_t i, Real scale) { real_[i] *= scale; });
    } else {
      scale_coefficients([this](std::int64_t i, Real scale) {
        spectrum_[i][0] *= scale;
        spectrum_[i][1] *= scale;
      });
    }
    F::execute(inverse_);
    const std::span<Real> out = u[0];
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t line = 0; line < lines; ++line) {
      for (std::int64_t k = 0; k < last_; ++k)
        out[static_cast<std::size_t>(line * last_ + k)] = real_[line * padded_ + k];
    }
  }

 private:
  // The buffers, the plans (collective) and the eigenvalue tables.
  void plan(const PoissonGrid& plan_grid, const PoissonOptions& plan_options, MPI_Comm mpi_comm) {
    const int rank = plan_grid.rank();
    distributed::agree(*this->comm, [&] { allocate(plan_grid); });
    std::vector<fftw_r2r_kind> forward_kinds, inverse_kinds;
    double norm = 1;
    for (int a = 0; a < rank; ++a) {
      const Boundary b = plan_grid.boundary(a);
      const std::int64_t n = dims_[static_cast<std::size_t>(a)];
      forward_kinds.push_back(pde::detail::r2r_forward_kind(b));
      inverse_kinds.push_back(pde::detail::r2r_inverse_kind(b));
      norm *= real_to_real_ ? pde::detail::r2r_round_trip_factor(b, n) : 1;
      // The last axis of a real-to-complex transform: its half spectrum.
      eigenvalues_.push_back(
          pde::detail::laplacian_eigenvalues(!real_to_real_ && a == rank - 1 ? n / 2 + 1 : n, n,
                                             plan_grid.length(a), b, plan_options.op));
    }
    // (The serial plans' normalisations: the product of the axes' factors, or the grid size.)
    inv_norm_ = real_to_real_ ? 1 / norm : 1.0 / static_cast<double>(plan_grid.size());
    {
      std::lock_guard lock(pde::detail::fftw_planner_mutex());
      F::threads(threads_);
      if (real_to_real_) {
        forward_ = F::r2r(rank, dims_.data(), real_, mpi_comm, forward_kinds.data(),
                          FFTW_MPI_TRANSPOSED_OUT);
        inverse_ = F::r2r(rank, dims_.data(), real_, mpi_comm, inverse_kinds.data(),
                          FFTW_MPI_TRANSPOSED_IN);
      } else {
        forward_ = F::r2c(rank, dims_.data(), real_, spectrum_, mpi_comm);
        inverse_ = F::c2r(rank, dims_.data(), spectrum_, real_, mpi_comm);
      }
    }
    distributed::agree(*this->comm, [&] {
      if (forward_ == nullptr || inverse_ == nullptr)
        throw InvalidInput("poisson: FFTW's MPI interface could not plan the grid " +
                           plan_grid.describe());
    });
  }

  void allocate(const PoissonGrid& plan_grid) {
    // Real-to-real: alloc_ reals, transformed in place. Real-to-complex: the padded real slab
    // holds 2 alloc_ reals, the spectrum alloc_ complex values.
    const std::size_t elements = static_cast<std::size_t>(std::max<ptrdiff_t>(alloc_, 1));
    const std::size_t real_bytes = (real_to_real_ ? 1 : 2) * elements * sizeof(Real);
    const std::size_t spectrum_bytes = real_to_real_ ? 0 : elements * sizeof(typename F::Complex);
    const std::size_t bytes = real_bytes + spectrum_bytes;
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0 &&
        bytes > static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)) {
      throw OutOfMemory(fmt::format("poisson: the distributed CPU solver's buffers for {} (more "
                                    "than the host's physical memory)",
                                    plan_grid.describe()),
                        bytes);
    }
    real_ = static_cast<Real*>(F::malloc(real_bytes));
    if (spectrum_bytes > 0)
      spectrum_ = static_cast<typename F::Complex*>(F::malloc(spectrum_bytes));
    if (real_ == nullptr || (spectrum_bytes > 0 && spectrum_ == nullptr)) {
      release();
      throw OutOfMemory("poisson: fftw_malloc of the distributed CPU solver's buffers", bytes);
    }
  }

  // scale(i, -inv_norm / (the axes' eigenvalue magnitudes + lambda)) for coefficient i of the
  // transposed output (i = (column * n0 + x) * inner + z, inner the last axis' coefficients in
  // 3D, 1 in 2D), 0 where that sum is 0. The sum in the serial plans' order (3D: axis 2 + (axis
  // 1 + axis 0), then lambda); the multiplier in double, rounded once: their bits. (With lambda
  // 0 the sum plus 0 is the sum: the periodic, spectral, lambda = 0 solve keeps its bits.)
  template <class Scale>
  void scale_coefficients(Scale scale) {
    const double inv_norm = inv_norm_, lambda = this->options.helmholtz;
    const std::int64_t n0 = dims_[0];
    const bool three = dims_.size() == 3;
    const std::vector<double>& e0 = eigenvalues_[0];
    const std::vector<double>& e1 = eigenvalues_[1];
    const std::int64_t inner = three ? static_cast<std::int64_t>(eigenvalues_[2].size()) : 1;
    auto multiplier = [&](double magnitudes) {
      const double denominator = magnitudes + lambda;
      return denominator > 0 ? static_cast<Real>(-inv_norm / denominator) : Real(0);
    };
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t c = 0; c < local_columns_; ++c) {
      const double ec = e1[static_cast<std::size_t>(column_start_ + c)];
      for (std::int64_t x = 0; x < n0; ++x) {
        const std::int64_t line = (c * n0 + x) * inner;
        const double e01 = ec + e0[static_cast<std::size_t>(x)];
        if (three) {
          const std::vector<double>& e2 = eigenvalues_[2];
          for (std::int64_t z = 0; z < inner; ++z)
            scale(line + z, multiplier(e2[static_cast<std::size_t>(z)] + e01));
        } else {
          scale(line, multiplier(e01));
        }
      }
    }
  }

  void release() { pde::detail::release_fftw<F>(forward_, inverse_, real_, spectrum_); }

  int threads_ = 1;
  bool real_to_real_ = false;
  std::vector<ptrdiff_t> dims_;
  std::int64_t last_ = 1, padded_ = 2;
  ptrdiff_t alloc_ = 0;
  std::int64_t local_columns_ = 0, column_start_ = 0;
  double inv_norm_ = 1;
  // Per axis, in its transform's index order; the last of a real-to-complex transform over its
  // half spectrum.
  std::vector<std::vector<double>> eigenvalues_;
  Real* real_ = nullptr;
  typename F::Complex* spectrum_ = nullptr;  // real-to-complex only
  typename F::Plan forward_ = nullptr, inverse_ = nullptr;
};

}  // namespace

template <class Real>
std::unique_ptr<typename DistributedPoissonPlan<Real>::Impl> make_fftw_mpi_poisson(
    const Context& context, const pde::PoissonGrid& grid, const pde::PoissonOptions& options,
    distributed::Communicator& comm) {
  distributed::agree(comm, [&] {
    if (comm.native_handle() == nullptr)
      throw InvalidInput("poisson: the distributed CPU solver needs the ranks of an MPI job");
  });
  return std::make_unique<FftwMpiPoisson<Real>>(context, grid, options, comm);
}
template std::unique_ptr<DistributedPoissonPlan<float>::Impl> make_fftw_mpi_poisson<float>(
    const Context&, const pde::PoissonGrid&, const pde::PoissonOptions&,
    distributed::Communicator&);
template std::unique_ptr<DistributedPoissonPlan<double>::Impl> make_fftw_mpi_poisson<double>(
    const Context&, const pde::PoissonGrid&, const pde::PoissonOptions&,
    distributed::Communicator&);

}  // namespace gpukit::scale_out
