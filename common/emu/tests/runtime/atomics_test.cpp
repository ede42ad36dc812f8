// The emulator's atomic functions: CUDA's results for every type, exact
// totals when blocks on different worker threads contend for one address, the
// compare-and-swap loops lessons build on, and the per-launch counts.
#include "atomic_kernels.hpp"

#include <course/catch.hpp>
#include <course/cuda_check.hpp>
#include <course/device_buffer.hpp>
#include <course/inputs.hpp>
#include <course/schedules.hpp>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace {

using emu_atomic_test::Op;
using Counts = course_emu::AtomicCounts;

// Clears a fault left by a test so the next test starts on a healthy device.
struct ResetDevice {
    ~ResetDevice() { (void)cudaDeviceReset(); }
};

const char* op_name(Op op) {
    switch (op) {
        case Op::add: return "atomicAdd";
        case Op::sub: return "atomicSub";
        case Op::exch: return "atomicExch";
        case Op::min: return "atomicMin";
        case Op::max: return "atomicMax";
        case Op::inc: return "atomicInc";
        case Op::dec: return "atomicDec";
        case Op::and_: return "atomicAnd";
        case Op::or_: return "atomicOr";
        case Op::xor_: return "atomicXor";
    }
    return "?";
}

// The counter an operation must increment.
unsigned long long Counts::*counter_of(Op op) {
    switch (op) {
        case Op::add: return &Counts::add;
        case Op::sub: return &Counts::sub;
        case Op::exch: return &Counts::exch;
        case Op::min: return &Counts::min;
        case Op::max: return &Counts::max;
        case Op::inc: return &Counts::inc;
        case Op::dec: return &Counts::dec;
        case Op::and_: return &Counts::and_;
        case Op::or_: return &Counts::or_;
        case Op::xor_: return &Counts::xor_;
    }
    return &Counts::total;
}

// One thread applies `op` to a word holding `initial`: the function must
// return `initial` (the old value) and leave `expected` in memory.
template <class T>
void check_op(Op op, T initial, T value, T expected) {
    INFO(op_name(op) << " on " << initial << " with " << value);
    course::DeviceBuffer<T> address(std::vector<T>{initial});
    course::DeviceBuffer<T> old(1);
    old.poison();
    emu_atomic_test::launch_apply(op, address.data(), value, old.data());
    COURSE_LAUNCH_CHECK();
    CHECK(old.download()[0] == initial);
    CHECK(address.download()[0] == expected);
}

// One thread calls atomicCAS on a word holding `initial`.
template <class T>
void check_cas(T initial, T compare, T value, T expected) {
    INFO("atomicCAS on " << +initial << " comparing with " << +compare << ", swapping in " << +value);
    course::DeviceBuffer<T> address(std::vector<T>{initial});
    course::DeviceBuffer<T> old(1);
    old.poison();
    emu_atomic_test::launch_cas(address.data(), compare, value, old.data());
    COURSE_LAUNCH_CHECK();
    CHECK(old.download()[0] == initial);
    CHECK(address.download()[0] == expected);
}

// `n` operations of one kind: every other counter must stay at zero.
void check_only(const Counts& c, unsigned long long Counts::*kind, unsigned long long n) {
    CHECK(c.total == n);
    CHECK(c.*kind == n);
    const unsigned long long Counts::*all[] = {&Counts::add, &Counts::sub,  &Counts::exch, &Counts::min,
                                               &Counts::max, &Counts::inc,  &Counts::dec,  &Counts::and_,
                                               &Counts::or_, &Counts::xor_, &Counts::cas};
    for (const auto other : all) {
        if (other != kind) CHECK(c.*other == 0);
    }
}

}  // namespace

TEST_CASE("atomicAdd, atomicSub and atomicExch return the old value for every type CUDA provides",
          "[emu][atomics]") {
    check_op(Op::add, 5, -8, -3);
    check_op(Op::add, INT_MAX, 1, INT_MIN);  // wraps like the GPU's two's complement
    check_op(Op::add, UINT_MAX, 2u, 1u);
    check_op(Op::add, 1ull << 40, 5ull, (1ull << 40) + 5);
    check_op(Op::add, 1.5f, 2.25f, 3.75f);
    check_op(Op::add, 0.1, 0.2, 0.1 + 0.2);

    check_op(Op::sub, 3, 10, -7);
    check_op(Op::sub, 3u, 5u, UINT_MAX - 1);

    check_op(Op::exch, 7, -1, -1);
    check_op(Op::exch, 7u, 0xFFFF0000u, 0xFFFF0000u);
    check_op(Op::exch, 1ull, ~0ull, ~0ull);
    check_op(Op::exch, 1.0f, -2.5f, -2.5f);
}

