#include "host/h5.hpp"

#include "host/child.hpp"
#include "host/provenance.hpp"

#include <hdf5_hl.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace cosmic::h5 {

void quiet() {
  // Before any other HDF5 call where it can (main() calls this first): at exit HDF5 would close
  // the files still open, and a file whose close already failed (a full disk) crashed it there.
  // Every file is closed by its Handle before exit, or cannot be closed at all.
  static const bool once = [] { return H5dont_atexit() >= 0; }();
  // Per thread: the library is built thread-safe, and each thread has its own error stack.
  thread_local const bool done = [] { return H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0; }();
  (void)once;
  (void)done;
}

namespace {

bool is_hdf5(const std::string& path) {
  quiet();
#if H5_VERSION_GE(1, 12, 0)
  return H5Fis_accessible(path.c_str(), H5P_DEFAULT) > 0;
#else
  return H5Fis_hdf5(path.c_str()) > 0;
#endif
}

// The POSIX descriptor HDF5 holds `file` open with, or -1 (a driver without one).
int posix_fd(hid_t file) {
  void* handle = nullptr;
  return H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || handle == nullptr ? -1 : *static_cast<int*>(handle);
}

// cosmic's own writer lock: flock on HDF5's file descriptor, exclusive, held until the file is
// closed (HDF5 takes its own on the same descriptor unless HDF5_USE_FILE_LOCKING=FALSE turns its
// locks off; this one stays). False when another process holds it.
bool lock_writer(hid_t file) {
  const int fd = posix_fd(file);
  return fd < 0 || flock(fd, LOCK_EX | LOCK_NB) == 0;
}

const char* const kBusy = ": another cosmic run is writing it (choose another -o, or wait for it)";

// True when `path` names the file HDF5 holds open as `file` (not one made since under its name).
bool same_file(hid_t file, const std::string& path) {
  const int fd = posix_fd(file);
  struct stat held {}, named {};
  return fd < 0 || (fstat(fd, &held) == 0 && ::stat(path.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
                    held.st_ino == named.st_ino);
}

// Removes a file a killed run left (a symbolic link itself, not its target): false when a run
// holds it. The lock is taken on the file first, and the name unlinked only while it still names
// that file, so that a run's new file made meanwhile under the name is never removed.
bool remove_stale(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ELOOP) ::unlink(path.c_str());  // a symbolic link
    return true;
  }
  bool held = flock(fd, LOCK_EX | LOCK_NB) != 0;
  struct stat opened {}, named {};
  if (!held && fstat(fd, &opened) == 0 && ::stat(path.c_str(), &named) == 0 && opened.st_dev == named.st_dev &&
      opened.st_ino == named.st_ino)
    ::unlink(path.c_str());
  ::close(fd);
  return !held;
}

// True when a process holds the writer lock on `path`: a cosmic run is writing it.
bool being_written(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) return false;
  const bool busy = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return busy;
}

// Where a version 0 or 1 superblock at the start of `path` (8-byte addresses, base address 0)
// records the end of allocation: its offset in the file and value; {0, 0} for any other file.
std::pair<uint64_t, uint64_t> recorded_end(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char head[64] = {};
  if (!in.read(reinterpret_cast<char*>(head), sizeof head)) return {0, 0};
  static const unsigned char signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  const int version = head[8];
  if (std::memcmp(head, signature, 8) != 0 || version > 1 || head[13] != 8) return {0, 0};
  const auto address = [&](size_t at) {  // little-endian on disk
    uint64_t v = 0;
    for (int k = 7; k >= 0; --k) v = (v << 8) | head[at + size_t(k)];
    return v;
  };
  const size_t base_at = 24 + (version == 1 ? 4 : 0);  // after the B-tree K values and flags
  if (address(base_at) != 0) return {0, 0};
  return {base_at + 16, address(base_at + 16)};  // after the base and free-space addresses
}

bool write_address(int fd, uint64_t at, uint64_t value) {
  unsigned char bytes[8];
  for (int k = 0; k < 8; ++k) bytes[k] = static_cast<unsigned char>(value >> (8 * k));
  return ::pwrite(fd, bytes, 8, off_t(at)) == 8 && ::fsync(fd) == 0;
}

// HDF5 opens `path` for reading, without its own file lock (the caller holds cosmic's).
bool opens_unlocked(const std::string& path) {
  const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  const hid_t id = fapl >= 0 && H5Pset_file_locking(fapl, false, true) >= 0 ? H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl) : -1;
  if (fapl >= 0) H5Pclose(fapl);
  if (id < 0) return false;
  H5Fclose(id);
  return true;
}

// True where the superblock records less than the file holds (see repair_end_of_allocation).
bool short_end(const std::string& path) {
  const auto [at, end] = recorded_end(path);
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  return at > 0 && !ec && end < size;
}

// What the system said of the last failed write, where it explains why HDF5 failed (HDF5's
// messages do not): a full disk or quota, a file over the size limit, an I/O error.
std::string system_reason() {
  const int e = errno;
  return e == ENOSPC || e == EDQUOT || e == EFBIG || e == EIO || e == EROFS ? std::string(": ") + std::strerror(e) : "";
}

