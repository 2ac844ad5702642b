// gpukit mc as a user runs it: memory that does not grow with --paths, the --paths limit, prices
// keyed by the trade id, and --check against the independent reference.

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_support.hpp"

namespace gpukit::cli_testing {
namespace {

// The peak resident memory (KiB) of `gpukit <args>` run for `seconds`, then stopped.
long peak_kib_of_run_for(const std::vector<std::string>& args, int seconds) {
  const pid_t child = ::fork();
  if (child == 0) {
    std::vector<char*> argv;
    std::string binary = GPUKIT_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copies = args;
    for (std::string& a : copies) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  ::kill(child, SIGKILL);
  int status = 0;
  struct rusage usage {};
  ::wait4(child, &status, 0, &usage);
  return usage.ru_maxrss;
}

TEST(MonteCarloCliMemory, PeakMemoryDoesNotGrowWithPaths) {
  // One row at 2^34 paths (the limit): before issue 18 the CPU backend allocated 64 bytes per
  // 2048 paths up front (512 MiB here, touched at once); now a fixed 4 MiB of tile moments. The run
  // is stopped after 3 s (it would take hours); its peak must stay far below that.
  const std::string book = write_file(
      "mc_memory.csv", "type,spot,strike,maturity,rate,volatility\ncall,100,100,1,0.05,0.2\n");
  const std::string out = (scratch() / "mc_memory_out.csv").string();
  const long kib = peak_kib_of_run_for({"mc", "--device", "cpu", "--threads", "1", "--input", book,
                                        "--output", out, "--paths", "17179869184"},
                                       3);
  EXPECT_LT(kib, 200 * 1024) << "peak " << kib << " KiB";
  EXPECT_GT(kib, 0);
}

TEST(MonteCarloCli, PathsOutsideTheLimitAreAUsageErrorNamingPaths) {
  const std::string book = write_file(
      "mc_limit.csv", "type,spot,strike,maturity,rate,volatility\ncall,100,100,1,0.05,0.2\n");
  for (const char* paths : {"17179869186", "1000000000000000", "1"}) {
    const Result r =
        run(std::string("mc --device cpu --input ") + book + " --output - --paths " + paths);
    EXPECT_EQ(r.exit_code, 2) << paths << r.err;
    EXPECT_NE(r.err.find("--paths"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("allocation"), std::string::npos) << r.err;
  }
}

// The lines of a CSV the tool wrote (no quoted fields), each split at its commas.
std::vector<std::vector<std::string>> csv_rows(const std::string& csv) {
  std::vector<std::vector<std::string>> rows;
  for (std::size_t line_start = 0; line_start < csv.size();) {
    const std::size_t end = std::min(csv.find('\n', line_start), csv.size());
    const std::string line = csv.substr(line_start, end - line_start);
    std::vector<std::string> fields;
    std::size_t from = 0;
    for (std::size_t comma; (comma = line.find(',', from)) != std::string::npos; from = comma + 1)
      fields.push_back(line.substr(from, comma - from));
    fields.push_back(line.substr(from));
    rows.push_back(std::move(fields));
    line_start = end + 1;
  }
  return rows;
}

// The price column of each row, keyed by its id.
std::map<std::string, std::string> prices_by_id(const std::string& csv) {
  std::map<std::string, std::string> prices;
  const auto rows = csv_rows(csv);
  // id first; price is the first output column, after the 10 input columns.
  for (std::size_t r = 1; r < rows.size(); ++r) prices[rows[r][0]] += rows[r][10] + ";";
  return prices;
}

TEST(MonteCarloCli, ATradeKeepsItsPriceWhereverItSitsInWhicheverBook) {
  const std::string header =
      "id,type,spot,strike,maturity,rate,volatility,barrier,barrier_type,steps\n";
  const std::string t1 = "T1,call,100,105,1,0.03,0.25,,none,\n";
  const std::string t2 = "T2,put,100,95,0.5,0.03,0.3,85,down-out,12\n";
  const std::string t3 = "T3,call,90,100,2,0.01,0.2,120,up-in,6\n";
  const std::string other = "X9,call,50,50,1,0.02,0.4,,none,\n";
  const std::string a = write_file("mc_ids_a.csv", header + t1 + t2 + t3);
  const std::string b = write_file("mc_ids_b.csv", header + other + t3 + other + t1 + t2);
  const auto out_a = (scratch() / "mc_ids_a_out.csv").string();
  const auto out_b = (scratch() / "mc_ids_b_out.csv").string();
  for (const char* flags :
       {"", " --antithetic --control-variate --monitoring continuous", " --precision float"}) {
    const std::string common = std::string(" --device cpu --paths 5000 --seed 11") + flags;
    const Result ra = run("mc --input " + a + " --output " + out_a + common);
    ASSERT_EQ(ra.exit_code, 0) << ra.err;
    const Result rb = run("mc --threads 1 --input " + b + " --output " + out_b + common);
    ASSERT_EQ(rb.exit_code, 0) << rb.err;
    const auto pa = prices_by_id(slurp(out_a)), pb = prices_by_id(slurp(out_b));
    for (const char* id : {"T1", "T2", "T3"}) {
      EXPECT_EQ(pa.at(id), pb.at(id)) << id << flags;
      EXPECT_NE(pa.at(id), "0;") << id;
    }
    // X9 twice: one id, one stream, one price, said once on stderr.
    // (It said "1 ids appear".)
    EXPECT_NE(rb.err.find("gpukit: mc: 1 id appears on more than one row (2 rows)"),
              std::string::npos)
        << rb.err;
    EXPECT_EQ(pb.at("X9").substr(0, pb.at("X9").find(';') + 1) +
                  pb.at("X9").substr(0, pb.at("X9").find(';') + 1),
              pb.at("X9"));
    EXPECT_EQ(ra.err.find("on more than one row"), std::string::npos) << ra.err;
  }
}

// One column of a CSV the tool wrote, by its header name, as numbers.
std::vector<double> column_of(const std::string& csv, const std::string& name) {
  const auto rows = csv_rows(csv);
  const auto& header = rows.at(0);
  const auto at =
      static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  std::vector<double> values;
  for (std::size_t r = 1; r < rows.size(); ++r) values.push_back(std::stod(rows[r].at(at)));
  return values;
}

// Black-Scholes, for the Sobol test's oracle (the test's own, no gpukit code).
double black_scholes_price(bool put, double s, double k, double t, double r, double sigma) {
  const auto cdf = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  const double d1 = (std::log(s / k) + (r + 0.5 * sigma * sigma) * t) / (sigma * std::sqrt(t));
  const double d2 = d1 - sigma * std::sqrt(t);
  return put ? k * std::exp(-r * t) * cdf(-d2) - s * cdf(-d1)
             : s * cdf(d1) - k * std::exp(-r * t) * cdf(d2);
}

TEST(MonteCarloCli, SobolSamplerPricesWithinFourStandardErrorsAndRefusesWhatItCannot) {
  const std::string book = write_file("mc_sobol.csv",
                                      "type,spot,strike,maturity,rate,volatility\n"
                                      "call,100,100,1,0.05,0.2\n"
                                      "put,100,95,0.5,0.03,0.3\n");
  const double exact[] = {black_scholes_price(false, 100, 100, 1, 0.05, 0.2),
                          black_scholes_price(true, 100, 95, 0.5, 0.03, 0.3)};
  const auto out = (scratch() / "mc_sobol_out.csv").string();
  const std::string common =
      " --device cpu --input " + book + " --output " + out + " --paths 65536 --seed 5";
  Result r = run("mc" + common + " --sampler sobol --replicates 8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<double> price = column_of(slurp(out), "price");
  const std::vector<double> sobol_error = column_of(slurp(out), "std_error");
  r = run("mc" + common);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<double> philox_error = column_of(slurp(out), "std_error");
  ASSERT_EQ(price.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_LE(std::fabs(price[i] - exact[i]), 4 * sobol_error[i]) << i;
    EXPECT_GT(sobol_error[i], 0) << i;
    // At equal paths the scrambled points' error bar is far below the pseudo-random one's.
    EXPECT_LT(sobol_error[i], 0.25 * philox_error[i]) << i;
  }
  std::filesystem::remove(out);
  r = run("mc" + common + " --sampler halton");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--sampler"), std::string::npos) << r.err;
  // --check recomputes the Sobol points' paths in long double: the book passes.
  std::filesystem::remove(out);
  r = run("mc" + common + " --sampler sobol --replicates 8 --check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("vs an independent long-double reference"), std::string::npos) << r.err;
  std::filesystem::remove(out);
  // 65536 paths are not a multiple of 3 replicates.
  for (const char* refused : {" --sampler sobol --replicates 3"}) {
    r = run("mc" + common + refused);
    EXPECT_EQ(r.exit_code, 3) << refused << r.err;
    EXPECT_EQ(r.err.rfind("gpukit: ", 0), 0u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << refused;
  }
}

// `mc --check` on `book` (an early-exercise row and a European row) with `paths` paths: in double
// every row to the rounding; in float the early-exercise row's regression cannot be bounded
// tightly, and the check says so.
void expect_checked_early_exercise(const std::string& book, const std::string& out, int paths) {
  const std::string command = "mc --device cpu --input " + book + " --output " + out + " --paths " +
                              std::to_string(paths) + " --check";
  Result r = run(command);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("vs an independent long-double reference"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("bound above their standard error"), std::string::npos) << r.err;
  std::filesystem::remove(out);
  r = run(command + " --precision float");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("1 of 2 rows are checked only within a bound above their standard error"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(std::filesystem::exists(out));
}

// Early exercise from a CSV book: the american row by Longstaff-Schwartz, the european row beside
// it as before; --check recomputes both.
TEST(MonteCarloCli, AnExerciseColumnPricesAmericanRowsAndCheckChecksThem) {
  const std::string book =
      write_file("mc_exercise.csv",
                 "id,type,spot,strike,maturity,rate,volatility,exercise,steps\n"
                 "A,put,36,40,1,0.06,0.2,american,50\n"
                 "E,put,36,40,1,0.06,0.2,european,50\n");
  const auto out = (scratch() / "mc_exercise_out.csv").string();
  const std::string common =
      " --device cpu --input " + book + " --output " + out + " --paths 65536";
  Result r = run("mc" + common);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<double> price = column_of(slurp(out), "price");
  const std::vector<double> std_error = column_of(slurp(out), "std_error");
  // Longstaff and Schwartz's put on 50 dates: 4.47787 by the binomial tree of the tests; the
  // estimator is low-biased (the tests' allowance: 4 standard errors and 0.5% below).
  EXPECT_LE(price[0], 4.47787 + 4 * std_error[0]);
  EXPECT_GE(price[0], 4.47787 * 0.995 - 4 * std_error[0]);
  EXPECT_NEAR(price[1], black_scholes_price(true, 36, 40, 1, 0.06, 0.2), 4 * std_error[1]);
  // --check recomputes both passes in long double.
  std::filesystem::remove(out);
  expect_checked_early_exercise(book, out, 4096);
}

// --check recomputes heston early-exercise rows too (the QE paths, the regression on the variance
// as well).
TEST(MonteCarloCli, CheckChecksHestonEarlyExerciseRows) {
  const std::string book = write_file(
      "mc_heston_exercise.csv",
      "id,type,spot,strike,maturity,rate,volatility,exercise,steps,model,v0,kappa,theta,sigma_v,"
      "rho\n"
      "A,put,36,40,1,0.06,0.2,american,10,heston,0.04,1.5,0.04,0.5,-0.6\n"
      "E,put,36,40,1,0.06,0.2,european,10,heston,0.04,1.5,0.04,0.5,-0.6\n");
  expect_checked_early_exercise(book, (scratch() / "mc_heston_exercise_out.csv").string(), 2048);
}

// --greeks adds delta, gamma and vega after paths, for every kind of row (a European, an Asian,
// a barrier, a heston and an American one). The European call's gamma (the difference of its
// pathwise deltas at spot +- 1%) has a standard error of about 4.1e-4 at 2^16 paths (the
// lognormal second moment of tests/finance/monte_carlo_greeks_test.cpp): within 0.002 of
// Black-Scholes' 0.018762, and its pathwise delta within 0.01 of 0.636831 (a standard error of
// about 0.0025).
TEST(MonteCarloCli, GreeksAddDeltaGammaAndVegaOnEveryKindOfRow) {
  const std::string book = write_file(
      "mc_greeks.csv",
      "id,type,spot,strike,maturity,rate,volatility,barrier,barrier_type,steps,average,exercise,"
      "model,v0,kappa,theta,sigma_v,rho\n"
      "E,call,100,100,1,0.05,0.2,,,,,,,,,,,\n"
      "A,call,100,100,1,0.05,0.2,,,12,arithmetic,,,,,,,\n"
      "B,put,100,100,1,0.05,0.2,90,down-out,12,,,,,,,,\n"
      "H,call,100,100,1,0.01,0.2,,,16,,,heston,0.04,2,0.04,0.3,-0.5\n"
      "P,put,36,40,1,0.06,0.2,,,10,,american,,,,,,\n");
  const auto out = (scratch() / "mc_greeks_out.csv").string();
  std::filesystem::remove(out);
  const Result r =
      run("mc --device cpu --paths 65536 --greeks --input " + book + " --output " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string csv = slurp(out);
  EXPECT_NE(csv.find(",price,std_error,ci_low,ci_high,paths,delta,gamma,vega\n"), std::string::npos)
      << csv.substr(0, csv.find('\n'));
  const std::vector<double> delta = column_of(csv, "delta"), gamma = column_of(csv, "gamma"),
                            vega = column_of(csv, "vega");
  ASSERT_EQ(gamma.size(), 5u);
  EXPECT_NEAR(delta[0], 0.636831, 0.01);
  EXPECT_NEAR(gamma[0], 0.018762, 0.002);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_TRUE(std::isfinite(delta[i]) && std::isfinite(gamma[i]) && std::isfinite(vega[i]))
        << "row " << i;
    if (i == 2) continue;  // the down-out put is concave near its barrier
    EXPECT_GT(gamma[i], 0) << "row " << i;
    EXPECT_GT(vega[i], 0) << "row " << i;
  }
  const Result help = run("mc --help");
  EXPECT_NE(help.out.find("Add delta, gamma and vega"), std::string::npos) << help.out;
}

TEST(MonteCarloCli, CheckOnTheCpuComparesWithTheIndependentReference) {
  const std::string book =
      write_file("mc_check_cpu.csv",
                 "type,spot,strike,maturity,rate,volatility,barrier,barrier_type,steps\n"
                 "call,100,100,1,0.05,0.2,,none,\n"
                 "put,100,95,1,0.05,0.2,90,down-out,6\n"
                 "call,100,100,1,0.05,0.2,120,up-in,6\n");
  const auto out = (scratch() / "mc_check_cpu_out.csv").string();
  for (const char* flags : {"", " --precision float --control-variate --antithetic"}) {
    std::filesystem::remove(out);
    const Result r = run("mc --device cpu --input " + book + " --output " + out +
                         " --paths 6000 --check --monitoring continuous" + flags);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("vs an independent long-double reference"), std::string::npos) << r.err;
    EXPECT_TRUE(std::filesystem::exists(out));
  }
}

// Issue 30: `mc --demo-options N` alone was a usage error though the README says it works, and
// `--demo 2 --demo-options 3` priced 3 options without a word.
TEST(MonteCarloCli, DemoOptionsAloneRunsTheDemoAndTwoDifferentCountsAreRefused) {
  const std::string paths = " --device cpu --paths 4096";
  for (const std::string args : {"--demo-options 3", "--demo 3 --demo-options 3", "--demo 3",
                                 "--demo --demo-options 3", "--demo-options 3 --demo"}) {
    const Result r = run("mc " + args + paths);
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
    EXPECT_NE(r.out.find("(4096 paths each, 3 options, double)"), std::string::npos)
        << args << ": " << r.out;
  }
  const Result both = run("mc --demo 2 --demo-options 3" + paths);
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_NE(both.err.find("--demo 2 and --demo-options 3 give two numbers of demo options"),
            std::string::npos)
      << both.err;
  EXPECT_TRUE(both.out.empty()) << both.out;
  const Result with_input = run("mc --demo-options 3 --input x.csv --output -" + paths);
  EXPECT_EQ(with_input.exit_code, 2) << with_input.err;
}

// Issue 30: deep out-of-the-money rows came out as price 0, std_error 0, ci [0, 0] without a word,
// and a barrier breached at the start (a down-out at 110 on a spot of 100) was priced silently.
TEST(MonteCarloCli, RowsWithoutAPayingPathAndBarriersBreachedAtTheStartAreNamed) {
  const std::string book =
      write_file("mc_unpaid.csv",
                 "type,spot,strike,maturity,rate,volatility,barrier,barrier_type,steps\n"
                 "call,100,100,1,0.05,0.2,,none,\n"
                 "call,100,400,0.1,0.05,0.2,,none,\n"
                 "put,100,100,1,0.05,0.2,110,down-out,12\n"
                 "call,100,100,1,0.05,0.2,90,up-in,12\n"
                 "put,100,10,0.1,0.05,0.2,,none,\n"
                 "call,100,400,0,0.05,0.2,,none,\n");
  for (const std::string flags : {"", " --quiet"}) {
    const Result r = run("mc --device cpu --paths 2000 --input " + book + " --output -" + flags);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("gpukit: mc: warning: " + book +
                         ":4: the down-out barrier 110 is breached at the start (spot 100): the "
                         "option is priced as knocked out (price 0)\n"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("gpukit: mc: warning: " + book +
                         ":5: the up-in barrier 90 is breached at the start (spot 100): the option "
                         "is priced as knocked in (the vanilla option)\n"),
              std::string::npos)
        << r.err;
    // Rows 3 and 6; row 7 (no time left) and the knocked-out row 4 are 0 for reasons of their own.
    EXPECT_NE(r.err.find("gpukit: mc: warning: 2 of 6 options had no paying path among their 2000 "
                         "paths (" +
                         book + ":3, " + book +
                         ":6): their price, std_error and ci "
                         "are 0, which is no confidence interval; it says that a path pays with a "
                         "probability below 0.0015 (95% confidence)"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.out.find("call,100,400,0.1,0.05,0.2,,none,,0,0,0,0,2000\n"), std::string::npos)
        << r.out;
  }
  // A book without such rows says nothing.
  const Result quiet = run("mc --device cpu --paths 2000 --output - --input " +
                           write_file("mc_paid.csv",
                                      "type,spot,strike,maturity,rate,volatility\n"
                                      "call,100,100,1,0.05,0.2\n"));
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("warning"), std::string::npos) << quiet.err;
}

// `gpukit mc --device cpu --paths 5000 --seed 3 --antithetic --control-variate` of the book in
// ABookWithoutTheNewColumnsPricesByteForByteAsBefore, written by gpukit at main f486909.
constexpr const char* kPricedAtMain =
    "type,spot,strike,maturity,rate,volatility,barrier,barrier_type,steps,price,std_error,ci_low,"
    "ci_high,paths,vrf_antithetic,vrf_control\n"
    "call,100,100,1,0.05,0.2,,none,,10.418873712725444,0.03857325727799861,10.343270128460567,"
    "10.494477296990322,5000,1.9875731296295565,14.430082587793175\n"
    "put,100,95,1,0.05,0.2,90,down-out,6,0.09424582720532082,0.007173713064892255,"
    "0.080185349598132,0.10830630481250964,5000,1.0352975373337925,1.0147915445895948\n"
    "call,100,100,1,0.05,0.2,120,up-in,6,8.357424569242683,0.07235999015027411,8.215598988548146,"
    "8.49925014993722,5000,1.4340648123792592,6.130406448840937\n";

// Issue 33: a book without the new columns prices byte for byte as before them (the output below
// was written by gpukit at main f486909, before the columns were read), and the same book with
// the new columns at their defaults gives the same prices.
TEST(MonteCarloCli, ABookWithoutTheNewColumnsPricesByteForByteAsBefore) {
  const std::string header = "type,spot,strike,maturity,rate,volatility,barrier,barrier_type,steps";
  const std::string rows[] = {"call,100,100,1,0.05,0.2,,none,",
                              "put,100,95,1,0.05,0.2,90,down-out,6",
                              "call,100,100,1,0.05,0.2,120,up-in,6"};
  std::string plain = header + "\n", with_columns = header + ",average,exercise,model,kappa\n";
  for (const std::string& row : rows) plain += row + "\n", with_columns += row + ",,European,,\n";
  const std::string flags = " --device cpu --paths 5000 --seed 3 --antithetic --control-variate";
  const Result before =
      run("mc --input " + write_file("mc_plain.csv", plain) + " --output -" + flags);
  ASSERT_EQ(before.exit_code, 0) << before.err;
  EXPECT_EQ(before.out, kPricedAtMain) << before.out;
  const Result after =
      run("mc --input " + write_file("mc_defaults.csv", with_columns) + " --output -" + flags);
  ASSERT_EQ(after.exit_code, 0) << after.err;
  // The same rows with four more input fields: the priced columns are the same.
  const auto prices = [](const std::string& csv, std::size_t price_column) {
    std::vector<std::string> out;
    std::size_t at = csv.find('\n') + 1;
    for (std::size_t end; (end = csv.find('\n', at)) != std::string::npos; at = end + 1) {
      std::string line = csv.substr(at, end - at);
      std::size_t from = 0;
      for (std::size_t k = 0; k < price_column; ++k) from = line.find(',', from) + 1;
      out.push_back(line.substr(from));
    }
    return out;
  };
  EXPECT_EQ(prices(before.out, 9), prices(after.out, 13));
}

TEST(MonteCarloCli, AsianAndHestonRowsArePricedAndCheckedAndNonsenseIsARowError) {
  const std::string header =
      "id,type,spot,strike,maturity,rate,volatility,barrier,barrier_type,steps,average,model,v0,"
      "kappa,theta,sigma_v,rho\n";
  const std::string book =
      write_file("mc_products.csv",
                 header +
                     "A1,call,100,100,1,0.05,0.2,,,12,arithmetic,,,,,,\n"
                     "A2,put,100,100,1,0.05,0.2,,,12,Geometric,,,,,,\n"
                     "H1,call,100,100,1,0.01,0.2,,,16,,heston,0.04,4,0.25,1,-0.5\n"
                     "H2,put,100,90,1,0.01,0.2,85,down-out,16,,HESTON,0.04,4,0.25,1,-0.5\n"
                     "H3,call,100,100,1,0.01,0.2,,,16,arithmetic,heston,0.04,4,0.25,1,-0.5\n");
  const auto out = (scratch() / "mc_products_out.csv").string();
  const std::string asian =
      write_file("mc_asian.csv", header +
                                     "A1,call,100,100,1,0.05,0.2,,,12,arithmetic,,,,,,\n"
                                     "A2,put,100,100,1,0.05,0.2,,,12,Geometric,,,,,,\n");
  for (const char* flags : {"", " --precision float --antithetic --control-variate"}) {
    std::filesystem::remove(out);
    const Result r =
        run("mc --device cpu --paths 3000 --check --input " + asian + " --output " + out + flags);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("vs an independent long-double reference"), std::string::npos) << r.err;
    EXPECT_TRUE(std::filesystem::exists(out));
    std::filesystem::remove(out);
    const Result all =
        run("mc --device cpu --paths 3000 --input " + book + " --output " + out + flags);
    ASSERT_EQ(all.exit_code, 0) << all.err;
    EXPECT_NE(slurp(out).find("H3,call,100,100,1,0.01,0.2,,,16,arithmetic,heston"),
              std::string::npos);
  }
  // --check covers every row of the book, heston rows included (Andersen's QE step in long
  // double on the same numbers), in double and in float.
  for (const char* flags : {"", " --precision float --antithetic --control-variate"}) {
    std::filesystem::remove(out);
    const Result checked =
        run("mc --device cpu --paths 600 --check --input " + book + " --output " + out + flags);
    ASSERT_EQ(checked.exit_code, 0) << checked.err;
    EXPECT_NE(checked.err.find("vs an independent long-double reference"), std::string::npos)
        << checked.err;
    EXPECT_TRUE(std::filesystem::exists(out));
  }
  // Nonsense: exit 3, file:line:column, nothing written.
  struct Bad {
    std::string row, message;
  };
  const std::vector<Bad> bad = {
      {"B1,call,100,100,1,0.05,0.2,90,down-out,12,arithmetic,,,,,,",
       ":2:11: average: an Asian (arithmetic) option takes no barrier, got barrier_type down-out"},
      {"B2,call,100,100,1,0.05,0.2,,,12,,heston,0.04,-1,0.25,1,-0.5",
       ":2:14: kappa: must be > 0, got \"-1\""},
      {"B3,call,100,100,1,0.05,0.2,,,12,,heston,0.04,1,0.25,1,",
       ":2:17: rho: empty field, a heston row needs v0, kappa, theta, sigma_v and rho"},
      {"B4,call,100,100,1,0.05,0.2,,,,,heston,0.04,1,0.25,1,0.3",
       ":2:10: steps: empty field, a heston row needs its number of time steps"},
  };
  for (const Bad& b : bad) {
    std::filesystem::remove(out);
    const std::string file = write_file("mc_bad_row.csv", header + b.row + "\n");
    const Result r = run("mc --device cpu --paths 100 --input " + file + " --output " + out);
    EXPECT_EQ(r.exit_code, 3) << r.err;
    EXPECT_NE(r.err.find("gpukit: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(file + b.message), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << b.row;
  }
  // A heston barrier row under continuous monitoring is the engine's refusal: exit 3 too.
  std::filesystem::remove(out);
  const Result continuous = run("mc --device cpu --paths 100 --monitoring continuous --input " +
                                book + " --output " + out);
  EXPECT_EQ(continuous.exit_code, 3) << continuous.err;
  EXPECT_NE(continuous.err.find("continuous monitoring"), std::string::npos) << continuous.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  // gpukit bs refuses an Asian row at its field.
  const Result bs = run("bs --input " + book + " --output -");
  EXPECT_EQ(bs.exit_code, 3) << bs.err;
  EXPECT_NE(bs.err.find(":2:11: average: an Asian option: Black-Scholes prices European options "
                        "only"),
            std::string::npos)
      << bs.err;
}

}  // namespace
}  // namespace gpukit::cli_testing
