// netdaq.Error (with .code), netdaq.ConfigError (with .issues: file, line, key, what is allowed)
// and netdaq.ReleasedError, translated from the C++ exceptions.

#include "bindings.h"

namespace netdaq::python {
namespace {

// Created once per process and never freed: the translator may run until the interpreter exits.
PyObject* error_type = nullptr;
PyObject* config_error_type = nullptr;
PyObject* released_type = nullptr;

const char* code_name(Errc c) {
  switch (c) {
    case Errc::invalid_config: return "invalid_config";
    case Errc::not_found: return "not_found";
    case Errc::unsupported: return "unsupported";
    case Errc::resource: return "resource";
    case Errc::system: return "system";
    case Errc::state: return "state";
  }
  return "unknown";
}

void raise(PyObject* type, const char* what, const char* code, py::object issues = py::none()) {
  py::object e = py::reinterpret_borrow<py::object>(type)(what);
  e.attr("code") = code;
  if (!issues.is_none()) e.attr("issues") = issues;
  PyErr_SetObject(type, e.ptr());
}

}  // namespace

void bind_errors(py::module_& m) {
  error_type = PyErr_NewExceptionWithDoc("netdaq.Error", "A netdaq call failed; .code says how "
                                         "(invalid_config, not_found, unsupported, resource, system, state).",
                                         PyExc_RuntimeError, nullptr);
  config_error_type = PyErr_NewExceptionWithDoc("netdaq.ConfigError", "A configuration was refused; "
                                                ".issues lists every ConfigIssue (file, line, key, value, message).",
                                                error_type, nullptr);
  released_type = PyErr_NewExceptionWithDoc("netdaq.ReleasedError", "A burst, packet or frame was used after "
                                            "it was released.", error_type, nullptr);
  m.attr("Error") = py::handle(error_type);
  m.attr("ConfigError") = py::handle(config_error_type);
  m.attr("ReleasedError") = py::handle(released_type);

  py::class_<SourceLocation>(m, "SourceLocation")
      .def_readonly("file", &SourceLocation::file)
      .def_readonly("line", &SourceLocation::line)
      .def_readonly("column", &SourceLocation::column);
  py::class_<ConfigIssue>(m, "ConfigIssue", "One problem of a configuration: where, which key, what is allowed.")
      .def_property_readonly("file", [](const ConfigIssue& i) { return i.where.file; })
      .def_property_readonly("line", [](const ConfigIssue& i) { return i.where.line; })
      .def_property_readonly("column", [](const ConfigIssue& i) { return i.where.column; })
      .def_readonly("key", &ConfigIssue::key)
      .def_readonly("value", &ConfigIssue::value)
      .def_readonly("message", &ConfigIssue::message)
      .def("__str__", &ConfigIssue::to_string)
      .def("__repr__", [](const ConfigIssue& i) { return "<ConfigIssue " + i.to_string() + ">"; });

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      raise(config_error_type, e.what(), code_name(e.code()), py::cast(e.issues()));
    } catch (const Error& e) {
      raise(error_type, e.what(), code_name(e.code()));
    } catch (const Released& e) {
      raise(released_type, e.what(), "state");
    }
  });
}

}  // namespace netdaq::python
