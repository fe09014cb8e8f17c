// Window registration entry points: ncclCommWindowRegister/Deregister and ncclWinGetUserPtr.
#include <string>

#include "coll_submit.h"
#include "export.h"
#include "last_error.h"
#include "nccl_api_232.h"
#include "window.h"

using ncclsim::SetLastError;

NCCLSIM_API(ncclResult_t, ncclCommWindowRegister, ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
            int winFlags) {
  const char* api = "ncclCommWindowRegister";
  if (ncclResult_t r = ncclsim::CheckUsable(comm, api); r != ncclSuccess) return r;
  if (win == nullptr || (buff == nullptr && size > 0)) {
    SetLastError("ncclCommWindowRegister: NULL win or buff argument");
    return ncclInvalidArgument;
  }
  *win = nullptr;
  std::string error;
  if (!ncclsim::RegisterWindow(comm, buff, size, winFlags, win, &error)) {
    SetLastError(std::string(api) + ": " + error);
    return ncclInvalidUsage;
  }
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclCommWindowDeregister, ncclComm_t comm, ncclWindow_t win) {
  if (comm == nullptr || win == nullptr || win->comm != comm) {
    SetLastError("ncclCommWindowDeregister: NULL comm, or win not registered on this communicator");
    return ncclInvalidArgument;
  }
  delete win;
  return ncclSuccess;
}

NCCLSIM_API(ncclResult_t, ncclWinGetUserPtr, ncclComm_t comm, ncclWindow_t win, void** outUserPtr) {
  if (comm == nullptr || win == nullptr || outUserPtr == nullptr || win->comm != comm) {
    SetLastError("ncclWinGetUserPtr: NULL argument, or win not registered on this communicator");
    return ncclInvalidArgument;
  }
  *outUserPtr = win->user_ptr;
  return ncclSuccess;
}
