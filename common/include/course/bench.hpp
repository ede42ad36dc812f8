/// @file bench.hpp
/// @brief The benchmark harness every lesson uses (GPU only): CUDA events,
/// warm-up, repeated runs, median and spread, inputs rotated across buffers
/// larger than L2, and the device-to-device copy bandwidth as the ceiling.
///
/// A lesson's benchmark registers its variants in a few lines:
/// @code
/// course::Bench bench("01", "SAXPY over 2^26 floats");
/// const int sets = bench.rotation_sets(bytes_per_set);   // buffers for that many runs
/// bench.add_checked("grid-stride, SMs x 32", false, check_it,  // verify first, then time
///                   [&](int set) { launch(...on buffers[set]...); }, bytes_moved);
/// bench.add_checked("cuBLAS cublasSaxpy", true, check_cublas, [&](int set) { ... }, bytes_moved);
/// bench.report("saxpy.csv");                             // prints the table, writes the CSV
/// @endcode
/// Every variant should be checked for correctness before it is added:
/// a fast wrong kernel is not a result.
#pragma once

#include <course/cuda_check.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace course {

/// @brief How a benchmark names the graded implementation's row: "your
/// launch_saxpy" for a student's code, "reference launch_saxpy" when the
/// benchmark was built from solutions/ (the figures committed to the lessons).
inline std::string implementation_label(const std::string& function) {
#ifdef COURSE_BENCH_OF_REFERENCE
    return "reference " + function;
#else
    return "your " + function;
#endif
}

/// @brief One variant's timings (milliseconds per run) and the work it does per run.
struct BenchResult {
    std::string name;       ///< The variant, as printed.
    bool library = false;   ///< A library baseline (the ratio column compares with it).
    double median_ms = 0;   ///< Median time of one run.
    double min_ms = 0;      ///< Fastest run.
    double max_ms = 0;      ///< Slowest run.
    double bytes = 0;       ///< Bytes read and written per run.
    double flops = 0;       ///< Floating-point operations per run (0: memory-bound, not reported).
    std::string group;      ///< The group (see Bench::set_group()); its library row is the one compared with.

    /// @brief Effective bandwidth of the median run, in GB/s (10^9 bytes per second).
    double gb_per_s() const { return bytes / (median_ms * 1e-3) / 1e9; }
    /// @brief Arithmetic rate of the median run, in GFLOP/s.
    double gflop_per_s() const { return flops / (median_ms * 1e-3) / 1e9; }
};

/// @brief Times a lesson's variants on the current GPU and reports them.
class Bench {
public:
    /// @brief Prepares the timing events, reads the device, and measures the
    /// device-to-device copy bandwidth (the ceiling of a memory-bound kernel).
    /// @param lesson      the lesson number, e.g. "01" (for the CSV).
    /// @param title       what is measured, e.g. "SAXPY over 2^26 floats".
    /// @param repetitions timed runs per variant (after 3 warm-up runs).
    Bench(std::string lesson, std::string title, int repetitions = 50)
        : lesson_(std::move(lesson)), title_(std::move(title)), repetitions_(repetitions) {
        int device = 0;
        COURSE_CUDA_CHECK(cudaGetDevice(&device));
        cudaDeviceProp prop{};
        COURSE_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
        device_ = prop.name;
        l2_bytes_ = static_cast<std::size_t>(prop.l2CacheSize);
        COURSE_CUDA_CHECK(cudaEventCreate(&start_));
        COURSE_CUDA_CHECK(cudaEventCreate(&stop_));
        measure_copy_bandwidth();
    }

    Bench(const Bench&) = delete;
    Bench& operator=(const Bench&) = delete;

    ~Bench() {
        // A destructor cannot throw; the events are released either way.
        (void)cudaEventDestroy(start_);
        (void)cudaEventDestroy(stop_);
    }

    /// @brief How many buffer sets of `bytes_per_set` bytes to rotate through so
    /// that consecutive runs never find their inputs in L2 (at least 2, and
    /// together more than twice the L2 size). The variants added afterwards
    /// are run on sets 0, 1, ..., that many minus one, in turn.
    int rotation_sets(std::size_t bytes_per_set) {
        const std::size_t wanted = 2 * l2_bytes_ / std::max<std::size_t>(bytes_per_set, 1) + 1;
        sets_ = static_cast<int>(std::clamp<std::size_t>(wanted, 2, 64));
        return sets_;
    }

