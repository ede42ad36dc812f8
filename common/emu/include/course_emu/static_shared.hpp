/// @file static_shared.hpp
/// @brief Static `__shared__` arrays in memory that ends at a guard page, so
/// that an index past an array's end is reported, not silently wrong.
///
/// The translator (translate.hpp) turns each array declarator of a static
/// `__shared__` declaration inside a function, `__shared__ T NAME[DIMS];`,
/// into a reference, `__shared__ T (&NAME)[DIMS] = ::course_emu::static_shared("NAME",
/// __FILE__, __LINE__);`. `__shared__` is `static thread_local`, so the
/// reference is bound once per worker thread (a worker runs one block at a
/// time: its storage is the block's shared memory), to memory this runtime
/// maps for that declaration: the array's last byte is followed by an
/// inaccessible page. A read or write past the end faults there, and the
/// report names the array, its dimensions and element size, the index, and
/// the declaration's file and line, as for dynamic shared memory. An index
/// below 0 is not caught.
#pragma once

#include <cstddef>
#include <type_traits>

namespace course_emu {

namespace detail {

/// @brief Maps guarded memory for one static shared array on the calling
/// worker thread (defined in static_shared.cpp): `bytes` of it end exactly
/// at a guard page, aligned to `alignment`. `extents` holds the first
/// `rank` (at most 3 are reported) dimensions, `element` the size of one element.
void* static_shared_storage(std::size_t bytes, std::size_t alignment, std::size_t element, unsigned rank,
                            const std::size_t* extents, const char* name, const char* file, int line);

}  // namespace detail

/// @brief What the translator binds a static `__shared__` array's reference
/// to: converts to a reference to any array type, the memory for it mapped
/// at that moment (once per worker thread and declaration).
struct StaticSharedArray {
    const char* name;  ///< the array's name in the source
    const char* file;  ///< where it is declared
    int line;          ///< the line of the declaration's `;`

    /// @brief Guarded memory for an array of type A.
    template <class A, class = std::enable_if_t<std::is_array_v<A>>>
    operator A&() const {
        const std::size_t extents[3] = {std::extent_v<A, 0>, std::extent_v<A, 1>, std::extent_v<A, 2>};
        return *static_cast<A*>(detail::static_shared_storage(sizeof(A), alignof(A),
                                                              sizeof(std::remove_all_extents_t<A>),
                                                              std::rank_v<A>, extents, name, file, line));
    }
};

/// @brief The initializer the translator gives a static `__shared__` array's reference.
inline StaticSharedArray static_shared(const char* name, const char* file, int line) { return {name, file, line}; }

}  // namespace course_emu