hid_t check(hid_t id, const std::string& what) {
  if (id < 0) throw Error("HDF5: " + what + " failed" + system_reason());
  return id;
}

// As check(), for reading: the error names the file that `obj` (a file, group or dataset) is
// in, so that a damaged or foreign result file is named by whoever reads it.
[[noreturn]] void fail_in(hid_t obj, const std::string& what) {
  const std::string reason = system_reason();  // before other calls reset errno
  const ssize_t n = H5Fget_name(obj, nullptr, 0);
  std::string file(n > 0 ? size_t(n) + 1 : 0, '\0');
  if (n > 0) H5Fget_name(obj, file.data(), file.size());
  throw Error((n > 0 ? std::string(file.c_str()) + ": " : std::string()) + "HDF5: " + what + " failed" + reason);
}
hid_t check_in(hid_t obj, hid_t id, const std::string& what) {
  if (id < 0) fail_in(obj, what);
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

// The attribute to write: the existing one when its type and shape match (written over in place:
// the object header keeps its layout), else a new one.
Handle new_attr(hid_t obj, const std::string& name, hid_t type, hid_t space) {
  if (H5Aexists(obj, name.c_str()) > 0) {
    Handle a(check_in(obj, H5Aopen(obj, name.c_str(), H5P_DEFAULT), "open attribute " + name), H5Aclose, "");
    Handle t(H5Aget_type(a.id()), H5Tclose, "H5Aget_type");
    Handle s(H5Aget_space(a.id()), H5Sclose, "H5Aget_space");
    if (H5Tequal(t.id(), type) > 0 && H5Sextent_equal(s.id(), space) > 0) return a;
    a.reset();
    H5Adelete(obj, name.c_str());
  }
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
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(path + ": no such file");
  if (!std::filesystem::is_regular_file(path, ec)) throw Error(path + ": not a file");
  // Checked first: HDF5 would open an empty file for writing and write a superblock into it.
  if (!is_hdf5(path)) throw Error(path + ": not an HDF5 file");
  // (also one starting to write it as path.partial: NewFile)
  if (write && (being_written(path) || being_written(path + ".partial"))) throw Error(path + kBusy);
  const hid_t id = H5Fopen(path.c_str(), write ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) {  // an HDF5 file all the same: being written, locked by another program, not writable, or damaged
    if (!write && being_written(path))
      throw Error(path + ": a cosmic run is writing it, and HDF5 locks it meanwhile (to read it all the same, set "
                         "HDF5_USE_FILE_LOCKING=FALSE)");
    if (short_end(path))
      throw Error(path + ": HDF5 cannot open it: its superblock records less of the file than it holds, as a run killed "
                         "while HDF5 wrote leaves it; --resume tries to repair that (h5clear --increment too)");
    throw Error(path + ": HDF5 cannot open it: it is damaged or cut short, another program has it open (HDF5 locks a file that a cosmic run is " +
                (write ? std::string("writing, and one that any reader has open") : "writing; to read it meanwhile, set HDF5_USE_FILE_LOCKING=FALSE") +
                "), or it is not " + (write ? "writable" : "readable"));
  }
  Handle f(id, H5Fclose, "open " + path);
  if (write && !lock_writer(f.id())) throw Error(path + kBusy);
  // HDF5 writes the superblock, which records the end of the file's allocated space, last in a
  // flush: a writer killed inside one can leave chunks that lie past that end. Before writing,
  // the end is moved to the file's physical end, so that HDF5 does not hand that space out again
  // (it would fail to write there: "addr overflow").
  if (write) check(H5Fincrement_filesize(f.id(), 0), "H5Fincrement_filesize " + path);
  return f;
}

bool end_short_of_file(const std::string& path) { return is_hdf5(path) && short_end(path) && !opens_unlocked(path); }

bool repair_end_of_allocation(const std::string& path) {
  if (!is_hdf5(path) || !short_end(path)) return false;
  // cosmic's writer lock, held throughout: no run writes the file meanwhile, nor starts to.
  struct Descriptor {
    int fd;
    ~Descriptor() { if (fd >= 0) ::close(fd); }
  } file{::open(path.c_str(), O_RDWR | O_NOFOLLOW)};
  const int fd = file.fd;
  if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0 || opens_unlocked(path)) return false;
  const auto [at, end] = recorded_end(path);
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || !write_address(fd, at, size)) return false;
  if (opens_unlocked(path)) return true;
  write_address(fd, at, end);  // not that: as it was
  return false;
}

