// Each thread's runtimes: one Runtime per device the thread uses, made at its first use, each
// with its own stream; the runtimes of one device share that device's allocator. A thread's
// runtimes go when the thread exits.
#ifndef INFINIRT_CONTEXT_HPP_
#define INFINIRT_CONTEXT_HPP_

#include "infinirt/device.hpp"
#include "infinirt/export.hpp"

namespace infinirt {

class Runtime;

namespace context {

// Makes `device` the calling thread's current device: its Runtime (made now if the thread has
// none for it) is activated, which also makes it the C API's current device of the thread.
INFINIRT_CXX_API void setDevice(Device device);
// The calling thread's current device. Until the thread's first setDevice, the device that is
// current for the thread in the C API (infinirtGetDevice).
INFINIRT_CXX_API Device getDevice();
// The calling thread's Runtime for its current device, made at the first call if needed. It
// stays valid until the thread exits.
INFINIRT_CXX_API Runtime* getRuntime();

}  // namespace context
}  // namespace infinirt

#endif  // INFINIRT_CONTEXT_HPP_
