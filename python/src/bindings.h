// The pieces of the netdaq Python module (_netdaq), one bind_* function per file.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>  // in every file: the casters must be the same in each
#include <pybind11/stl/filesystem.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "netdaq/session.h"

namespace py = pybind11;

namespace netdaq::python {

// Every Python object that reaches into a session's memory (queues, bursts, NumPy views,
// frame pipelines) holds the session, so its buffers outlive the last view of them.
using SessionPtr = std::shared_ptr<Session>;

// Raised as netdaq.ReleasedError: a burst, packet or frame used after it was released.
struct Released : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The interface's rx.reorder entry `index` (Error not_found naming what exists otherwise):
// Config.reorder() and gpu.FramePipeline's default both read it.
const ReorderConfig& reorder_entry(const Config& c, const std::string& iface, size_t index);

// A Python TxQueue of a session's queue (its class is private to bind_tx.cpp).
py::object make_tx_queue(SessionPtr s, TxQueue& q);

void bind_errors(py::module_& m);
void bind_config(py::module_& m);
void bind_rx(py::module_& m);
void bind_tx(py::module_& m);
void bind_session(py::module_& m);
void bind_gpu(py::module_& m);
void bind_fleet(py::module_& m);  // only where the library has the fleet (NETDAQ_HAVE_FLEET)

// A 1-D or 2-D NumPy view of memory that `keep` keeps valid; read-only unless writable.
template <class T>
py::array view_of(const std::shared_ptr<T>& keep, const py::dtype& dtype, std::vector<py::ssize_t> shape,
                  std::vector<py::ssize_t> strides, const void* data, bool writable = false) {
  auto* owner = new std::shared_ptr<T>(keep);
  py::capsule base(owner, [](void* p) { delete static_cast<std::shared_ptr<T>*>(p); });
  py::array a(dtype, std::move(shape), std::move(strides), data, base);
  if (!writable) py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

}  // namespace netdaq::python