namespace {
// What of attribute or dataset `id` (of type `type`) HDF5 keeps in the global heap, read and
// freed: variable-length strings and sequences (DIMENSION_LIST: a column's dimension scales, as
// object references). Read as the native form of the file's type (a string keeps its character
// set); fixed-size data uses no heap and is not read.
void read_heap_data(hid_t id, hid_t type, bool attribute) {
  if (H5Tis_variable_str(type) <= 0 && H5Tget_class(type) != H5T_VLEN) return;
  Handle mem(check(H5Tget_native_type(type, H5T_DIR_DEFAULT), "native type"), H5Tclose, "");
  Handle space(check(attribute ? H5Aget_space(id) : H5Dget_space(id), "get space"), H5Sclose, "");
  const size_t n = size_t(check(hid_t(H5Sget_simple_extent_npoints(space.id())), "count elements"));
  if (n == 0) return;
  std::vector<unsigned char> buf(n * H5Tget_size(mem.id()));  // char* or hvl_t records
  check(attribute ? H5Aread(id, mem.id(), buf.data()) : H5Dread(id, mem.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()),
        "read variable-length data");
#if H5_VERSION_GE(1, 12, 0)
  check(H5Treclaim(mem.id(), space.id(), H5P_DEFAULT, buf.data()), "free variable-length data");
#else
  check(H5Dvlen_reclaim(mem.id(), space.id(), H5P_DEFAULT, buf.data()), "free variable-length data");
#endif
}

// Every variable-length attribute of `obj` and of the groups and datasets below it, and every
// such dataset, read (soft links are not followed: they point inside the file).
void read_all_heap_data(hid_t obj) {
  std::vector<std::string> names;
  hsize_t at = 0;
  const auto collect = [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
    static_cast<std::vector<std::string>*>(out)->push_back(name);
    return 0;
  };
  check(H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_NATIVE, &at, collect, &names), "list attributes");
  for (const std::string& name : names) {
    Handle a(check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), "open attribute " + name), H5Aclose, "");
    Handle t(check(H5Aget_type(a.id()), "attribute type " + name), H5Tclose, "");
    read_heap_data(a.id(), t.id(), true);
  }
  if (H5Iget_type(obj) != H5I_GROUP && H5Iget_type(obj) != H5I_FILE) return;  // (the root is the file's id)
  for (const std::string& name : member_names(obj)) {
    if (!soft_link_target(obj, name).empty()) continue;
    Handle o(check(H5Oopen(obj, name.c_str(), H5P_DEFAULT), "open " + name), H5Oclose, "");
    read_all_heap_data(o.id());
    if (H5Iget_type(o.id()) != H5I_DATASET) continue;
    Handle t(check(H5Dget_type(o.id()), "dataset type " + name), H5Tclose, "");
    read_heap_data(o.id(), t.id(), false);
  }
}
}  // namespace

void check_readable(const std::string& path) {
  if (!is_hdf5(path)) return;
  const int status = run_in_child(
      [&] {
        quiet();
        const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        if (id < 0) return 0;  // locked, or no HDF5 file: open_file says which
        try {
          Handle f(id, H5Fclose, "");
          read_all_heap_data(f.id());
          return 0;
        } catch (const std::exception&) {  // HDF5 refused a read, or memory ran out
          return 3;
        }
      },
      ChildLimits{size_t(1) << 30, 60});
  if (status == 0) return;
  const std::string why =
      status == -SIGALRM ? "HDF5 took over 60 s reading its variable-length data (strings, dimension lists)"
      : status < 0       ? std::string("HDF5 crashed reading its variable-length data (") + strsignal(-status) + ")"
                         : "HDF5 could not read its variable-length data (their records are invalid, or claim over 1 GiB)";
  throw Error(path + ": the file is damaged: " + why);
}

std::string result_kind(hid_t file) { return has_attr(file, "kind") ? attr_string(file, "kind") : "sweep"; }

std::string unfinished_run(hid_t file) {
  if (H5Aexists(file, "complete") <= 0 || attr_int(file, "complete") != 0 || H5Aexists(file, "merged_from") > 0) return "";
  if (result_kind(file) != "search") return "sweep";
  // A search its --target or --stall stopped ended as asked (--resume without the rule would go on).
  const std::string stopped = H5Aexists(file, "stopped") > 0 ? attr_string(file, "stopped") : "";
  return stopped == "target" || stopped == "stall" ? "" : "search";
}

bool is_being_written(const std::string& path) { return being_written(path) || being_written(path + ".partial"); }

bool is_unfinished_run(const std::string& path) {
  if (!is_hdf5(path) || is_being_written(path)) return false;  // a run's, not left
  try {
    check_readable(path);
  } catch (const Error&) {
    return false;
  }
  quiet();
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) return false;
  Handle f(id, H5Fclose, "");  // closed also where reading it throws
  return H5Aexists(id, "tool_version") > 0 && !unfinished_run(id).empty();
}

