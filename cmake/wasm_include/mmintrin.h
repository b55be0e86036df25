// Emscripten 3.1.6 ships the SSE headers that map onto WebAssembly SIMD128 but not the
// MMX one. Eigen's SSE path includes <mmintrin.h> without using anything from it, so an
// empty header lets Eigen vectorise in wasm.
#pragma once
