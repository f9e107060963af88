// Closes the region kernels/isa_begin.hpp opened. No include guard: once per region.
#undef TRIADA_ISA_REGION_OPEN
#if TRIADA_ISA_BY_PRAGMA && TRIADA_ISA_VARIANT != TRIADA_ISA_PORTABLE
#if defined(__clang__)
#pragma clang attribute pop
#elif defined(__GNUC__)
#pragma GCC pop_options
#endif
#endif
