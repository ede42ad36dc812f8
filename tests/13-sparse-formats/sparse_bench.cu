// Lesson 13 benchmark (GPU only): a random matrix of 2^22 rows with 16
// entries per row (2^26 entries, unsorted COO). Your coo_to_csr against
// cuSPARSE's sort by row + gather + coo2csr, and your csr_spmv against
// cusparseSpMV, against the measured device-to-device copy bandwidth; and
// the lesson's earlier references beside them (earlier_reference.cuh: an
// atomic scatter and a sort per row; one thread per row in the SpMV, then
// 16 lanes a row of one entry each, in warp runs of rows and grid-stride),
// so that one run shows what each step of the current reference gained.
// Every variant's result is checked before it is timed.
//
//   lesson13_bench [output.csv]
#include <sparse.hpp>

#include "cpu_reference.hpp"
#include "cusparse_helpers.hpp"
#include "earlier_reference.cuh"

#include <course/bench.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int kRows = 1 << 22;
constexpr int kPerRow = 16;
constexpr int kNnz = kRows * kPerRow;
constexpr int kStripe = kRows / kPerRow;  // entry j of a row lies in columns [j kStripe, (j+1) kStripe)

std::string first_difference(const std::vector<int>& expected, const std::vector<int>& got, const char* name) {
    for (std::size_t i = 0; i < expected.size(); ++i) {
        if (expected[i] != got[i]) {
            return std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(got[i]) + ", expected " +
                   std::to_string(expected[i]);
        }
    }
    return "";
}

}  // namespace

