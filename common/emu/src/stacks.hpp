// Internal: the stacks of emulated threads (stacks.cpp), for the block
// scheduler (block.cpp) that runs threads on them and the fault handler
// (signals.cpp) that recognises an overflow.
#pragma once

#include <boost/context/stack_context.hpp>

#include <cstddef>

namespace course_emu::detail {

/// Stack size of an emulated thread (COURSE_EMU_STACK_KB, default 256 KiB;
/// only the pages a thread touches are ever backed by memory).
std::size_t stack_size();

/// Boost.Context's stack allocator for a fiber: a stack from the pool.
class PooledStack {
public:
    boost::context::stack_context allocate();
    void deallocate(boost::context::stack_context& sc) noexcept;
};

/// Whether `address` is in the guard page below one of the stacks (called
/// from the fault handler: it does not wait for the pool's lock).
bool is_stack_guard(const void* address);

}  // namespace course_emu::detail