NewFile::NewFile(const std::string& out, const std::string& kind) : out_(out), partial_(out + ".partial") {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (out.empty()) throw Error("the output file name is empty");
  if (fs::is_directory(out, ec)) throw Error(out + ": is a directory, expected a file name");
  if (fs::exists(out, ec) && !fs::is_regular_file(out, ec)) throw Error(out + ": exists and is not a regular file");
  const fs::path dir = fs::path(out).parent_path();
  if (!dir.empty() && !fs::is_directory(dir, ec)) throw Error(out + ": folder " + dir.string() + " does not exist");
  // Only a result file of cosmic's is replaced (not a PSA or configuration file given as -o by
  // mistake, nor another program's HDF5 file), and not while another run writes it or starts
  // writing it (as OUT.partial): both runs would report success, the file holding one's results.
  if (being_written(out) || being_written(partial_)) throw Error(out + kBusy);
  if (fs::exists(out, ec) && fs::file_size(out, ec) > 0) {
    const std::string keep = "; cosmic replaces only its own result files (choose another -o, or remove it)";
    if (::access(out.c_str(), R_OK) != 0) throw Error(out + ": exists and cannot be read (permissions?)" + keep);
    if (!is_hdf5(out)) throw Error(being_written(out) ? out + kBusy : out + ": exists and is not an HDF5 file" + keep);
    try {
      check_readable(out);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + "; choose another -o, or remove it");
    }
    const hid_t id = H5Fopen(out.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (id < 0)  // a run that published it since the check above holds it locked
      throw Error(being_written(out) ? out + kBusy : out + ": HDF5 cannot open it (damaged?)" + keep);
    Handle f(id, H5Fclose, "");  // closed also where reading it throws
    const bool ours = H5Aexists(id, "tool_version") > 0;
    const std::string unfinished = ours ? unfinished_run(id) : "", held = ours ? result_kind(id) : "";
    f.reset();
    if (!ours) throw Error(out + ": an HDF5 file cosmic did not write" + keep);
    if (!unfinished.empty())  // work --resume continues: replacing it would lose it
      throw Error(out + ": holds an unfinished " + unfinished + " (cosmic " + unfinished + " --resume -o " + out +
                  " continues it); cosmic does not replace it (choose another -o, or remove it to start over)");
    if (held != kind)
      throw Error(out + ": holds the results of a " + held + ", which a " + kind +
                  " does not replace (choose another -o, or remove it)");
  }
  if (::access(dir.empty() ? "." : dir.c_str(), W_OK) != 0) throw Error(out + ": its folder is not writable");
  // OUT.partial is made exclusively (O_EXCL: it never truncates another run's, never writes
  // through a symbolic link); one that a killed run left is removed first.
  const auto partial_present = [&] { return fs::exists(fs::symlink_status(partial_, ec)); };  // a link too
  if (partial_present()) {
    if (!remove_stale(partial_)) throw Error(out + kBusy);
    if (partial_present()) throw Error(partial_ + ": left by an earlier run and cannot be removed (remove it)");
  }
  quiet();
  errno = 0;
  const hid_t id = H5Fcreate(partial_.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  const int create_errno = errno;
  // A full disk or quota: HDF5 made the file (exclusively: ours) and could not write its first
  // bytes. Removed, and said so, where the check below would blame another run.
  if (id < 0 && (create_errno == ENOSPC || create_errno == EDQUOT)) {
    std::remove(partial_.c_str());
    throw Error("HDF5: create " + partial_ + " failed: " + std::strerror(create_errno));
  }
  // Another run made it since (it may have published it as OUT already): it is writing OUT. HDF5
  // may also find that run's file and fail on its lock (EAGAIN), which that run has renamed since.
  if (id < 0 && (create_errno == EEXIST || create_errno == EAGAIN || create_errno == EWOULDBLOCK || fs::exists(partial_, ec)))
    throw Error(out + kBusy);
  if (id < 0)
    throw Error("HDF5: create " + partial_ + " failed" + (create_errno ? std::string(": ") + std::strerror(create_errno) : ""));
  handle_ = Handle(id, H5Fclose, "create " + partial_);
  // Locked, and still the file named OUT.partial (another run starting may have removed it as
  // stale before the lock and made its own): otherwise that run's, left alone.
  if (!lock_writer(handle_.id()) || !same_file(handle_.id(), partial_)) {
    handle_.reset();
    throw Error(out + kBusy);
  }
}

NewFile::~NewFile() {
  if (published_) return;
  const bool ours = same_file(handle_.id(), partial_);
  handle_.reset();
  if (ours) std::remove(partial_.c_str());
}

Handle NewFile::publish() {
  flush(handle_.id());
  // A --resume of OUT that started meanwhile holds it: renaming over it would let that run write
  // on into a file no longer named OUT and report success.
  if (being_written(out_) || !same_file(handle_.id(), partial_)) throw Error(out_ + kBusy);
  if (std::rename(partial_.c_str(), out_.c_str()) != 0)
    throw Error("cannot rename " + partial_ + " to " + out_ + ": " + std::strerror(errno));
  published_ = true;
  return std::move(handle_);
}

void flush(hid_t file) { check(H5Fflush(file, H5F_SCOPE_GLOBAL), "flush"); }

bool exists(hid_t parent, const std::string& name) {
  const htri_t found = H5Lexists(parent, name.c_str(), H5P_DEFAULT);
  if (found < 0) fail_in(parent, "look up " + name);  // a damaged group: not read as an absent one
  return found > 0;
}

namespace {

// H5DSiterate_scales' visitor: appends the path of each scale to `paths`.
herr_t add_scale_path(hid_t, unsigned, hid_t scale, void* paths) {
  const ssize_t n = H5Iget_name(scale, nullptr, 0);
  if (n <= 0) return -1;
  std::string path(size_t(n) + 1, '\0');
  H5Iget_name(scale, path.data(), path.size());
  path.resize(size_t(n));
  static_cast<std::vector<std::string>*>(paths)->push_back(path);
  return 0;
}

// Detaches dataset `d` from the dimension scales attached to its dimension 0.
void detach_scales(hid_t d, const std::string& name) {
  if (H5DSget_num_scales(d, 0) <= 0) return;
  std::vector<std::string> paths;
  check(H5DSiterate_scales(d, 0, nullptr, add_scale_path, &paths), "list the dimension scales of " + name);
  Handle file(H5Iget_file_id(d), H5Fclose, "H5Iget_file_id");
  for (const std::string& path : paths) {
    Handle scale(H5Dopen2(file.id(), path.c_str(), H5P_DEFAULT), H5Dclose, "open dataset " + path);
    check(H5DSdetach_scale(d, scale.id(), 0), "detach " + name + " from " + path);
  }
}

}  // namespace

void remove(hid_t parent, const std::string& name) {
  if (!exists(parent, name)) return;
  H5L_info_t link{};
  if (H5Lget_info(parent, name.c_str(), &link, H5P_DEFAULT) >= 0 && link.type == H5L_TYPE_HARD) {
    Handle obj(check_in(parent, H5Oopen(parent, name.c_str(), H5P_DEFAULT), "open " + name), H5Oclose, "");
    if (H5Iget_type(obj.id()) == H5I_DATASET) detach_scales(obj.id(), name);
  }
  check(H5Ldelete(parent, name.c_str(), H5P_DEFAULT), "delete " + name);
}

Handle dataset(hid_t parent, const std::string& name) {
  return Handle(check_in(parent, H5Dopen2(parent, name.c_str(), H5P_DEFAULT), "open dataset " + name), H5Dclose, "");
}

void soft_link(hid_t parent, const std::string& name, const std::string& target) {
  if (exists(parent, name)) check(H5Ldelete(parent, name.c_str(), H5P_DEFAULT), "delete link " + name);
  check(H5Lcreate_soft(target.c_str(), parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT), "create link " + name);
}

std::string soft_link_target(hid_t parent, const std::string& name) {
  H5L_info_t info{};
  if (!exists(parent, name) || H5Lget_info(parent, name.c_str(), &info, H5P_DEFAULT) < 0 || info.type != H5L_TYPE_SOFT)
    return "";
  std::string v(info.u.val_size, '\0');
  check(H5Lget_val(parent, name.c_str(), v.data(), v.size(), H5P_DEFAULT), "read link " + name);
  return std::string(v.c_str());
}

Handle group(hid_t parent, const std::string& name, bool create) {
  if (exists(parent, name)) return Handle(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), H5Gclose, "open group " + name);
  if (!create) fail_in(parent, "open group " + name + " (there is none)");
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

void set_attr(hid_t obj, const std::string& name, const std::vector<uint64_t>& values) {
  const hsize_t n = values.size();
  Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose, "H5Screate_simple");
  Handle a = new_attr(obj, name, H5T_NATIVE_UINT64, space.id());
  check(H5Awrite(a.id(), H5T_NATIVE_UINT64, values.data()), "write attribute " + name);
}

