// Symbol visibility of the C++ runtime layer (libinfinirt_runtime.so): everything is hidden
// unless marked, so that the library's ABI is exactly what these headers declare.
#ifndef INFINIRT_EXPORT_HPP_
#define INFINIRT_EXPORT_HPP_

#define INFINIRT_CXX_API __attribute__((visibility("default")))

#endif  // INFINIRT_EXPORT_HPP_
