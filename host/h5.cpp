#include "host/h5.hpp"

namespace cosmic::h5 {

namespace {

// Silences HDF5's error stack printing once; errors are reported as exceptions instead.
void quiet() {
  static const bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

hid_t check(hid_t id, const std::string& what) {
  if (id < 0) throw Error("HDF5: " + what + " failed");
  return id;
}

template <class T>
hid_t native();
template <> hid_t native<int8_t>() { return H5T_NATIVE_INT8; }
template <> hid_t native<int16_t>() { return H5T_NATIVE_INT16; }
template <> hid_t native<int32_t>() { return H5T_NATIVE_INT32; }
template <> hid_t native<int64_t>() { return H5T_NATIVE_INT64; }
template <> hid_t native<uint64_t>() { return H5T_NATIVE_UINT64; }
template <> hid_t native<double>() { return H5T_NATIVE_DOUBLE; }

Handle string_type() {
  Handle t(H5Tcopy(H5T_C_S1), H5Tclose, "H5Tcopy");
  H5Tset_size(t.id(), H5T_VARIABLE);
  H5Tset_cset(t.id(), H5T_CSET_UTF8);
  return t;
}

Handle new_attr(hid_t obj, const std::string& name, hid_t type, hid_t space) {
  if (H5Aexists(obj, name.c_str()) > 0) H5Adelete(obj, name.c_str());
  return Handle(H5Acreate2(obj, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), H5Aclose,
                "create attribute " + name);
}

template <class T>
void scalar_attr(hid_t obj, const std::string& name, T value) {
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
  Handle a = new_attr(obj, name, native<T>(), space.id());
  check(H5Awrite(a.id(), native<T>(), &value), "write attribute " + name);
}

}  // namespace

Handle::Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what) : id_(check(id, what)), close_(close) {}

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
  }
  return *this;
}

void Handle::reset() {
  if (id_ >= 0 && close_) close_(id_);
  id_ = -1;
}

Handle create_file(const std::string& path) {
  quiet();
  return Handle(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose, "create " + path);
}

Handle open_file(const std::string& path, bool write) {
  quiet();
  return Handle(H5Fopen(path.c_str(), write ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, "open " + path);
}

void flush(hid_t file) { check(H5Fflush(file, H5F_SCOPE_GLOBAL), "flush"); }

bool exists(hid_t parent, const std::string& name) { return H5Lexists(parent, name.c_str(), H5P_DEFAULT) > 0; }

Handle group(hid_t parent, const std::string& name, bool create) {
  if (exists(parent, name)) return Handle(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), H5Gclose, "open group " + name);
  if (!create) throw Error("HDF5: no group " + name);
  return Handle(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose,
                "create group " + name);
}

void set_attr(hid_t obj, const std::string& name, const std::string& value) {
  Handle t = string_type();
  Handle space(H5Screate(H5S_SCALAR), H5Sclose, "H5Screate");
  Handle a = new_attr(obj, name, t.id(), space.id());
  const char* p = value.c_str();
  check(H5Awrite(a.id(), t.id(), &p), "write attribute " + name);
}

void set_attr(hid_t obj, const std::string& name, const std::vector<std::string>& values) {
  Handle t = string_type();
  const hsize_t n = values.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose, "H5Screate_simple");
  Handle a = new_attr(obj, name, t.id(), space.id());
  std::vector<const char*> p;
  for (const auto& v : values) p.push_back(v.c_str());
  check(H5Awrite(a.id(), t.id(), p.data()), "write attribute " + name);
}

void set_attr(hid_t obj, const std::string& name, int64_t value) { scalar_attr(obj, name, value); }
void set_attr(hid_t obj, const std::string& name, uint64_t value) { scalar_attr(obj, name, value); }
void set_attr(hid_t obj, const std::string& name, double value) { scalar_attr(obj, name, value); }

bool has_attr(hid_t obj, const std::string& name) { return H5Aexists(obj, name.c_str()) > 0; }

std::string attr_string(hid_t obj, const std::string& name) {
  Handle a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose, "open attribute " + name);
  Handle t = string_type();
  char* p = nullptr;
  check(H5Aread(a.id(), t.id(), &p), "read attribute " + name);
  std::string s = p ? p : "";
  H5free_memory(p);
  return s;
}

int64_t attr_int(hid_t obj, const std::string& name) {
  Handle a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose, "open attribute " + name);
  int64_t v = 0;
  check(H5Aread(a.id(), H5T_NATIVE_INT64, &v), "read attribute " + name);
  return v;
}

double attr_double(hid_t obj, const std::string& name) {
  Handle a(H5Aopen(obj, name.c_str(), H5P_DEFAULT), H5Aclose, "open attribute " + name);
  double v = 0;
  check(H5Aread(a.id(), H5T_NATIVE_DOUBLE, &v), "read attribute " + name);
  return v;
}