bool has_attr(hid_t obj, const std::string& name) { return H5Aexists(obj, name.c_str()) > 0; }

void remove_attr(hid_t obj, const std::string& name) {
  if (has_attr(obj, name)) check(H5Adelete(obj, name.c_str()), "delete attribute " + name);
}

std::string attr_string(hid_t obj, const std::string& name) {
  Handle a(check_in(obj, H5Aopen(obj, name.c_str(), H5P_DEFAULT), "open attribute " + name), H5Aclose, "");
  Handle t = string_type();
  char* p = nullptr;
  check_in(obj, H5Aread(a.id(), t.id(), &p), "read attribute " + name);
  std::string s = p ? p : "";
  H5free_memory(p);
  return s;
}

namespace {

// A numeric attribute read as `type` (HDF5 converts from the stored type).
template <class T>
T attr_number(hid_t obj, const std::string& name, hid_t type) {
  Handle a(check_in(obj, H5Aopen(obj, name.c_str(), H5P_DEFAULT), "open attribute " + name), H5Aclose, "");
  T v = 0;
  check_in(obj, H5Aread(a.id(), type, &v), "read attribute " + name);
  return v;
}

}  // namespace

int64_t attr_int(hid_t obj, const std::string& name) { return attr_number<int64_t>(obj, name, H5T_NATIVE_INT64); }
uint64_t attr_uint(hid_t obj, const std::string& name) { return attr_number<uint64_t>(obj, name, H5T_NATIVE_UINT64); }
double attr_double(hid_t obj, const std::string& name) { return attr_number<double>(obj, name, H5T_NATIVE_DOUBLE); }

std::vector<std::string> attr_strings(hid_t obj, const std::string& name) {
  Handle a(check_in(obj, H5Aopen(obj, name.c_str(), H5P_DEFAULT), "open attribute " + name), H5Aclose, "");
  Handle s(H5Aget_space(a.id()), H5Sclose, "H5Aget_space");
  Handle t = string_type();
  std::vector<char*> p(size_t(H5Sget_simple_extent_npoints(s.id())), nullptr);
  if (!p.empty()) check_in(obj, H5Aread(a.id(), t.id(), p.data()), "read attribute " + name);
  std::vector<std::string> out;
  for (char* c : p) {
    out.emplace_back(c ? c : "");
    H5free_memory(c);
  }
  return out;
}

