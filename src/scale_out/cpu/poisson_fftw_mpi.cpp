// The CPU engine of the distributed Poisson solver: FFTW's MPI interface. Each rank holds its
// slab of axis 0 in FFTW's padded real layout; fftw_mpi_plan_dft_r2c with
// FFTW_MPI_TRANSPOSED_OUT transforms it and leaves the spectrum transposed (3D: rows of axis 1
// local, each with every row of axis 0 and the half spectrum of axis 2; 2D: rows of the half
// spectrum of axis 1 local, each with every row of axis 0), which is scaled where it lies; the
// c2r plan with FFTW_MPI_TRANSPOSED_IN transforms it back. The two global transposes are FFTW's
// own (MPI_Alltoall) over the job's communicator (Communicator::native_handle(): the only MPI
// handle outside gpukit_distributed). Planned with FFTW_ESTIMATE: the same plan, hence the same
// bits, every run for the same rank and thread counts.

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
            context.effective_cpu_threads())) {
    this->grid = plan_grid;
    this->options = plan_options;
    this->engine = std::string(kFftwMpiEngine);
    const MPI_Comm mpi_comm = *static_cast<const MPI_Comm*>(communicator.native_handle());
    const int rank = plan_grid.rank();
    for (int a = 0; a < rank; ++a) dims_.push_back(plan_grid.shape[static_cast<std::size_t>(a)]);
    last_ = dims_.back();
    padded_ = 2 * (last_ / 2 + 1);
    std::vector<ptrdiff_t> complex_dims = dims_;
    complex_dims.back() = last_ / 2 + 1;
    ptrdiff_t ln0 = 0, l0s = 0, ln1 = 0, l1s = 0;
    init_fftw_mpi_once();
    alloc_ = F::local_size(rank, complex_dims.data(), mpi_comm, &ln0, &l0s, &ln1, &l1s);
    const int part_count = communicator.size(), part = communicator.rank();
    // The partition every gpukit engine uses is FFTW's block distribution; say so loudly if an
    // FFTW ever chose another.
    const SlabRange rows = slab_range(dims_[0], part_count, part);
    const SlabRange columns = slab_range(complex_dims[1], part_count, part);
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
      plan(plan_grid, mpi_comm);
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
    // Into FFTW's padded layout (each line of the last axis padded to 2 (n/2 + 1)).
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t line = 0; line < lines; ++line) {
      for (std::int64_t k = 0; k < last_; ++k)
        real_[line * padded_ + k] = in[static_cast<std::size_t>(line * last_ + k)];
    }
    F::execute(forward_);
    scale_spectrum();
    F::execute(inverse_);
    const std::span<Real> out = u[0];
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t line = 0; line < lines; ++line) {
      for (std::int64_t k = 0; k < last_; ++k)
        out[static_cast<std::size_t>(line * last_ + k)] = real_[line * padded_ + k];
    }
  }

 private:
  // The buffers, the plans (collective) and the wave-number tables.
  void plan(const PoissonGrid& plan_grid, MPI_Comm mpi_comm) {
    const int rank = plan_grid.rank();
    distributed::agree(*this->comm, [&] { allocate(plan_grid); });
    {
      std::lock_guard lock(pde::detail::fftw_planner_mutex());
      F::threads(threads_);
      forward_ = F::r2c(rank, dims_.data(), real_, spectrum_, mpi_comm);
      inverse_ = F::c2r(rank, dims_.data(), spectrum_, real_, mpi_comm);
    }
    distributed::agree(*this->comm, [&] {
      if (forward_ == nullptr || inverse_ == nullptr)
        throw InvalidInput("poisson: FFTW's MPI interface could not plan the grid " +
                           plan_grid.describe());
    });
    for (int a = 0; a < rank; ++a) {
      const std::int64_t n = dims_[static_cast<std::size_t>(a)];
      k2_.push_back(
          pde::detail::squared_wave_numbers(a == rank - 1 ? n / 2 + 1 : n, n, plan_grid.length(a)));
    }
  }

  void allocate(const PoissonGrid& plan_grid) {
    // The padded real slab holds 2 alloc_ reals, the spectrum alloc_ complex values.
    const std::size_t elements = static_cast<std::size_t>(std::max<ptrdiff_t>(alloc_, 1));
    const std::size_t bytes = 4 * elements * sizeof(Real);
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0 &&
        bytes > static_cast<std::size_t>(pages) * static_cast<std::size_t>(page)) {
      throw OutOfMemory(fmt::format("poisson: the distributed CPU solver's buffers for {} (more "
                                    "than the host's physical memory)",
                                    plan_grid.describe()),
                        bytes);
    }
    real_ = static_cast<Real*>(F::malloc(2 * elements * sizeof(Real)));
    spectrum_ =
        static_cast<typename F::Complex*>(F::malloc(elements * sizeof(typename F::Complex)));
    if (real_ == nullptr || spectrum_ == nullptr) {
      release();
      throw OutOfMemory("poisson: fftw_malloc of the distributed CPU solver's buffers", bytes);
    }
  }

  // u_hat = -f_hat / |k|^2 / n over the transposed spectrum, zero mode 0; the multiplier in
  // double, rounded once, |k|^2 summed in the serial CPU backend's order.
  void scale_spectrum() {
    const double inv_n = 1.0 / static_cast<double>(this->grid.size());
    const std::int64_t n0 = dims_[0];
    const bool three = dims_.size() == 3;
    const std::int64_t inner = three ? dims_[2] / 2 + 1 : 1;  // 3D: the half axis 2
    const std::vector<double>& k0 = k2_[0];
    const std::vector<double>& k1 = k2_[1];
#pragma omp parallel for schedule(static) num_threads(threads_)
    for (std::int64_t c = 0; c < local_columns_; ++c) {
      const double kc = k1[static_cast<std::size_t>(column_start_ + c)];
      for (std::int64_t x = 0; x < n0; ++x) {
        typename F::Complex* line = spectrum_ + (c * n0 + x) * inner;
        if (three) {
          const double k01 = kc + k0[static_cast<std::size_t>(x)];
          const std::vector<double>& k2 = k2_[2];
          for (std::int64_t z = 0; z < inner; ++z) {
            const double k = k2[static_cast<std::size_t>(z)] + k01;
            const Real scale = k > 0 ? static_cast<Real>(-inv_n / k) : Real(0);
            line[z][0] *= scale;
            line[z][1] *= scale;
          }
        } else {
          const double k = kc + k0[static_cast<std::size_t>(x)];
          const Real scale = k > 0 ? static_cast<Real>(-inv_n / k) : Real(0);
          line[0][0] *= scale;
          line[0][1] *= scale;
        }
      }
    }
  }

  void release() { pde::detail::release_fftw<F>(forward_, inverse_, real_, spectrum_); }

  int threads_ = 1;
  std::vector<ptrdiff_t> dims_;
  std::int64_t last_ = 1, padded_ = 2;
  ptrdiff_t alloc_ = 0;
  std::int64_t local_columns_ = 0, column_start_ = 0;
  std::vector<std::vector<double>> k2_;  // per axis; the last over its half spectrum
  Real* real_ = nullptr;
  typename F::Complex* spectrum_ = nullptr;
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