size_t column_size(hid_t parent, const std::string& name) {
  Handle d(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, "open dataset " + name);
  Handle s(H5Dget_space(d.id()), H5Sclose, "H5Dget_space");
  hsize_t n = 0;
  H5Sget_simple_extent_dims(s.id(), &n, nullptr);
  return size_t(n);
}

template <class T>
void append_column(hid_t parent, const std::string& name, const std::vector<T>& data, const ColumnFormat& format) {
  if (!exists(parent, name)) {
    const hsize_t zero = 0, unlimited = H5S_UNLIMITED;
    Handle space(H5Screate_simple(1, &zero, &unlimited), H5Sclose, "H5Screate_simple");
    Handle plist(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "H5Pcreate");
    H5Pset_chunk(plist.id(), 1, &format.chunk_rows);
    if (format.deflate > 0) {
      if (format.shuffle) H5Pset_shuffle(plist.id());
      H5Pset_deflate(plist.id(), unsigned(format.deflate));
    }
    Handle d(H5Dcreate2(parent, name.c_str(), native<T>(), space.id(), H5P_DEFAULT, plist.id(), H5P_DEFAULT),
             H5Dclose, "create dataset " + name);
  }
  if (data.empty()) return;
  Handle d(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, "open dataset " + name);
  hsize_t old = 0;
  {
    Handle s(H5Dget_space(d.id()), H5Sclose, "H5Dget_space");
    H5Sget_simple_extent_dims(s.id(), &old, nullptr);
  }
  const hsize_t total = old + data.size(), n = data.size();
  check(H5Dset_extent(d.id(), &total), "extend " + name);
  Handle fs(H5Dget_space(d.id()), H5Sclose, "H5Dget_space");
  H5Sselect_hyperslab(fs.id(), H5S_SELECT_SET, &old, nullptr, &n, nullptr);
  Handle ms(H5Screate_simple(1, &n, nullptr), H5Sclose, "H5Screate_simple");
  check(H5Dwrite(d.id(), native<T>(), ms.id(), fs.id(), H5P_DEFAULT, data.data()), "write " + name);
}

template <class T>
void write_column(hid_t parent, const std::string& name, const std::vector<T>& data, const ColumnFormat& format) {
  if (exists(parent, name)) {
    Handle d(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, "open dataset " + name);
    const hsize_t zero = 0;
    check(H5Dset_extent(d.id(), &zero), "truncate " + name);
  }
  append_column(parent, name, data, format);
}

template <class T>
std::vector<T> read_column(hid_t parent, const std::string& name) {
  std::vector<T> out(column_size(parent, name));
  if (out.empty()) return out;
  Handle d(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, "open dataset " + name);
  check(H5Dread(d.id(), native<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), "read " + name);
  return out;
}

#define COSMIC_H5_COLUMN(T)                                                              \
  template void write_column<T>(hid_t, const std::string&, const std::vector<T>&, const ColumnFormat&);  \
  template void append_column<T>(hid_t, const std::string&, const std::vector<T>&, const ColumnFormat&); \
  template std::vector<T> read_column<T>(hid_t, const std::string&);
COSMIC_H5_COLUMN(int8_t)
COSMIC_H5_COLUMN(int16_t)
COSMIC_H5_COLUMN(int32_t)
COSMIC_H5_COLUMN(int64_t)
COSMIC_H5_COLUMN(uint64_t)
COSMIC_H5_COLUMN(double)
#undef COSMIC_H5_COLUMN

void write_strings(hid_t parent, const std::string& name, const std::vector<std::string>& values) {
  if (exists(parent, name)) H5Ldelete(parent, name.c_str(), H5P_DEFAULT);
  Handle t = string_type();
  const hsize_t n = values.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose, "H5Screate_simple");
  Handle d(H5Dcreate2(parent, name.c_str(), t.id(), space.id(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose,
           "create dataset " + name);
  std::vector<const char*> p;
  for (const auto& v : values) p.push_back(v.c_str());
  if (n) check(H5Dwrite(d.id(), t.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, p.data()), "write " + name);
}

std::vector<std::string> read_strings(hid_t parent, const std::string& name) {
  Handle d(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, "open dataset " + name);
  Handle s(H5Dget_space(d.id()), H5Sclose, "H5Dget_space");
  hsize_t n = 0;
  H5Sget_simple_extent_dims(s.id(), &n, nullptr);
  std::vector<char*> p(n, nullptr);
  Handle t = string_type();
  if (n) check(H5Dread(d.id(), t.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, p.data()), "read " + name);
  std::vector<std::string> out;
  for (char* c : p) {
    out.emplace_back(c ? c : "");
    H5free_memory(c);
  }
  return out;
}

}  // namespace cosmic::h5