TEST_CASE("atomicMin and atomicMax compare signed and unsigned 32- and 64-bit words as their types",
          "[emu][atomics]") {
    check_op(Op::min, -3, 5, -3);
    check_op(Op::min, 5, -3, -3);
    check_op(Op::max, -3, 5, 5);
    check_op(Op::max, 5, -3, 5);
    // 0x80000000 is negative as an int and large as an unsigned int.
    check_op(Op::min, 0x80000000u, 1u, 1u);
    check_op(Op::max, 1u, 0x80000000u, 0x80000000u);
    check_op(Op::min, 1LL << 40, -(1LL << 40), -(1LL << 40));
    check_op(Op::max, -(1LL << 40), 1LL << 40, 1LL << 40);
    check_op(Op::min, 1ull << 63, 1ull, 1ull);
    check_op(Op::max, 1ull, 1ull << 63, 1ull << 63);
    check_op(Op::min, 4, 4, 4);
}

TEST_CASE("atomicInc and atomicDec wrap at their limit as CUDA specifies", "[emu][atomics]") {
    // atomicInc: old >= limit ? 0 : old + 1
    check_op(Op::inc, 0u, 3u, 1u);
    check_op(Op::inc, 2u, 3u, 3u);
    check_op(Op::inc, 3u, 3u, 0u);
    check_op(Op::inc, 7u, 3u, 0u);
    check_op(Op::inc, 0u, 0u, 0u);
    check_op(Op::inc, UINT_MAX - 1, UINT_MAX, UINT_MAX);
    // atomicDec: old == 0 || old > limit ? limit : old - 1
    check_op(Op::dec, 2u, 3u, 1u);
    check_op(Op::dec, 3u, 3u, 2u);
    check_op(Op::dec, 0u, 3u, 3u);
    check_op(Op::dec, 5u, 3u, 3u);
    check_op(Op::dec, 1u, 0u, 0u);
}

TEST_CASE("atomicAnd, atomicOr and atomicXor combine the bits of 32- and 64-bit words", "[emu][atomics]") {
    check_op(Op::and_, 0b1100, 0b1010, 0b1000);
    check_op(Op::or_, 0b1100, 0b1010, 0b1110);
    check_op(Op::xor_, 0b1100, 0b1010, 0b0110);
    check_op(Op::and_, -1, 0x0F0F, 0x0F0F);
    check_op(Op::and_, 0xF0F0F0F0u, 0xFF00FF00u, 0xF000F000u);
    check_op(Op::or_, 0xF0000000u, 0x0000000Fu, 0xF000000Fu);
    check_op(Op::xor_, 0xFFFFFFFFu, 0x0F0F0F0Fu, 0xF0F0F0F0u);
    check_op(Op::and_, ~0ull, 1ull << 63, 1ull << 63);
    check_op(Op::or_, 1ull << 63, 1ull, (1ull << 63) | 1);
    check_op(Op::xor_, (1ull << 63) | 1, 1ull << 63, 1ull);
}

TEST_CASE("atomicCAS swaps only when memory holds the compared value, for 16-, 32- and 64-bit words",
          "[emu][atomics]") {
    using u16 = unsigned short;
    check_cas<u16>(0xBEEF, 0xBEEF, 0x1234, 0x1234);
    check_cas<u16>(0xBEEF, 0xBEEE, 0x1234, 0xBEEF);
    check_cas(-5, -5, 9, 9);
    check_cas(-5, 5, 9, -5);
    check_cas(0xDEADBEEFu, 0xDEADBEEFu, 1u, 1u);
    check_cas(0xDEADBEEFu, 0u, 1u, 0xDEADBEEFu);
    check_cas(~0ull, ~0ull, 1ull << 40, 1ull << 40);
    check_cas(~0ull, ~0ull - 1, 1ull << 40, ~0ull);
}