int main(int argc, char** argv) {
    const std::string csv = argc > 1 ? argv[1] : "lesson13_bench.csv";
    course::Bench bench("13", "COO to CSR and SpMV, 2^22 rows x 16 entries (random order, random columns)");
    // One copy of the inputs: 2^26 entries are 768 MiB of COO, far beyond
    // the L2 cache, so no run finds the previous run's data there.
    (void)bench.rotation_sets(std::size_t{12} * kNnz);

    // The COO: every row's 16 columns in 16 different stripes (no
    // duplicates, so cuSPARSE's order is the one CSR), entries shuffled.
    std::vector<int> rows(kNnz), cols(kNnz);
    {
        auto gen = course::rng("bench matrix");
        std::vector<int> order(kNnz);
        std::iota(order.begin(), order.end(), 0);
        std::shuffle(order.begin(), order.end(), gen);
        for (int e = 0; e < kNnz; ++e) {
            const int k = order[e];
            rows[k] = e / kPerRow;
            cols[k] = (e % kPerRow) * kStripe + static_cast<int>(gen() % kStripe);
        }
    }
    const std::vector<float> vals = course::random_values<float>(kNnz, -1.0f, 1.0f, "bench vals");
    const std::vector<float> x = course::random_values<float>(kRows, -1.0f, 1.0f, "bench x");
    std::vector<int> expected_row_ptr(kRows + 1);
    for (int r = 0; r <= kRows; ++r) expected_row_ptr[r] = r * kPerRow;
    std::vector<int> identity(kNnz);
    std::iota(identity.begin(), identity.end(), 0);

    const course::DeviceBuffer<int> d_rows(rows), d_cols(cols), d_identity(identity);
    const course::DeviceBuffer<float> d_vals(vals), d_x(x);
    course::DeviceBuffer<int> row_ptr(kRows + 1), csr_cols(kNnz);
    course::DeviceBuffer<float> csr_vals(kNnz), y(kRows);

    // cuSPARSE's conversion: the sort works in place, so each run first
    // copies the COO indices and an identity permutation (counted in its
    // time and bytes: the student's version leaves its input untouched).
    lesson13::test::CusparseHandle handle;
    course::DeviceBuffer<int> lib_rows(kNnz), lib_cols(kNnz), permutation(kNnz), lib_row_ptr(kRows + 1);
    course::DeviceBuffer<float> lib_vals(kNnz);
    std::size_t sort_bytes = 0;
    COURSE_CUSPARSE_CHECK(cusparseXcoosort_bufferSizeExt(handle.get(), kRows, kRows, kNnz, d_rows.data(),
                                                         d_cols.data(), &sort_bytes));
    course::DeviceBuffer<char> sort_buffer(sort_bytes);
    cusparseSpVecDescr_t gathered;
    cusparseDnVecDescr_t source;
    COURSE_CUSPARSE_CHECK(cusparseCreateSpVec(&gathered, kNnz, kNnz, permutation.data(), lib_vals.data(),
                                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    COURSE_CUSPARSE_CHECK(cusparseCreateDnVec(&source, kNnz, const_cast<float*>(d_vals.data()), CUDA_R_32F));
    const auto cusparse_convert = [&](int) {
        const std::size_t bytes = std::size_t{4} * kNnz;
        COURSE_CUDA_CHECK(cudaMemcpyAsync(lib_rows.data(), d_rows.data(), bytes, cudaMemcpyDeviceToDevice));
        COURSE_CUDA_CHECK(cudaMemcpyAsync(lib_cols.data(), d_cols.data(), bytes, cudaMemcpyDeviceToDevice));
        COURSE_CUDA_CHECK(cudaMemcpyAsync(permutation.data(), d_identity.data(), bytes, cudaMemcpyDeviceToDevice));
        COURSE_CUSPARSE_CHECK(cusparseXcoosortByRow(handle.get(), kRows, kRows, kNnz, lib_rows.data(),
                                                    lib_cols.data(), permutation.data(), sort_buffer.data()));
        COURSE_CUSPARSE_CHECK(cusparseGather(handle.get(), source, gathered));
        COURSE_CUSPARSE_CHECK(cusparseXcoo2csr(handle.get(), lib_rows.data(), kNnz, kRows, lib_row_ptr.data(),
                                               CUSPARSE_INDEX_BASE_ZERO));
    };
    const auto student_convert = [&](int) {
        lesson13::coo_to_csr(kRows, kNnz, d_rows.data(), d_cols.data(), d_vals.data(), row_ptr.data(),
                             csr_cols.data(), csr_vals.data());
    };
    // The least traffic of a conversion: read 3 COO arrays, write 2 CSR arrays and the offsets
    // (the same for both variants, so GB/s compare like times; cuSPARSE's copies are extra work).
    const double convert_bytes = 20.0 * kNnz + 4.0 * (kRows + 1);

    bench.set_group("COO to CSR");
    bench.add_checked("cuSPARSE XcoosortByRow + Gather + Xcoo2csr", true, [&] {
        cusparse_convert(0);
        return first_difference(expected_row_ptr, lib_row_ptr.download(), "row_ptr");
    }, cusparse_convert, convert_bytes);
    // A course conversion's check: offsets against the CPU, entries against cuSPARSE's.
    const auto check_conversion = [&](const std::function<void(int)>& convert) {
        row_ptr.poison();
        csr_cols.poison();
        convert(0);
        COURSE_CUDA_CHECK(cudaGetLastError());
        std::string wrong = first_difference(expected_row_ptr, row_ptr.download(), "row_ptr");
        if (wrong.empty()) wrong = first_difference(lib_cols.download(), csr_cols.download(), "csr_cols");
        if (wrong.empty()) {
            const std::vector<float> want = lib_vals.download(), got = csr_vals.download();
            for (int k = 0; k < kNnz && wrong.empty(); ++k) {
                if (want[k] != got[k]) wrong = "csr_vals[" + std::to_string(k) + "] differs from cuSPARSE's";
            }
        }
        return wrong;
    };
    const auto earlier_convert = [&](int) {
        lesson13::earlier::coo_to_csr(kRows, kNnz, d_rows.data(), d_cols.data(), d_vals.data(), row_ptr.data(),
                                      csr_cols.data(), csr_vals.data());
    };
    bench.add_checked("earlier reference coo_to_csr (atomic scatter, a thread sorts each row)", false,
                      [&] { return check_conversion(earlier_convert); }, earlier_convert, convert_bytes);
    bench.add_checked(course::implementation_label("coo_to_csr"), false,
                      [&] { return check_conversion(student_convert); }, student_convert, convert_bytes);

    // SpMV on the CSR both produced (they are equal: checked above).
    std::vector<double> exact(kRows), magnitude(kRows);
    {
        const std::vector<int> host_cols = csr_cols.download();
        const std::vector<float> host_vals = csr_vals.download();
        for (int r = 0; r < kRows; ++r) {
            for (int k = expected_row_ptr[r]; k < expected_row_ptr[r + 1]; ++k) {
                const double term = static_cast<double>(host_vals[k]) * x[host_cols[k]];
                exact[r] += term;
                magnitude[r] += std::fabs(term);
            }
        }
    }
    const auto check_y = [&]() -> std::string {
        const std::vector<float> got = y.download();
        for (int r = 0; r < kRows; ++r) {
            if (!(std::fabs(got[r] - exact[r]) <= (kPerRow + 2) * FLT_EPSILON * magnitude[r])) {
                return "y[" + std::to_string(r) + "] = " + std::to_string(got[r]) + ", expected " +
                       std::to_string(exact[r]);
            }
        }
        return "";
    };
    cusparseSpMatDescr_t a;
    cusparseDnVecDescr_t vec_x, vec_y;
    COURSE_CUSPARSE_CHECK(cusparseCreateCsr(&a, kRows, kRows, kNnz, lib_row_ptr.data(), lib_cols.data(),
                                            lib_vals.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    COURSE_CUSPARSE_CHECK(cusparseCreateDnVec(&vec_x, kRows, const_cast<float*>(d_x.data()), CUDA_R_32F));
    COURSE_CUSPARSE_CHECK(cusparseCreateDnVec(&vec_y, kRows, y.data(), CUDA_R_32F));
    const float one = 1.0f, zero = 0.0f;
    std::size_t spmv_bytes = 0;
    COURSE_CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, vec_x,
                                                  &zero, vec_y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &spmv_bytes));
    course::DeviceBuffer<char> spmv_buffer(spmv_bytes);
    const auto cusparse_spmv = [&](int) {
        COURSE_CUSPARSE_CHECK(cusparseSpMV(handle.get(), CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, vec_x, &zero,
                                           vec_y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, spmv_buffer.data()));
    };
    const auto student_spmv = [&](int) {
        lesson13::csr_spmv(kRows, row_ptr.data(), csr_cols.data(), csr_vals.data(), d_x.data(), y.data());
    };
    // The least traffic of y = A x: the matrix once (offsets, columns,
    // values), x once, y once. x is gathered at random columns, so a
    // kernel reads more than this (32-byte sectors for 4-byte values).
    const double spmv_traffic = 8.0 * kNnz + 4.0 * (kRows + 1) + 4.0 * kRows + 4.0 * kRows;
    const double spmv_flops = 2.0 * kNnz;

    bench.set_group("SpMV");
    bench.add_checked("cusparseSpMV (CSR, ALG_DEFAULT)", true, [&] {
        y.poison();
        cusparse_spmv(0);
        return check_y();
    }, cusparse_spmv, spmv_traffic, spmv_flops);
    const auto earlier_spmv = [&](int) {
        lesson13::earlier::csr_spmv(kRows, row_ptr.data(), csr_cols.data(), csr_vals.data(), d_x.data(), y.data());
    };
    const auto check_spmv = [&](const std::function<void(int)>& spmv) {
        y.poison();
        spmv(0);
        COURSE_CUDA_CHECK(cudaGetLastError());
        return check_y();
    };
    bench.add_checked("earlier reference csr_spmv (a thread per row)", false,
                      [&] { return check_spmv(earlier_spmv); }, earlier_spmv, spmv_traffic, spmv_flops);
    // The second reference: 16 lanes a row of one entry each, each warp a
    // run of rows; then the same kernel with rows grid-stride, the step to
    // today's reference (which adds 16-byte loads of 4 entries a lane).
    const auto group_spmv_warp_runs = [&](int) {
        lesson13::earlier::group_spmv<false>(kRows, row_ptr.data(), csr_cols.data(), csr_vals.data(), d_x.data(),
                                             y.data());
    };
    const auto group_spmv_grid_stride = [&](int) {
        lesson13::earlier::group_spmv<true>(kRows, row_ptr.data(), csr_cols.data(), csr_vals.data(), d_x.data(),
                                            y.data());
    };
    bench.add_checked("earlier reference csr_spmv (16 lanes x 1 entry a row, warp runs of rows)", false,
                      [&] { return check_spmv(group_spmv_warp_runs); }, group_spmv_warp_runs, spmv_traffic,
                      spmv_flops);
    bench.add_checked("16 lanes x 1 entry a row, rows grid-stride", false,
                      [&] { return check_spmv(group_spmv_grid_stride); }, group_spmv_grid_stride, spmv_traffic,
                      spmv_flops);
    bench.add_checked(course::implementation_label("csr_spmv"), false,
                      [&] { return check_spmv(student_spmv); }, student_spmv, spmv_traffic, spmv_flops);

    COURSE_CUSPARSE_CHECK(cusparseDestroySpMat(a));
    COURSE_CUSPARSE_CHECK(cusparseDestroyDnVec(vec_x));
    COURSE_CUSPARSE_CHECK(cusparseDestroyDnVec(vec_y));
    COURSE_CUSPARSE_CHECK(cusparseDestroySpVec(gathered));
    COURSE_CUSPARSE_CHECK(cusparseDestroyDnVec(source));
    std::printf("every variant checked (row offsets against the CPU, entries against cuSPARSE, y against a CPU "
                "SpMV in double) before timing\n");
    bench.report(csv);
    return 0;
}
