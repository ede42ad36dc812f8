// Device memory on the emulator: guard pages around every allocation, a
// quarantine for freed ones, the explanations the fault handler prints, and
// the registry checks of cudaMemcpy, cudaMemset and cudaFree.
#include "../../src/allocator.hpp"

#include <course/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

using course_emu::detail::page_size;

std::size_t round_up(std::size_t n, std::size_t unit) { return (n + unit - 1) / unit * unit; }

std::string hex(const void* p) {
    char text[32];
    std::snprintf(text, sizeof text, "%p", p);
    return text;
}

// What describe_fault_address says about `address`, or "(not explained)".
std::string describe(const void* address) {
    char text[512];
    std::memset(text, 'x', sizeof text);
    if (!course_emu::detail::describe_fault_address(address, text, sizeof text)) return "(not explained)";
    return text;
}

// True when touching `address` (a read, or a write if `write`) kills a child
// process with SIGSEGV. The child restores the default action first, so a
// handler the runtime may install does not change the outcome.
bool access_faults(volatile char* address, bool write) {
    std::fflush(nullptr);
    const pid_t child = fork();
    if (child == 0) {
        signal(SIGSEGV, SIG_DFL);
        signal(SIGBUS, SIG_DFL);
        if (write) {
            *address = 1;
        } else {
            (void)*address;
        }
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

std::size_t mapping_count() {
    std::ifstream maps("/proc/self/maps");
    std::size_t lines = 0;
    for (std::string line; std::getline(maps, line);) ++lines;
    return lines;
}

}  // namespace

TEST_CASE("device allocations are 256-byte aligned and usable to their last byte", "[emu][memory]") {
    for (std::size_t bytes : {std::size_t{1}, std::size_t{4}, std::size_t{255}, std::size_t{256}, std::size_t{257},
                              std::size_t{4000}, std::size_t{4096}, std::size_t{4097}, std::size_t{(1 << 20) + 3}}) {
        CAPTURE(bytes);
        char* p = nullptr;
        REQUIRE(cudaMalloc(&p, bytes) == cudaSuccess);
        CHECK(reinterpret_cast<std::uintptr_t>(p) % 256 == 0);
        std::vector<char> pattern(bytes), back(bytes);
        for (std::size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<char>(i * 7 + 1);
        // Host and "device" share memory: kernels dereference it directly.
        std::memcpy(p, pattern.data(), bytes);
        CHECK(cudaMemcpy(back.data(), p, bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
        CHECK(back == pattern);
        CHECK(cudaMemset(p, 0x5A, bytes) == cudaSuccess);
        CHECK(p[0] == 0x5A);
        CHECK(p[bytes - 1] == 0x5A);
        // The tail up to the next 256 bytes is addressable, as a GPU's allocation granularity is.
        p[round_up(bytes, 256) - 1] = 1;
        CHECK(cudaFree(p) == cudaSuccess);
    }
}

TEST_CASE("the end of a device allocation, rounded up to 256 bytes, touches a guard page", "[emu][memory]") {
    const std::size_t bytes = 4000;
    char* p = nullptr;
    REQUIRE(cudaMalloc(&p, bytes) == cudaSuccess);
    CHECK_FALSE(access_faults(p + bytes - 1, true));
    CHECK_FALSE(access_faults(p + round_up(bytes, 256) - 1, true));
    CHECK(access_faults(p + round_up(bytes, 256), true));
    CHECK(access_faults(p + round_up(bytes, 256), false));
    CHECK(access_faults(p + round_up(bytes, 256) + page_size() - 1, false));
    // The page before the one holding the start is the front guard.
    char* front_guard_end = reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(p) / page_size() * page_size());
    CHECK(access_faults(front_guard_end - 1, false));
    CHECK(cudaFree(p) == cudaSuccess);
}

TEST_CASE("a fault past the end of an allocation is explained in bytes", "[emu][memory]") {
    const std::size_t bytes = 4000;
    char* p = nullptr;
    REQUIRE(cudaMalloc(&p, bytes) == cudaSuccess);
    const std::string at = hex(p);

    std::string text = describe(p + 4096);
    CAPTURE(text);
    CHECK(text == "out-of-bounds access: byte offset 4096 of a 4000-byte device allocation at " + at +
                      ", 96 bytes past its end");
    text = describe(p + 4096 + page_size() - 1);
    CHECK(text.find("byte offset " + std::to_string(4096 + page_size() - 1) + " of a 4000-byte device allocation") !=
          std::string::npos);
    // The slack up to 256 bytes does not fault, but is still explained if asked.
    text = describe(p + 4004);
    CHECK(text.find("byte offset 4004 of a 4000-byte device allocation at " + at + ", 4 bytes past its end") !=
          std::string::npos);
    CHECK(cudaFree(p) == cudaSuccess);
}

TEST_CASE("a fault before the start of an allocation is explained in bytes", "[emu][memory]") {
    const std::size_t bytes = 4000;
    char* p = nullptr;
    REQUIRE(cudaMalloc(&p, bytes) == cudaSuccess);
    char* front_guard_end = reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(p) / page_size() * page_size());
    const std::size_t distance = static_cast<std::size_t>(p - (front_guard_end - 1));
    const std::string text = describe(front_guard_end - 1);
    CAPTURE(text);
    CHECK(text.rfind("out-of-bounds access: " + std::to_string(distance) +
                         " bytes before the start of a 4000-byte device allocation at " + hex(p),
                     0) == 0);
    CHECK(describe(p - 8).find("8 bytes before the start of a 4000-byte device allocation") != std::string::npos);
    CHECK(cudaFree(p) == cudaSuccess);
}

TEST_CASE("a use after cudaFree faults and is explained as one", "[emu][memory]") {
    const std::size_t bytes = 4000;
    char* p = nullptr;
    REQUIRE(cudaMalloc(&p, bytes) == cudaSuccess);
    p[12] = 1;
    const std::string at = hex(p);
    REQUIRE(cudaFree(p) == cudaSuccess);
    CHECK(access_faults(p + 12, false));
    CHECK(access_faults(p, true));
    std::string text = describe(p + 12);
    CAPTURE(text);
    CHECK(text == "use of a freed device allocation (4000 bytes at " + at + ", freed by cudaFree): byte offset 12");
    text = describe(p + 4096);
    CHECK(text.find("use of a freed device allocation (4000 bytes") == 0);
    CHECK(text.find("byte offset 4096, past its end") != std::string::npos);
    // The registry refuses it like any pointer it does not hold.
    std::vector<char> host(16);
    CHECK(cudaMemcpy(host.data(), p, 16, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
    CHECK(cudaMemset(p, 0, 16) == cudaErrorInvalidValue);
    CHECK(cudaFree(p) == cudaErrorInvalidValue);  // double free
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
}

TEST_CASE("addresses far from device allocations are not explained", "[emu][memory]") {
    int on_stack = 0;
    std::vector<int> on_heap(16);
    char* p = nullptr;
    REQUIRE(cudaMalloc(&p, 100) == cudaSuccess);
    CHECK(describe(&on_stack) == "(not explained)");
    CHECK(describe(on_heap.data()) == "(not explained)");
    CHECK(describe(nullptr) == "(not explained)");
    CHECK(describe(reinterpret_cast<void*>(std::uintptr_t{16})) == "(not explained)");
    // A buffer too small for the text is truncated, never overrun.
    char tiny[8];
    std::memset(tiny, 'x', sizeof tiny);
    CHECK(course_emu::detail::describe_fault_address(p + 256, tiny, sizeof tiny));
    CHECK(std::strlen(tiny) == sizeof tiny - 1);
    CHECK(cudaFree(p) == cudaSuccess);
}

TEST_CASE("managed allocations have guard pages and are named as managed", "[emu][memory]") {
    char* p = nullptr;
    REQUIRE(cudaMallocManaged(&p, 1000) == cudaSuccess);
    p[999] = 1;
    CHECK(access_faults(p + 1024, true));
    CHECK(describe(p + 1024).find("byte offset 1024 of a 1000-byte managed allocation") != std::string::npos);
    REQUIRE(cudaFree(p) == cudaSuccess);
    CHECK(describe(p).find("use of a freed managed allocation (1000 bytes") == 0);
}

TEST_CASE("cudaMemcpy and cudaMemset refuse ranges outside one allocation", "[emu][memory]") {
    char* a = nullptr;
    char* b = nullptr;
    REQUIRE(cudaMalloc(&a, 1000) == cudaSuccess);
    REQUIRE(cudaMalloc(&b, 1000) == cudaSuccess);
    std::vector<char> host(4096, 3);
    CHECK(cudaMemcpy(a, host.data(), 1000, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpy(a + 999, host.data(), 1, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpy(a, host.data(), 1001, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    CHECK(cudaMemcpy(a + 1000, host.data(), 1, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    CHECK(cudaMemcpy(a - 1, host.data(), 1, cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    CHECK(cudaMemcpy(host.data(), a + 500, 501, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
    CHECK(cudaMemcpy(b, a, 1000, cudaMemcpyDeviceToDevice) == cudaSuccess);
    CHECK(cudaMemcpy(b, a, 1001, cudaMemcpyDeviceToDevice) == cudaErrorInvalidValue);
    // A range that would span both allocations, whichever order they were mapped in.
    char* low = a < b ? a : b;
    const std::size_t span = static_cast<std::size_t>((a < b ? b : a) - low) + 1;
    CHECK(cudaMemcpy(host.data(), low, std::min(span, host.size()), cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
    CHECK(cudaMemcpy(a, host.data(), 16, cudaMemcpyDefault) == cudaSuccess);
    CHECK(cudaMemcpy(a + 992, host.data(), 16, cudaMemcpyDefault) == cudaErrorInvalidValue);
    CHECK(cudaMemset(a, 0, 1001) == cudaErrorInvalidValue);
    CHECK(cudaMemset(a + 1, 0, 999) == cudaSuccess);
    CHECK(cudaFree(a + 1) == cudaErrorInvalidValue);  // not the pointer cudaMalloc returned
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaFree(a) == cudaSuccess);
    CHECK(cudaFree(b) == cudaSuccess);
}

TEST_CASE("allocating and freeing many small buffers does not exhaust mappings", "[emu][memory]") {
    const std::size_t before = mapping_count();
    std::vector<void*> buffers(10000);
    for (std::size_t i = 0; i < buffers.size(); ++i) {
        REQUIRE(cudaMalloc(&buffers[i], 64 + i % 512) == cudaSuccess);
        static_cast<char*>(buffers[i])[0] = 1;
    }
    for (void* p : buffers) REQUIRE(cudaFree(p) == cudaSuccess);
    // Again, one at a time: the quarantine recycles address space.
    for (int i = 0; i < 10000; ++i) {
        void* p = nullptr;
        REQUIRE(cudaMalloc(&p, 1000) == cudaSuccess);
        REQUIRE(cudaFree(p) == cudaSuccess);
    }
    // What is left is the bounded quarantine (at most 4096 freed regions).
    const std::size_t after = mapping_count();
    CAPTURE(before, after);
    CHECK(after < before + 3 * 4096);
}

TEST_CASE("large allocations are freed at once and their quarantine is bounded", "[emu][memory]") {
    const std::size_t big = (std::size_t{256} << 20) + 3;
    for (int round = 0; round < 8; ++round) {
        char* p = nullptr;
        REQUIRE(cudaMalloc(&p, big) == cudaSuccess);
        p[0] = 1;
        p[big - 1] = 2;
        CHECK(access_faults(p + round_up(big, 256), false));
        REQUIRE(cudaFree(p) == cudaSuccess);
        CHECK(describe(p).find("use of a freed device allocation") == 0);
    }
}