TEST_CASE("each atomic function counts itself once, under its own kind", "[emu][atomics]") {
    const Op ops[] = {Op::add, Op::sub, Op::exch, Op::min, Op::max,
                      Op::inc, Op::dec, Op::and_, Op::or_, Op::xor_};
    for (const Op op : ops) {
        INFO(op_name(op));
        course::DeviceBuffer<unsigned> address(std::vector<unsigned>{6});
        course::DeviceBuffer<unsigned> old(1);
        emu_atomic_test::launch_apply(op, address.data(), 3u, old.data());
        COURSE_LAUNCH_CHECK();
        check_only(course_emu::last_launch_atomic_counts(), counter_of(op), 1);
    }
    course::DeviceBuffer<unsigned long long> address(std::vector<unsigned long long>{6});
    course::DeviceBuffer<unsigned long long> old(1);
    emu_atomic_test::launch_cas(address.data(), 5ull, 7ull, old.data());  // a failed CAS counts too
    COURSE_LAUNCH_CHECK();
    INFO("atomicCAS");
    check_only(course_emu::last_launch_atomic_counts(), &Counts::cas, 1);
}

TEST_CASE("atomics stay exact when 64 blocks of 256 threads contend for one address", "[emu][atomics]") {
    const unsigned blocks = 64, threads = 256, n = blocks * threads;
    const unsigned ring_limit = 99;
    course::for_each_schedule([&] {
        course::DeviceBuffer<int> int_sum(std::vector<int>{0});
        course::DeviceBuffer<unsigned long long> ull_sum(std::vector<unsigned long long>{0});
        course::DeviceBuffer<float> float_sum(std::vector<float>{0.0f});
        course::DeviceBuffer<double> double_sum(std::vector<double>{0.0});
        course::DeviceBuffer<unsigned> tickets(n);
        course::DeviceBuffer<unsigned> ticket_counter(std::vector<unsigned>{0});
        course::DeviceBuffer<int> min_id(std::vector<int>{INT_MAX});
        course::DeviceBuffer<int> max_id(std::vector<int>{-1});
        course::DeviceBuffer<unsigned> ring(std::vector<unsigned>{0});
        course::DeviceBuffer<unsigned> down_ring(std::vector<unsigned>{0});
        course::DeviceBuffer<unsigned> xor_all(std::vector<unsigned>{0});
        course::DeviceBuffer<unsigned long long> or_bits(std::vector<unsigned long long>{0});
        tickets.poison();
        emu_atomic_test::launch_contended(
            blocks, threads,
            {int_sum.data(), ull_sum.data(), float_sum.data(), double_sum.data(), tickets.data(),
             ticket_counter.data(), min_id.data(), max_id.data(), ring.data(), down_ring.data(), ring_limit,
             xor_all.data(), or_bits.data()});
        COURSE_LAUNCH_CHECK();

        CHECK(int_sum.download()[0] == static_cast<int>(n));
        CHECK(ull_sum.download()[0] == static_cast<unsigned long long>(n) * (n - 1) / 2);
        CHECK(float_sum.download()[0] == static_cast<float>(n));  // exact below 2^24
        CHECK(double_sum.download()[0] == static_cast<double>(n));
        // Every thread got a different old value: the tickets are 0..n-1 in some order.
        std::vector<unsigned> got = tickets.download();
        std::sort(got.begin(), got.end());
        std::vector<unsigned> all(n);
        std::iota(all.begin(), all.end(), 0u);
        CHECK(got == all);
        CHECK(ticket_counter.download()[0] == n);
        CHECK(min_id.download()[0] == 1);
        CHECK(max_id.download()[0] == static_cast<int>(n - 1));
        CHECK(ring.download()[0] == n % (ring_limit + 1));
        CHECK(down_ring.download()[0] == (ring_limit + 1 - n % (ring_limit + 1)) % (ring_limit + 1));
        unsigned expected_xor = 0;
        for (unsigned id = 0; id < n; ++id) expected_xor ^= id * 2654435761u;
        CHECK(xor_all.download()[0] == expected_xor);
        CHECK(or_bits.download()[0] == ~0ull);
    });
}

