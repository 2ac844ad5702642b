// tests/docs/examples/blas.cpp: the example of docs/library.md, built and run by ctest.
#include <cstdio>
#include <string>
#include <vector>

#include <gpukit/blas/gemm.hpp>
#include <gpukit/blas/saxpy.hpp>
#include <gpukit/core/context.hpp>

int main() {
  using namespace gpukit;
  const Context context = select_device("auto").context;
  // C = alpha A B + beta C: A is 2 x 3, B 3 x 2, all row-major and packed (numpy's order).
  blas::GemmProblem problem;
  problem.m = 2, problem.n = 2, problem.k = 3;
  problem.precision = blas::GemmPrecision::float64;
  const std::vector<double> a = {1, 2, 3, 4, 5, 6}, b = {1, 0, 0, 1, 1, 1};
  std::vector<double> c = {1, 1, 1, 1};
  // Host data on any context: a CUDA context copies A, B and C through the GPU.
  blas::gemm<double>(context, problem, /*alpha=*/2.0, a, b, /*beta=*/1.0, c);
  // A plan is made once and run many times; on the CPU it takes host pointers (on a CUDA
  // context, device pointers and a stream: run() queues the work there).
  blas::GemmPlan plan(Context::cpu(), problem);
  std::vector<double> c_again = {1, 1, 1, 1};
  plan.run<double>(2.0, a.data(), b.data(), 1.0, c_again.data());
  // out = alpha x + y, element by element (BLAS's SAXPY); out may be y.
  const std::vector<float> x = {1, 2, 3};
  std::vector<float> y = {10, 20, 30};
  blas::axpy<float>(context, 0.5f, x, y, y);
  std::printf("C = [%g %g; %g %g] (%s), y = [%g %g %g]\n", c[0], c[1], c[2], c[3],
              std::string(plan.variant()).c_str(), y[0], y[1], y[2]);
  // A B = [4 5; 10 11], so C = 2 A B + 1 = [9 11; 21 23] exactly: small integers are exact.
  const std::vector<double> expected = {9, 11, 21, 23};
  return c == expected && c_again == expected && y == std::vector<float>{10.5f, 21, 31.5f} ? 0 : 1;
}