    /// @brief Times `run(set)` (set rotating over rotation_sets()) and records it as a variant.
    /// @param name  the variant's name in the table.
    /// @param run   launches one run on buffer set `set`; must not synchronise.
    /// @param bytes bytes read and written by one run.
    /// @param flops floating-point operations of one run (0 for memory-bound work).
    void add(const std::string& name, const std::function<void(int)>& run, double bytes, double flops = 0) {
        results_.push_back(time_variant(name, run, sets_, bytes, flops));
    }

    /// @brief Like add(), for a library baseline (CUB, Thrust, cuBLAS): the
    /// other variants are reported as a ratio of its time.
    void add_library(const std::string& name, const std::function<void(int)>& run, double bytes, double flops = 0) {
        BenchResult r = time_variant(name, run, sets_, bytes, flops);
        r.library = true;
        results_.push_back(r);
    }

    /// @brief Verifies a variant, then times it: `check()` runs it once and
    /// returns "" when its result is right, or why it is wrong. A variant whose
    /// check fails or throws is listed as not timed: a fast wrong kernel is not
    /// a result.
    /// @param name    the variant's name in the table.
    /// @param library true for a library baseline (see add_library()).
    /// @param check   runs the variant once and judges its result.
    /// @param run     launches one timed run on buffer set `set` (see add()).
    /// @param bytes   bytes read and written by one run.
    /// @param flops   floating-point operations of one run (0 for memory-bound work).
    void add_checked(const std::string& name, bool library, const std::function<std::string()>& check,
                     const std::function<void(int)>& run, double bytes, double flops = 0) {
        std::string wrong;
        try {
            wrong = check();
        } catch (const std::exception& e) {
            wrong = e.what();
        }
        if (!wrong.empty()) {
            skip(name, wrong);
        } else if (library) {
            add_library(name, run, bytes, flops);
        } else {
            add(name, run, bytes, flops);
        }
    }

    /// @brief Starts a group of variants, e.g. one per input: the variants
    /// added from now on are compared with the library baseline of the same
    /// group only (by default every variant is in the one unnamed group).
    /// @param name the group's name, e.g. "uniform".
    void set_group(std::string name) { group_ = std::move(name); }
    /// @brief Records a variant that was not timed because its result was wrong.
    void skip(const std::string& name, const std::string& why) { skipped_.push_back(name + ": " + why); }

    /// @brief The device-to-device copy bandwidth measured at construction, in GB/s.
    double copy_gb_per_s() const { return copy_gb_per_s_; }

    /// @brief The device's name.
    const std::string& device() const { return device_; }

    /// @brief The recorded variants.
    const std::vector<BenchResult>& results() const { return results_; }

