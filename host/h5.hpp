// A small RAII layer over the HDF5 C API (Debian's libhdf5-dev): files, groups, attributes
// and one-dimensional column datasets (chunked, extendible, by default shuffled and deflate-compressed).
// Errors throw h5::Error; HDF5's own error printing is switched off.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cosmic::h5 {

// Silences HDF5's printing of its error stack on the calling thread (errors become exceptions
// here) and keeps HDF5 from closing files at exit. Opening or creating a file calls it; a thread
// that writes a file another opened calls it first.
void quiet();

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t), const std::string& what);
  ~Handle() { reset(); }
  Handle(Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  hid_t id() const { return id_; }
  void reset();

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

Handle create_file(const std::string& path);      // truncates
Handle open_file(const std::string& path, bool write);  // an HDF5 file that exists, or Error saying why not
// A writer killed inside an HDF5 flush can leave metadata past the end of allocation that the
// superblock records (HDF5 writes the superblock last), and HDF5 then refuses to open the file
// ("addr overflow"). Where the file at `path` does not open, no run is writing it, and its
// superblock (version 0 or 1, 8-byte addresses, at the file's start, as cosmic's) records an end
// short of the file's size, the end is moved to the file's size (h5clear --increment does the
// same). The bytes are put back where the file still does not open. It holds cosmic's writer
// lock meanwhile (false where a run holds it). True where it repaired the file.
bool repair_end_of_allocation(const std::string& path);
// True where HDF5 cannot open `path` and its superblock records less of it than it holds.
bool end_short_of_file(const std::string& path);
// Reads every variable-length attribute and dataset (strings; the dimension scales' lists) of the
// file at `path` in a child process, with 1 GiB of memory and 60 s: HDF5 trusts the global heap
// where they live (its checks there are assertions, compiled out of release builds), and a damaged
// one crashed it or made it allocate without end. Throws Error saying the file is damaged where the child crashed,
// ran out of memory or time, or failed to read; returns where it read them all, and where it
// could not open the file (open_file says why). For a file about to be read here, before any
// other thread uses HDF5 (host/child.hpp).
void check_readable(const std::string& path);

// A result file's `kind` attribute: "search", or "sweep" (sweep and merged files; those written
// before 2026-12-02 have none).
std::string result_kind(hid_t file);
// "sweep" or "search" where a result file holds an interrupted run of one (complete 0; a merge,
// made again from its shards, is none, nor a search its --target or --stall stopped), which
// --resume continues; else "".
std::string unfinished_run(hid_t file);
// The file at `path` is such a cosmic result file, and no run is writing it.
bool is_unfinished_run(const std::string& path);
// A cosmic run holds its writer lock on `path` (or on path.partial, which it is starting).
bool is_being_written(const std::string& path);

// A new result file, made as OUT.partial and renamed to OUT by publish() once what makes it a
// valid file is on disk, so that a file named OUT always opens. An error before publish()
// removes OUT.partial. OUT must name a file (not empty, not a directory) in a folder that exists.
// `kind`: what it will hold ("sweep" or "search"); a finished result of the other kind at OUT is
// not replaced (a search given a sweep's file name by mistake would lose the sweep).
class NewFile {
 public:
  NewFile(const std::string& out, const std::string& kind);
  ~NewFile();
  NewFile(const NewFile&) = delete;
  NewFile& operator=(const NewFile&) = delete;
  hid_t id() const { return handle_.id(); }
  Handle publish();  // flushes and renames; the handle stays open and follows the name
 private:
  std::string out_, partial_;
  Handle handle_;
  bool published_ = false;
};
void flush(hid_t file);
Handle group(hid_t parent, const std::string& name, bool create);  // create: if missing
bool exists(hid_t parent, const std::string& name);  // a link of that name (soft links too)
// Unlinks parent/name, if there (its space in the file is not reclaimed). A dataset is first
// detached from the dimension scales it is attached to (each scale lists the datasets attached
// to it, and a reference to a deleted one would not read).
void remove(hid_t parent, const std::string& name);
Handle dataset(hid_t parent, const std::string& name);  // an existing dataset, opened
// Makes `name` a soft link to the path `target`, replacing any link of that name.
void soft_link(hid_t parent, const std::string& name, const std::string& target);
std::string soft_link_target(hid_t parent, const std::string& name);  // "" when not a soft link

// An attribute that exists with the same type and shape is written over in place; otherwise it
// is (re)created.
void set_attr(hid_t obj, const std::string& name, const std::string& value);
void set_attr(hid_t obj, const std::string& name, const std::vector<std::string>& values);
void set_attr(hid_t obj, const std::string& name, int64_t value);
void set_attr(hid_t obj, const std::string& name, uint64_t value);
void set_attr(hid_t obj, const std::string& name, double value);
void set_attr(hid_t obj, const std::string& name, const std::vector<uint64_t>& values);
bool has_attr(hid_t obj, const std::string& name);
void remove_attr(hid_t obj, const std::string& name);  // if there
std::string attr_string(hid_t obj, const std::string& name);
std::vector<std::string> attr_strings(hid_t obj, const std::string& name);  // a list of strings
int64_t attr_int(hid_t obj, const std::string& name);
uint64_t attr_uint(hid_t obj, const std::string& name);  // all 64 bits (attr_int would clamp from 2^63)
double attr_double(hid_t obj, const std::string& name);
std::vector<uint64_t> attr_uints(hid_t obj, const std::string& name);

// How a column is stored, fixed when it is created: chunks of `chunk_rows` rows, compressed with
// deflate at level `deflate` (1-9; 0: not compressed) after HDF5's byte shuffle when `shuffle`.
// The shuffle helps columns of distinct values in index order (sweeps' /all); it hurts columns
// that repeat whole values (an agent re-evaluating the same genomes), where deflate alone finds
// 8-byte matches. Appending to a compressed chunk rewrites it elsewhere in the file, and HDF5 may
// reuse the space it leaves before the next flush: a kill in between can leave the chunk
// unreadable. Uncompressed chunks are rewritten in place.
struct ColumnFormat {
  hsize_t chunk_rows = 16384;
  int deflate = 4;
  bool shuffle = true;
};

// Column datasets of int8, int16, int32, int64, uint64 or double.
template <class T>
void write_column(hid_t parent, const std::string& name, const std::vector<T>& data,
                  const ColumnFormat& format = {});  // create or overwrite
// Rewrites an uncompressed column in place (format.deflate must be 0): creates it if missing,
// sets its length to data.size() and writes the rows over the old ones. Uncompressed chunks keep
// their size and so their address when rewritten, and the column is never truncated to 0 rows
// first (write_column does, which frees its chunks; HDF5 may hand that space to other raw data
// before the next flush). Chunks are freed only when the column shrinks past them.
template <class T>
void overwrite_column(hid_t parent, const std::string& name, const std::vector<T>& data, const ColumnFormat& format);
// Sets a column's length (shrinking drops the rows beyond; whole chunks beyond it are freed).
void resize_column(hid_t parent, const std::string& name, size_t rows);
template <class T>
void append_column(hid_t parent, const std::string& name, const std::vector<T>& data,
                   const ColumnFormat& format = {});  // create or extend
template <class T>
std::vector<T> read_column(hid_t parent, const std::string& name);
template <class T>  // rows first .. first + count - 1 (fewer at the end of the column)
std::vector<T> read_column(hid_t parent, const std::string& name, size_t first, size_t count);

// Several columns appended at once (append_columns): each column's rows are compressed a chunk at
// a time on the OpenMP threads, outside HDF5 (which compresses one chunk at a time under its
// global lock), then written with H5Dwrite_chunk. The file holds what append_column would write:
// the same filters (shuffle, then deflate with zlib's compress2, as HDF5's filters do) on the
// same chunks. A column whose dataset does not end on a chunk boundary, whose rows are not whole
// chunks, or that is not compressed is appended with append_column instead. Returns the number
// of chunks written directly.
struct ColumnRows {
  std::string name;
  const void* data;
  size_t rows;
  size_t value_bytes;
  hid_t type;  // native HDF5 type of a value
  ColumnFormat format;
};
template <class T>
ColumnRows column_rows(const std::string& name, const std::vector<T>& data, const ColumnFormat& format);
size_t append_columns(hid_t parent, const std::vector<ColumnRows>& columns);

// Moves the first n values of a column held in memory out (rows gathered to be appended a whole
// chunk at a time, by searches and by sweeps with --keep all).
template <class T>
std::vector<T> cut_front(std::vector<T>& v, size_t n) {
  std::vector<T> head(v.begin(), v.begin() + ptrdiff_t(n));
  v.erase(v.begin(), v.begin() + ptrdiff_t(n));
  return head;
}
size_t column_size(hid_t parent, const std::string& name);
// The rows of a chunked column, at most `rows`, that lie in its leading run of chunks stored in
// the file: allocated, and inside the file's end of allocation. HDF5 keeps no journal: a process
// killed while HDF5 writes metadata can leave a column longer than its stored chunks (the rows
// past them read as the fill value, without an error) or chunks past the end of allocation
// (reading them fails). Any error looking a chunk up counts as not stored.
size_t stored_rows(hid_t parent, const std::string& name, size_t rows);
std::vector<std::string> member_names(hid_t group);  // the links in a group, in name order

void write_strings(hid_t parent, const std::string& name, const std::vector<std::string>& values);  // replaces one of that name
std::vector<std::string> read_strings(hid_t parent, const std::string& name);

// Dimensions as netCDF-4 stores them (HDF5 dimension scales), which xarray's h5netcdf engine
// reads: a group whose every column has a dimension opens without phony dimensions.
// Makes column `name` a dimension scale named after itself (a netCDF-4 coordinate variable:
// xarray's dimension and coordinate of that name); nothing when it is one already.
void make_scale(hid_t parent, const std::string& name);
// Makes column `scale` the dimension of every other column of `group` that is not a scale
// itself: a table whose rows are the values of `scale` (points, evaluations, generations, reason
// codes). Columns that have a dimension already are left as they are, so that writers call it
// after every write that may have made a column.
void set_dimension(hid_t group, const std::string& scale);

}  // namespace cosmic::h5
