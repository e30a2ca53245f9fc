#ifndef WR_HEAP_IN_USE_H
#define WR_HEAP_IN_USE_H

#include <stddef.h>

/// Bytes the C allocator has handed out and not yet taken back (glibc: `mallinfo2`'s
/// `uordblks + hblkhd`, the small-block arenas and the mmapped large blocks); 0 where the C
/// library has no such count. A benchmark's steady-state figure: unlike the resident set it does
/// not keep pages a burst touched once.
size_t wr_heap_in_use(void);

#endif