std::vector<uint64_t> attr_uints(hid_t obj, const std::string& name) {
  Handle a(check_in(obj, H5Aopen(obj, name.c_str(), H5P_DEFAULT), "open attribute " + name), H5Aclose, "");
  Handle s(H5Aget_space(a.id()), H5Sclose, "H5Aget_space");
  std::vector<uint64_t> v(size_t(H5Sget_simple_extent_npoints(s.id())));
  if (!v.empty()) check_in(obj, H5Aread(a.id(), H5T_NATIVE_UINT64, v.data()), "read attribute " + name);
  return v;
}

size_t column_size(hid_t parent, const std::string& name) {
  Handle d(check_in(parent, H5Dopen2(parent, name.c_str(), H5P_DEFAULT), "open dataset " + name), H5Dclose, "");
  Handle s(H5Dget_space(d.id()), H5Sclose, "H5Dget_space");
  hsize_t n = 0;
  H5Sget_simple_extent_dims(s.id(), &n, nullptr);
  return size_t(n);
}

size_t stored_rows(hid_t parent, const std::string& name, size_t rows) {
  Handle d(check_in(parent, H5Dopen2(parent, name.c_str(), H5P_DEFAULT), "open dataset " + name), H5Dclose, "");
  Handle space(H5Dget_space(d.id()), H5Sclose, "H5Dget_space");
  hsize_t extent = 0;
  H5Sget_simple_extent_dims(space.id(), &extent, nullptr);
  rows = std::min(rows, size_t(extent));
  Handle plist(H5Dget_create_plist(d.id()), H5Pclose, "H5Dget_create_plist");
  hsize_t chunk = 0;
  if (H5Pget_layout(plist.id()) != H5D_CHUNKED || H5Pget_chunk(plist.id(), 1, &chunk) != 1 || chunk == 0)
    throw Error("HDF5: " + name + " is not a chunked column");
  Handle file(H5Iget_file_id(d.id()), H5Fclose, "H5Iget_file_id");
  haddr_t eoa = 0;
  check(H5Fget_eoa(file.id(), &eoa), "H5Fget_eoa");
  for (hsize_t r = 0; r < rows; r += chunk) {
    unsigned filter_mask = 0;
    haddr_t addr = HADDR_UNDEF;
    hsize_t bytes = 0;
    hsize_t offset = r;
    if (H5Dget_chunk_info_by_coord(d.id(), &offset, &filter_mask, &addr, &bytes) < 0 || addr == HADDR_UNDEF ||
        addr + bytes > eoa)
      return size_t(r);
  }
  return rows;
}

std::vector<std::string> member_names(hid_t group) {
  H5G_info_t info{};
  check(H5Gget_info(group, &info), "H5Gget_info");
  std::vector<std::string> names;
  for (hsize_t k = 0; k < info.nlinks; ++k) {
    const ssize_t len = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, k, nullptr, 0, H5P_DEFAULT);
    check(len < 0 ? -1 : 0, "H5Lget_name_by_idx");
    std::string name(size_t(len) + 1, '\0');
    const ssize_t got = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, k, name.data(), name.size(), H5P_DEFAULT);
    check(got < 0 ? -1 : 0, "H5Lget_name_by_idx");
    name.resize(size_t(len));
    names.push_back(name);
  }
  return names;
}

namespace {

// Creates the column dataset if it is missing; returns the dataset and its rows.
Handle open_column(hid_t parent, const std::string& name, hid_t type, const ColumnFormat& format, hsize_t& rows) {
  if (!exists(parent, name)) {
    const hsize_t zero = 0, unlimited = H5S_UNLIMITED;
    Handle space(H5Screate_simple(1, &zero, &unlimited), H5Sclose, "H5Screate_simple");
    Handle plist(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "H5Pcreate");
    H5Pset_chunk(plist.id(), 1, &format.chunk_rows);
    if (format.deflate > 0) {
      if (format.shuffle) H5Pset_shuffle(plist.id());
      H5Pset_deflate(plist.id(), unsigned(format.deflate));
    }
    Handle d(H5Dcreate2(parent, name.c_str(), type, space.id(), H5P_DEFAULT, plist.id(), H5P_DEFAULT), H5Dclose,
             "create dataset " + name);
    // A metric's or an objective's values carry their units (counts of the same name, a
    // histogram's, are integers and do not).
    if (const char* units = H5Tequal(type, H5T_NATIVE_DOUBLE) > 0 ? column_units(name) : nullptr)
      set_attr(d.id(), "units", std::string(units));
  }
  Handle d(check_in(parent, H5Dopen2(parent, name.c_str(), H5P_DEFAULT), "open dataset " + name), H5Dclose, "");
  Handle s(H5Dget_space(d.id()), H5Sclose, "H5Dget_space");
  H5Sget_simple_extent_dims(s.id(), &rows, nullptr);
  return d;
}

// Appends c's rows to the open column dataset `d` that holds `old` rows (HDF5 filters them).
void append_rows(hid_t d, hsize_t old, const ColumnRows& c) {
  if (c.rows == 0) return;
  const hsize_t total = old + c.rows, n = c.rows;
  check(H5Dset_extent(d, &total), "extend " + c.name);
  Handle fs(H5Dget_space(d), H5Sclose, "H5Dget_space");
  H5Sselect_hyperslab(fs.id(), H5S_SELECT_SET, &old, nullptr, &n, nullptr);
  Handle ms(H5Screate_simple(1, &n, nullptr), H5Sclose, "H5Screate_simple");
  check(H5Dwrite(d, c.type, ms.id(), fs.id(), H5P_DEFAULT, c.data), "write " + c.name);
}

// One chunk through HDF5's filter pipeline, done here: the byte shuffle (byte b of every value
// together, HDF5's H5Z_FILTER_SHUFFLE), then zlib's compress2 at the column's level
// (H5Z_FILTER_DEFLATE).
std::vector<unsigned char> filter_chunk(const unsigned char* in, size_t values, size_t value_bytes, const ColumnFormat& f) {
  const size_t bytes = values * value_bytes;
  std::vector<unsigned char> shuffled;
  if (f.shuffle && value_bytes > 1) {
    shuffled.resize(bytes);
    for (size_t i = 0; i < values; ++i)
      for (size_t b = 0; b < value_bytes; ++b) shuffled[b * values + i] = in[i * value_bytes + b];
    in = shuffled.data();
  }
  uLongf out_bytes = compressBound(uLong(bytes));
  std::vector<unsigned char> out(out_bytes);
  if (compress2(out.data(), &out_bytes, in, uLong(bytes), f.deflate) != Z_OK) throw Error("zlib: compress2 failed");
  out.resize(out_bytes);
  return out;
}

}  // namespace