TEST_CASE("a double atomicAdd built from an atomicCAS loop is exact under contention", "[emu][atomics]") {
    const unsigned blocks = 64, threads = 256, n_threads = blocks * threads;
    const int n = 1009;
    INFO("COURSE_SEED=" << course::seed());
    // Multiples of 1/8 below 16: every partial sum is exact, so any order of
    // additions gives the same total and a lost update cannot hide in rounding.
    std::vector<double> values = course::random_values<double>(n, 0.0, 16.0, "cas loop values");
    for (double& v : values) v = std::floor(v * 8.0) / 8.0;
    double expected = 0.0;
    for (unsigned id = 0; id < n_threads; ++id) expected += values[id % n];

    course::for_each_schedule([&] {
        course::DeviceBuffer<double> d_values(values);
        course::DeviceBuffer<double> sum(std::vector<double>{0.0});
        emu_atomic_test::launch_cas_loop_double_add(blocks, threads, sum.data(), d_values.data(), n);
        COURSE_LAUNCH_CHECK();
        const Counts counts = course_emu::last_launch_atomic_counts();
        CHECK(sum.download()[0] == expected);
        CHECK(counts.cas >= n_threads);
        CHECK(counts.total == counts.cas);
    });

    // Adding 1.0 from every thread counts the threads.
    const std::vector<double> ones(1, 1.0);
    course::DeviceBuffer<double> d_ones(ones);
    course::DeviceBuffer<double> sum(std::vector<double>{0.0});
    emu_atomic_test::launch_cas_loop_double_add(blocks, threads, sum.data(), d_ones.data(), 1);
    COURSE_LAUNCH_CHECK();
    CHECK(sum.download()[0] == static_cast<double>(n_threads));
}

TEST_CASE("an argmin through a packed 64-bit atomicCAS loop finds the smallest value and its first index",
          "[emu][atomics]") {
    INFO("COURSE_SEED=" << course::seed());
    for (const int n : {1, 257, 100003}) {
        INFO("n = " << n);
        std::vector<float> values = course::random_values<float>(n, 1.0f, 1000.0f, "argmin values");
        // The minimum appears several times; the smallest index must win the tie.
        int first = 0;
        if (n > 1) {
            const int ties[] = {n - 1, n / 3, n / 2};
            for (const int i : ties) values[i] = 0.5f;
            first = n / 3;
        } else {
            values[0] = 0.5f;
        }
        course::for_each_schedule([&] {
            course::DeviceBuffer<float> d_values(values);
            course::DeviceBuffer<unsigned long long> best(std::vector<unsigned long long>{~0ull});
            emu_atomic_test::launch_cas_loop_argmin(16, 128, d_values.data(), n, best.data());
            COURSE_LAUNCH_CHECK();
            const unsigned long long packed = best.download()[0];
            CHECK(std::bit_cast<float>(static_cast<unsigned>(packed >> 32)) == 0.5f);
            CHECK(static_cast<int>(packed & 0xFFFFFFFFu) == first);
        });
    }
}

TEST_CASE("a launch counts its own atomics from zero", "[emu][atomics]") {
    const unsigned blocks = 8, threads = 96;
    course::DeviceBuffer<int> counter(std::vector<int>{0});
    emu_atomic_test::launch_one_add_each(blocks, threads, counter.data());
    COURSE_LAUNCH_CHECK();
    {
        INFO("one atomicAdd per thread");
        check_only(course_emu::last_launch_atomic_counts(), &Counts::add, blocks * threads);
    }
    REQUIRE(counter.download()[0] == static_cast<int>(blocks * threads));

    emu_atomic_test::launch_one_add_each(blocks, threads, counter.data());
    COURSE_LAUNCH_CHECK();
    {
        INFO("a second launch does not add to the first one's counts");
        check_only(course_emu::last_launch_atomic_counts(), &Counts::add, blocks * threads);
    }

    course::DeviceBuffer<int> out(32);
    emu_atomic_test::launch_no_atomics(32, out.data());
    COURSE_LAUNCH_CHECK();
    {
        INFO("a launch without atomics");
        check_only(course_emu::last_launch_atomic_counts(), &Counts::add, 0);
    }
}

TEST_CASE("an atomic on a misaligned or null address stops the kernel with a fault that says so",
          "[emu][atomics]") {
    course::DeviceBuffer<char> bytes(16);
    ResetDevice reset;  // declared after the buffer, so the device is healthy again when it is freed
    emu_atomic_test::launch_misaligned_add(bytes.data(), 2);
    REQUIRE(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    std::string report = course_emu::last_fault_report();
    CAPTURE(report);
    CHECK(report.find("atomicAdd") != std::string::npos);
    CHECK(report.find("not aligned to 4 bytes") != std::string::npos);
    CHECK(report.find("misaligned_add") != std::string::npos);
    REQUIRE(cudaDeviceReset() == cudaSuccess);

    emu_atomic_test::launch_misaligned_add(nullptr, 0);
    REQUIRE(cudaDeviceSynchronize() == cudaErrorIllegalAddress);
    report = course_emu::last_fault_report();
    CHECK(report.find("atomicAdd was given a null address") != std::string::npos);
}
