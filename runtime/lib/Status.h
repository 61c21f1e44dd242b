//===- Status.h - A status code and its message -----------------*- C++ -*-===//

#ifndef DDTC_RUNTIME_STATUS_H
#define DDTC_RUNTIME_STATUS_H

#include "ddtc/ddtc.h"

#include <string>

namespace ddtc::rt {

/// What an internal function returns: DDTC_SUCCESS, or an error and the
/// message that ddtc_last_error will give.
struct Status {
  ddtc_status code = DDTC_SUCCESS;
  std::string message;

  bool ok() const { return code == DDTC_SUCCESS; }
  static Status success() { return {}; }
  static Status error(ddtc_status code, std::string message) {
    return {code, std::move(message)};
  }
};

} // namespace ddtc::rt

#endif // DDTC_RUNTIME_STATUS_H
