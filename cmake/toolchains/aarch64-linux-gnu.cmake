# Cross-compiles the course for 64-bit ARM Linux (aarch64: Graviton, Jetson,
# Linux on Apple silicon) with Debian's cross toolchain, and runs what it
# builds under qemu's user-mode emulator. `./course check --arch aarch64`
# uses it (CMakePresets.json's check-aarch64 preset); by hand:
#
#   cmake --preset check-aarch64 -B build/check-aarch64
#
# Debian packages (amd64 host; `dpkg --add-architecture arm64` first):
#   g++-aarch64-linux-gnu qemu-user libboost-context-dev:arm64
# and, as on any host, catch2 and libthrust-dev (headers only: the amd64
# package serves, catch2 cannot be installed for arm64 beside it).
#
# CMAKE_CROSSCOMPILING_EMULATOR prefixes every program of this tree that
# CMake runs: CTest's tests, catch_discover_tests' listing, and the build's
# own tools (the emulator's translator, the mutant maker), which therefore
# run as aarch64 programs too. cmake -P scripts that run a program
# (ExpectFailure.cmake, CheckAnalysisReport.cmake) get it as -DEMULATOR.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Programs run with the arm64 packages' own loader and libraries
# (/lib/ld-linux-aarch64.so.1, /lib/aarch64-linux-gnu: libc6:arm64 and
# libstdc++6:arm64, which libboost-context-dev:arm64 brings), found by qemu
# on the real root. Not `-L /usr/aarch64-linux-gnu`: that takes the cross
# toolchain's loader (glibc 2.36-8cross1 on Debian 12) while the loader's
# cache still names libc6:arm64's libc (2.36-9+deb12u*), and with the two
# mixed the first pthread_create spins forever.
find_program(COURSE_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static)
if(NOT COURSE_QEMU_AARCH64)
  message(FATAL_ERROR "qemu-aarch64 was not found: install it with\n  sudo apt-get install -y qemu-user")
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR "${COURSE_QEMU_AARCH64}")

# Programs (cmake, ctest, doxygen) are the build machine's; libraries and
# headers are found where the arm64 packages and the cross toolchain put
# them (CMake adds the aarch64-linux-gnu multiarch folders by itself).
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
