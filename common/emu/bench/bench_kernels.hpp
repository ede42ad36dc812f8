// Launchers of the emulator benchmark's kernels.
#pragma once

namespace emu_bench {

void launch_saxpy(int n, float a, const float* x, float* y);          // <<<64, 256>>>, grid-stride
void launch_reduce(const double* in, int n, double* total);           // <<<16, 256>>>, shared tree + atomicAdd
void launch_transpose(const float* in, float* out, int rows, int cols);  // 16x16(+1) shared tile

}  // namespace emu_bench
