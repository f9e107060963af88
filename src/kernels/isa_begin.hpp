// Opens a region of kernel code compiled for this translation unit's path
// (kernels/isa_variant.hpp); kernels/isa_end.hpp closes it. No include guard: included
// once per region, after every other include (what is included inside would be compiled
// for the path too). The features named here are the ones kernels/isa.cpp checks at run
// time before it lets the path run; keep the two lists the same.
#include "kernels/isa_variant.hpp"

// Regions do not nest: a header included inside one would be compiled in it (and with it
// whatever it includes). clang-format's include sorting must not move this include up:
// keep a comment line above it.
#ifdef TRIADA_ISA_REGION_OPEN
#error "kernels/isa_begin.hpp inside an open region: include it after every other include"
#endif
#define TRIADA_ISA_REGION_OPEN

#if TRIADA_ISA_BY_PRAGMA && TRIADA_ISA_VARIANT != TRIADA_ISA_PORTABLE
#if defined(__clang__)
#if TRIADA_ISA_VARIANT == TRIADA_ISA_AVX512
#pragma clang attribute push(                                                               \
    __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx512cd,avx2,fma,popcnt"))), \
    apply_to = function)
#else
#pragma clang attribute push(__attribute__((target("avx2,fma,popcnt"))), apply_to = function)
#endif
#elif defined(__GNUC__)
#pragma GCC push_options
#if TRIADA_ISA_VARIANT == TRIADA_ISA_AVX512
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw,avx512cd,avx2,fma,popcnt")
#else
#pragma GCC target("avx2,fma,popcnt")
#endif
#else
#error "kernel paths other than portable need GCC or Clang (configure with -DTRIADA_ARCH)"
#endif
#endif