    /// @brief Prints the table (time, spread, GB/s or GFLOP/s, fraction of the
    /// copy bandwidth, ratio to the library baseline) and writes the CSV.
    void report(const std::string& csv_path) const {
        const BenchResult* library = nullptr;
        for (const BenchResult& r : results_) {
            if (r.library) library = &r;
        }
        // The library row a variant is compared with: its group's.
        const auto library_of = [&](const BenchResult& variant) {
            const BenchResult* found = nullptr;
            for (const BenchResult& r : results_) {
                if (r.library && r.group == variant.group) found = &r;
            }
            return found;
        };
        std::printf("\nLesson %s: %s\n", lesson_.c_str(), title_.c_str());
        std::printf("device: %s; device-to-device copy: %.0f GB/s (bytes read + written); median of %d runs, "
                    "inputs rotated over %s\n",
                    device_.c_str(), copy_gb_per_s_, repetitions_, rotation_note().c_str());
        std::printf("  %-44s %10s %21s %10s %9s %11s\n", "variant", "median ms", "spread (min-max) ms",
                    results_.empty() || results_[0].flops == 0 ? "GB/s" : "GFLOP/s", "of copy",
                    library != nullptr ? "vs library" : "");
        // "0.96x": the library's median time over the variant's, rounded
        // the same way in the table and in the "best" line.
        const auto ratio_to = [](const BenchResult& lib, const BenchResult& r) {
            char text[32];
            std::snprintf(text, sizeof text, "%.2fx", lib.median_ms / r.median_ms);
            return std::string(text);
        };
        for (const BenchResult& r : results_) {
            std::string ratio;
            if (const BenchResult* lib = library_of(r); lib != nullptr) ratio = ratio_to(*lib, r);
            std::printf("  %-44s %10.4f %10.4f - %-8.4f %10.1f %8.1f%% %11s\n", r.name.c_str(), r.median_ms,
                        r.min_ms, r.max_ms, r.flops > 0 ? r.gflop_per_s() : r.gb_per_s(),
                        100.0 * r.gb_per_s() / copy_gb_per_s_, ratio.c_str());
        }
        for (const std::string& s : skipped_) std::printf("  not timed: %s\n", s.c_str());
        // The fastest variant that is not the library: the shape to use.
        const BenchResult* best = nullptr;
        for (const BenchResult& r : results_) {
            if (!r.library && (best == nullptr || r.median_ms < best->median_ms)) best = &r;
        }
        if (best != nullptr) {
            library = library_of(*best);
            std::printf("best: %s, %.4f ms, %.1f%% of copy%s\n", best->name.c_str(), best->median_ms,
                        100.0 * best->gb_per_s() / copy_gb_per_s_,
                        library != nullptr
                            ? (", " + ratio_to(*library, *best) + " library").c_str()
                            : "");
        }

        std::ofstream csv(csv_path);
        csv << "lesson,variant,library,median_ms,min_ms,max_ms,bytes,flops,gb_per_s,gflop_per_s,fraction_of_copy,"
               "copy_gb_per_s,device,title\n";
        for (const BenchResult& r : results_) {
            csv << lesson_ << ",\"" << r.name << "\"," << (r.library ? 1 : 0) << "," << r.median_ms << ","
                << r.min_ms << "," << r.max_ms << "," << r.bytes << "," << r.flops << "," << r.gb_per_s() << ","
                << r.gflop_per_s() << "," << r.gb_per_s() / copy_gb_per_s_ << "," << copy_gb_per_s_ << ",\""
                << device_ << "\",\"" << title_ << "\"\n";
        }
        if (!csv) throw std::runtime_error("cannot write " + csv_path);
        std::printf("written: %s\n", csv_path.c_str());
    }

private:
    BenchResult time_variant(const std::string& name, const std::function<void(int)>& run, int sets,
                             double bytes, double flops) {
        constexpr int kWarmup = 3;
        int set = 0;
        const auto next_set = [&] { return set++ % sets; };
        for (int i = 0; i < kWarmup; ++i) {
            run(next_set());
            COURSE_CUDA_CHECK(cudaGetLastError());
        }
        COURSE_CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<double> ms;
        ms.reserve(static_cast<std::size_t>(repetitions_));
        for (int i = 0; i < repetitions_; ++i) {
            COURSE_CUDA_CHECK(cudaEventRecord(start_));
            run(next_set());
            COURSE_CUDA_CHECK(cudaGetLastError());
            COURSE_CUDA_CHECK(cudaEventRecord(stop_));
            COURSE_CUDA_CHECK(cudaEventSynchronize(stop_));
            float elapsed = 0;
            COURSE_CUDA_CHECK(cudaEventElapsedTime(&elapsed, start_, stop_));
            ms.push_back(elapsed);
        }
        std::sort(ms.begin(), ms.end());
        BenchResult r;
        r.name = name;
        r.median_ms = ms[ms.size() / 2];
        r.min_ms = ms.front();
        r.max_ms = ms.back();
        r.bytes = bytes;
        r.flops = flops;
        r.group = group_;
        return r;
    }

    // Copies a buffer larger than L2 device to device, timed like a variant.
    void measure_copy_bandwidth() {
        const std::size_t bytes = std::max<std::size_t>(std::size_t{512} << 20, 4 * l2_bytes_);
        void* a = nullptr;
        void* b = nullptr;
        COURSE_CUDA_CHECK(cudaMalloc(&a, bytes));
        COURSE_CUDA_CHECK(cudaMalloc(&b, bytes));
        COURSE_CUDA_CHECK(cudaMemset(a, 1, bytes));
        const BenchResult copy = time_variant(
            "copy",
            [&](int set) {
                COURSE_CUDA_CHECK(cudaMemcpyAsync(set == 0 ? b : a, set == 0 ? a : b, bytes, cudaMemcpyDeviceToDevice));
            },
            2, 2.0 * static_cast<double>(bytes), 0);
        copy_gb_per_s_ = copy.gb_per_s();
        COURSE_CUDA_CHECK(cudaFree(a));
        COURSE_CUDA_CHECK(cudaFree(b));
    }

    std::string rotation_note() const {
        return "buffer sets totalling more than twice the " + std::to_string(l2_bytes_ >> 20) + " MiB L2";
    }

    std::string lesson_, title_, device_;
    int repetitions_;
    std::size_t l2_bytes_ = 0;
    double copy_gb_per_s_ = 0;
    int sets_ = 1;
    std::string group_;
    cudaEvent_t start_ = nullptr, stop_ = nullptr;
    std::vector<BenchResult> results_;
    std::vector<std::string> skipped_;
};

}  // namespace course