template <class T>
void append_column(hid_t parent, const std::string& name, const std::vector<T>& data, const ColumnFormat& format) {
  const ColumnRows c = column_rows(name, data, format);
  hsize_t old = 0;
  Handle d = open_column(parent, c.name, c.type, c.format, old);
  append_rows(d.id(), old, c);
}

template <class T>
ColumnRows column_rows(const std::string& name, const std::vector<T>& data, const ColumnFormat& format) {
  return ColumnRows{name, data.data(), data.size(), sizeof(T), native<T>(), format};
}

size_t append_columns(hid_t parent, const std::vector<ColumnRows>& columns) {
  struct Job {
    size_t column;
    hsize_t offset;  // first row of the chunk in the dataset
    std::vector<unsigned char> bytes;
  };
  std::vector<Handle> sets(columns.size());
  std::vector<hsize_t> old(columns.size(), 0);
  std::vector<Job> jobs;
  for (size_t c = 0; c < columns.size(); ++c) {
    const ColumnRows& col = columns[c];
    const hsize_t chunk = col.format.chunk_rows;
    sets[c] = open_column(parent, col.name, col.type, col.format, old[c]);
    if (col.rows == 0 || col.format.deflate <= 0 || old[c] % chunk != 0 || col.rows % chunk != 0) continue;
    for (hsize_t r = 0; r < col.rows; r += chunk) jobs.push_back({c, old[c] + r, {}});
  }
  const int64_t njobs = int64_t(jobs.size());
  bool failed = false;  // an exception may not leave an OpenMP region
#pragma omp parallel for schedule(dynamic, 1) if (njobs > 1)
  for (int64_t k = 0; k < njobs; ++k) {
    Job& j = jobs[size_t(k)];
    const ColumnRows& col = columns[j.column];
    const auto* rows = static_cast<const unsigned char*>(col.data) + (j.offset - old[j.column]) * col.value_bytes;
    try {
      j.bytes = filter_chunk(rows, col.format.chunk_rows, col.value_bytes, col.format);
    } catch (...) {
#pragma omp atomic write
      failed = true;
    }
  }
  if (failed) throw Error("zlib: compressing a chunk failed");
  size_t next = 0;
  for (size_t c = 0; c < columns.size(); ++c) {
    if (next == jobs.size() || jobs[next].column != c) {  // not in whole chunks: HDF5 filters it
      append_rows(sets[c].id(), old[c], columns[c]);
      continue;
    }
    const hsize_t total = old[c] + columns[c].rows;
    check(H5Dset_extent(sets[c].id(), &total), "extend " + columns[c].name);
    for (; next < jobs.size() && jobs[next].column == c; ++next)
      check(H5Dwrite_chunk(sets[c].id(), H5P_DEFAULT, 0, &jobs[next].offset, jobs[next].bytes.size(), jobs[next].bytes.data()),
            "write chunk of " + columns[c].name);
  }
  return jobs.size();
}

template <class T>
void write_column(hid_t parent, const std::string& name, const std::vector<T>& data, const ColumnFormat& format) {
  if (exists(parent, name)) {
    Handle d(check_in(parent, H5Dopen2(parent, name.c_str(), H5P_DEFAULT), "open dataset " + name), H5Dclose, "");
    const hsize_t zero = 0;
    check(H5Dset_extent(d.id(), &zero), "truncate " + name);
  }
  append_column(parent, name, data, format);
}

