#pragma once
// Which kernel path a translation unit compiles, and the namespace its kernel code lives in.
//
// The default (portable) build compiles every kernel source once per path: CMake wraps the
// source in a file that defines TRIADA_ISA_VARIANT (0 portable, 1 avx2, 2 avx512) and
// includes it. The code between kernels/isa_begin.hpp and kernels/isa_end.hpp then gets
// the path's instruction set by a target pragma, and every name it declares lives in an
// inline namespace of the path (isa_portable, isa_avx2, isa_avx512): the three copies of an
// inline function or template are three symbols, never merged by the linker. What that
// code includes (the standard library, core/...) stays compiled for the baseline, so any
// copy of it the linker keeps runs on every CPU.
//
// Without TRIADA_ISA_VARIANT (a -DTRIADA_ARCH build, or another program including these
// headers) the path is the one the compiler flags enable, and no pragma is added.
#define TRIADA_ISA_PORTABLE 0
#define TRIADA_ISA_AVX2 1
#define TRIADA_ISA_AVX512 2

#if defined(TRIADA_ISA_VARIANT)
#define TRIADA_ISA_BY_PRAGMA 1
#elif defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512DQ__) && \
    defined(__AVX512BW__) && defined(__AVX2__) && defined(__FMA__)
#define TRIADA_ISA_VARIANT TRIADA_ISA_AVX512
#elif defined(__AVX2__) && defined(__FMA__)
#define TRIADA_ISA_VARIANT TRIADA_ISA_AVX2
#else
#define TRIADA_ISA_VARIANT TRIADA_ISA_PORTABLE
#endif

#if TRIADA_ISA_VARIANT == TRIADA_ISA_AVX512
#define TRIADA_ISA_NS isa_avx512
#define TRIADA_ISA_NAME "avx512"
#elif TRIADA_ISA_VARIANT == TRIADA_ISA_AVX2
#define TRIADA_ISA_NS isa_avx2
#define TRIADA_ISA_NAME "avx2"
#elif TRIADA_ISA_VARIANT == TRIADA_ISA_PORTABLE
#define TRIADA_ISA_NS isa_portable
#define TRIADA_ISA_NAME "portable"
#else
#error "TRIADA_ISA_VARIANT: 0 (portable), 1 (avx2) or 2 (avx512)"
#endif
