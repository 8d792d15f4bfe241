// The tests' way to look at an infinirt::Error.
#ifndef INFINIRT_TESTS_CXX_RUNTIME_ERROR_OF_H_
#define INFINIRT_TESTS_CXX_RUNTIME_ERROR_OF_H_

#include "infinirt/error.hpp"

namespace infinirt::testing {

// The code of the infinirt::Error that body throws, or infinirtSuccess when it throws none.
template <class Body>
infinirtError_t ErrorOf(Body body) {
  try {
    body();
  } catch (const Error& error) {
    return error.code();
  }
  return infinirtSuccess;
}

}  // namespace infinirt::testing

#endif  // INFINIRT_TESTS_CXX_RUNTIME_ERROR_OF_H_