template <class T>
void overwrite_column(hid_t parent, const std::string& name, const std::vector<T>& data, const ColumnFormat& format) {
  if (format.deflate > 0) throw Error("HDF5: " + name + ": only uncompressed columns are rewritten in place");
  hsize_t old = 0;
  Handle d = open_column(parent, name, native<T>(), format, old);
  Handle plist(H5Dget_create_plist(d.id()), H5Pclose, "H5Dget_create_plist");
  if (H5Pget_nfilters(plist.id()) != 0)
    throw Error("HDF5: " + name + " is compressed: it cannot be rewritten in place");
  const hsize_t n = data.size();
  if (n != old) check(H5Dset_extent(d.id(), &n), "resize " + name);
  if (n == 0) return;
  check(H5Dwrite(d.id(), native<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), "write " + name);
}

void resize_column(hid_t parent, const std::string& name, size_t rows) {
  Handle d(check_in(parent, H5Dopen2(parent, name.c_str(), H5P_DEFAULT), "open dataset " + name), H5Dclose, "");
  const hsize_t n = rows;
  check(H5Dset_extent(d.id(), &n), "resize " + name);
}

template <class T>
std::vector<T> read_column(hid_t parent, const std::string& name) {
  return read_column<T>(parent, name, 0, SIZE_MAX);
}

template <class T>
std::vector<T> read_column(hid_t parent, const std::string& name, size_t first, size_t count) {
  const size_t rows = column_size(parent, name);
  first = std::min(first, rows);
  std::vector<T> out(std::min(count, rows - first));
  if (out.empty()) return out;
  Handle d(check_in(parent, H5Dopen2(parent, name.c_str(), H5P_DEFAULT), "open dataset " + name), H5Dclose, "");
  Handle file_space(H5Dget_space(d.id()), H5Sclose, "H5Dget_space");
  const hsize_t start = first, n = out.size();
  check(H5Sselect_hyperslab(file_space.id(), H5S_SELECT_SET, &start, nullptr, &n, nullptr), "select rows of " + name);
  Handle mem_space(H5Screate_simple(1, &n, nullptr), H5Sclose, "H5Screate_simple");
  check_in(parent, H5Dread(d.id(), native<T>(), mem_space.id(), file_space.id(), H5P_DEFAULT, out.data()), "read " + name);
  return out;
}

#define COSMIC_H5_COLUMN(T)                                                              \
  template void write_column<T>(hid_t, const std::string&, const std::vector<T>&, const ColumnFormat&);  \
  template void overwrite_column<T>(hid_t, const std::string&, const std::vector<T>&, const ColumnFormat&); \
  template void append_column<T>(hid_t, const std::string&, const std::vector<T>&, const ColumnFormat&); \
  template ColumnRows column_rows<T>(const std::string&, const std::vector<T>&, const ColumnFormat&);      \
  template std::vector<T> read_column<T>(hid_t, const std::string&);                   \
  template std::vector<T> read_column<T>(hid_t, const std::string&, size_t, size_t);
COSMIC_H5_COLUMN(int8_t)
COSMIC_H5_COLUMN(int16_t)
COSMIC_H5_COLUMN(int32_t)
COSMIC_H5_COLUMN(int64_t)
COSMIC_H5_COLUMN(uint64_t)
COSMIC_H5_COLUMN(double)
#undef COSMIC_H5_COLUMN

void write_strings(hid_t parent, const std::string& name, const std::vector<std::string>& values) {
  remove(parent, name);
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
  Handle d(check_in(parent, H5Dopen2(parent, name.c_str(), H5P_DEFAULT), "open dataset " + name), H5Dclose, "");
  Handle s(H5Dget_space(d.id()), H5Sclose, "H5Dget_space");
  hsize_t n = 0;
  H5Sget_simple_extent_dims(s.id(), &n, nullptr);
  std::vector<char*> p(n, nullptr);
  Handle t = string_type();
  if (n) check_in(parent, H5Dread(d.id(), t.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, p.data()), "read " + name);
  std::vector<std::string> out;
  for (char* c : p) {
    out.emplace_back(c ? c : "");
    H5free_memory(c);
  }
  return out;
}

void make_scale(hid_t parent, const std::string& name) {
  Handle d = dataset(parent, name);
  if (H5DSis_scale(d.id()) <= 0) check(H5DSset_scale(d.id(), name.c_str()), "make " + name + " a dimension scale");
}

void set_dimension(hid_t group, const std::string& scale) {
  make_scale(group, scale);
  Handle s = dataset(group, scale);
  for (const std::string& name : member_names(group)) {
    if (name == scale) continue;
    Handle obj(check_in(group, H5Oopen(group, name.c_str(), H5P_DEFAULT), "open " + name), H5Oclose, "");
    if (H5Iget_type(obj.id()) != H5I_DATASET || H5DSis_scale(obj.id()) > 0) continue;  // a group; a coordinate of its own
    // A column is given one dimension only, so one that has any has this one. (Counting them
    // reads the column's own list; H5DSis_attached would open every dataset the scale lists,
    // for every column, after every batch.)
    if (H5DSget_num_scales(obj.id(), 0) > 0) continue;
    check(H5DSattach_scale(obj.id(), s.id(), 0), "attach " + scale + " to " + name);
  }
}

}  // namespace cosmic::h5
