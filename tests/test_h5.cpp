// h5::append_columns (chunks compressed on the OpenMP threads, written with H5Dwrite_chunk) against
// h5::append_column (HDF5's own filter pipeline): same values, and the same stored bytes in every
// chunk, for shuffled and unshuffled columns at two deflate levels; columns that do not start or
// end on a chunk boundary take HDF5's path. h5::overwrite_column rewrites uncompressed columns in
// place (the sweeps' reductions). h5::stored_rows and h5::open_file cope with what a writer killed
// inside an HDF5 flush leaves.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "host/h5.hpp"

namespace {

using namespace cosmic;

// The stored (filtered) bytes of every chunk of a column, and their filter masks.
std::vector<std::vector<unsigned char>> stored_chunks(hid_t parent, const std::string& name, hsize_t chunk_rows) {
  const size_t rows = h5::column_size(parent, name);
  h5::Handle d(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, "open " + name);
  std::vector<std::vector<unsigned char>> out;
  for (hsize_t at = 0; at < rows; at += chunk_rows) {
    hsize_t bytes = 0;
    EXPECT_GE(H5Dget_chunk_storage_size(d.id(), &at, &bytes), 0);
    std::vector<unsigned char> b(bytes);
    uint32_t mask = 99;
    EXPECT_GE(H5Dread_chunk(d.id(), H5P_DEFAULT, &at, &mask, b.data()), 0);
    EXPECT_EQ(mask, 0u) << name << " chunk at " << at << ": a filter was skipped";
    out.push_back(std::move(b));
  }
  return out;
}

TEST(H5, AppendColumnsStoresWhatHdf5Would) {
  const hsize_t chunk = 1024;
  const h5::ColumnFormat shuffled{chunk, 1, true}, plain{chunk, 4, false};
  std::vector<int16_t> genes(3 * chunk);
  std::vector<double> values(3 * chunk);
  for (size_t i = 0; i < genes.size(); ++i) {
    genes[i] = int16_t((i * 7919) % 13 - 6);
    values[i] = i % 5 == 0 ? 1.5 : double(i * i % 1009) / 7.0;
  }
  const std::vector<int16_t> tail(100, 3);  // not a whole chunk
  const std::string dir = testing::TempDir();
  const std::string ours = dir + "/cosmic-h5-ours.h5", theirs = dir + "/cosmic-h5-theirs.h5";
  {
    h5::Handle f = h5::create_file(ours);
    // Whole chunks from an empty column: compressed here (3 chunks per column).
    EXPECT_EQ(h5::append_columns(f.id(), {h5::column_rows("g", genes, shuffled), h5::column_rows("v", values, plain)}), 6u);
    // A partial chunk, then whole chunks that no longer start on a boundary: HDF5's path.
    EXPECT_EQ(h5::append_columns(f.id(), {h5::column_rows("g", tail, shuffled)}), 0u);
    EXPECT_EQ(h5::append_columns(f.id(), {h5::column_rows("g", genes, shuffled)}), 0u);
  }
  {
    h5::Handle f = h5::create_file(theirs);
    h5::append_column(f.id(), "g", genes, shuffled);
    h5::append_column(f.id(), "v", values, plain);
    h5::append_column(f.id(), "g", tail, shuffled);
    h5::append_column(f.id(), "g", genes, shuffled);
  }
  h5::Handle a = h5::open_file(ours, false), b = h5::open_file(theirs, false);
  EXPECT_EQ(h5::read_column<int16_t>(a.id(), "g"), h5::read_column<int16_t>(b.id(), "g"));
  EXPECT_EQ(h5::read_column<double>(a.id(), "v"), values);
  EXPECT_EQ(h5::read_column<double>(b.id(), "v"), values);
  EXPECT_EQ(h5::column_size(a.id(), "g"), 6 * chunk + 100);
  for (const char* name : {"g", "v"}) {
    const auto x = stored_chunks(a.id(), name, chunk), y = stored_chunks(b.id(), name, chunk);
    ASSERT_EQ(x.size(), y.size()) << name;
    for (size_t k = 0; k < x.size(); ++k) EXPECT_EQ(x[k], y[k]) << name << " chunk " << k;
    EXPECT_LT(x[0].size(), chunk * (std::string(name) == "g" ? 2 : 8)) << name << ": not compressed";
  }
  std::filesystem::remove(ours);
  std::filesystem::remove(theirs);
}

// The address of the chunk holding row `row` (HADDR_UNDEF: not allocated).
haddr_t chunk_address(hid_t parent, const std::string& name, hsize_t row) {
  h5::Handle d(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, "open " + name);
  unsigned mask = 0;
  haddr_t addr = HADDR_UNDEF;
  hsize_t size = 0;
  EXPECT_GE(H5Dget_chunk_info_by_coord(d.id(), &row, &mask, &addr, &size), 0);
  return addr;
}

// A changed byte in a stored chunk of a compressed column (the rows of results) makes the read
// fail, naming the file and the column, on HDF5's path and on append_columns' alike: zlib's
// Adler-32 of each chunk catches it (a Fletcher-32 filter was tried for this and added nothing).
// The chunks before it still read.
TEST(H5, DamagedChunkFailsToRead) {
  const std::string path = testing::TempDir() + "/cosmic-h5-damaged.h5";
  const hsize_t chunk = 1024;
  const h5::ColumnFormat fmt{chunk, 4, true};
  std::vector<double> v(4 * chunk);
  for (size_t i = 0; i < v.size(); ++i) v[i] = double(i % 97) * 0.25;
  for (const char* name : {"ours", "hdf5s"}) {
    haddr_t addr = HADDR_UNDEF;
    {
      h5::Handle f = h5::create_file(path);
      if (std::string(name) == "ours") EXPECT_EQ(h5::append_columns(f.id(), {h5::column_rows(name, v, fmt)}), 4u);
      else h5::append_column(f.id(), name, v, fmt);
      EXPECT_EQ(h5::read_column<double>(f.id(), name), v);
      addr = chunk_address(f.id(), name, 2 * chunk);
    }
    ASSERT_NE(addr, HADDR_UNDEF);
    for (std::streamoff at : {2, 40}) {  // inside the third chunk, once in a file
      std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
      io.seekg(std::streamoff(addr) + at);
      char c = 0;
      io.get(c);
      io.seekp(std::streamoff(addr) + at);
      io.put(char(c ^ 0x10));
      io.close();
      h5::Handle f = h5::open_file(path, false);
      try {
        (void)h5::read_column<double>(f.id(), name);
        ADD_FAILURE() << name << ": a damaged chunk read without an error";
      } catch (const h5::Error& e) {
        EXPECT_NE(std::string(e.what()).find(path + ": HDF5: read " + name + " failed"), std::string::npos) << e.what();
      }
      EXPECT_EQ(h5::read_column<double>(f.id(), name, 0, 2 * chunk), std::vector<double>(v.begin(), v.begin() + 2 * chunk));
    }
  }
  std::filesystem::remove(path);
}

// h5::overwrite_column, which sweeps rely on to survive a kill between two flushes (host/sweep_run.cpp,
// save_state): an uncompressed column rewritten with more or fewer rows keeps its chunks where they
// were, and holds exactly the rows written; compressed columns are refused.
TEST(H5, OverwriteColumnRewritesInPlace) {
  const std::string path = testing::TempDir() + "/cosmic-h5-overwrite.h5";
  const h5::ColumnFormat fmt{64, 0, false};
  std::vector<double> v(100);
  for (size_t i = 0; i < v.size(); ++i) v[i] = double(i);
  {
    h5::Handle f = h5::create_file(path);
    h5::overwrite_column(f.id(), "c", v, fmt);
    const haddr_t first = chunk_address(f.id(), "c", 0), second = chunk_address(f.id(), "c", 64);
    ASSERT_NE(first, HADDR_UNDEF);
    ASSERT_NE(second, HADDR_UNDEF);
    h5::flush(f.id());
    for (size_t rows : {size_t(120), size_t(70), size_t(128), size_t(100)}) {
      std::vector<double> w(rows);
      for (size_t i = 0; i < rows; ++i) w[i] = double(rows * 1000 + i);
      h5::overwrite_column(f.id(), "c", w, fmt);
      EXPECT_EQ(h5::read_column<double>(f.id(), "c"), w) << rows;
      EXPECT_EQ(chunk_address(f.id(), "c", 0), first) << rows;
      EXPECT_EQ(chunk_address(f.id(), "c", 64), second) << rows;
    }
    // Down to one chunk: the second is freed; the first stays.
    h5::overwrite_column(f.id(), "c", std::vector<double>(10, 1.0), fmt);
    EXPECT_EQ(chunk_address(f.id(), "c", 0), first);
    EXPECT_EQ(h5::column_size(f.id(), "c"), 10u);
    h5::write_column(f.id(), "z", v);  // compressed (the default format)
    EXPECT_THROW(h5::overwrite_column(f.id(), "z", v, fmt), h5::Error);
    EXPECT_THROW(h5::overwrite_column(f.id(), "y", v, h5::ColumnFormat{}), h5::Error);
  }
  std::filesystem::remove(path);
}

// What a writer killed inside an HDF5 flush can leave (HDF5 keeps no journal; sweeps with --keep
// all meet both, scripts/kill_stress.py): (a) a column longer than its stored chunks, whose rows
// past them read as zeros without an error; (b) a chunk past the end of allocation that the
// superblock records (HDF5 writes the superblock last), which does not read, and whose space
// HDF5 would hand out again and then refuse to write ("addr overflow"). h5::stored_rows stops
// before either; h5::open_file for writing takes the space up to the physical end of the file in.
TEST(H5, KilledWriterLeftovers) {
  const std::string path = testing::TempDir() + "/cosmic-h5-killed.h5";
  const h5::ColumnFormat fmt{64, 1, true};
  auto rows = [](size_t n, double from) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = from + double(i);
    return v;
  };
  {  // (a)
    h5::Handle f = h5::create_file(path);
    h5::append_columns(f.id(), {h5::column_rows("c", rows(128, 0), fmt)});
    h5::resize_column(f.id(), "c", 256);
    EXPECT_EQ(h5::stored_rows(f.id(), "c", SIZE_MAX), 128u);
    EXPECT_EQ(h5::stored_rows(f.id(), "c", 100), 100u);
    EXPECT_EQ(h5::read_column<double>(f.id(), "c", 128, 1), std::vector<double>{0.0});  // the fill value
  }
  haddr_t third = HADDR_UNDEF;
  {  // (b): three chunks; the end of allocation is then set back to the third's address
    h5::Handle f = h5::create_file(path);
    h5::append_columns(f.id(), {h5::column_rows("c", rows(128, 0), fmt)});
    h5::flush(f.id());
    h5::append_columns(f.id(), {h5::column_rows("c", rows(64, 128), fmt)});
    third = chunk_address(f.id(), "c", 128);
  }
  std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
  unsigned char head[48] = {};
  io.read(reinterpret_cast<char*>(head), sizeof head);
  ASSERT_EQ(std::memcmp(head, "\x89HDF\r\n\x1a\n", 8), 0);
  if (head[8] != 0 || head[13] != 8)
    GTEST_SKIP() << "this HDF5 lays files out otherwise (superblock version " << int(head[8]) << ")";
  uint64_t eoa = third;  // superblock version 0: the end of allocation, 8 bytes little-endian at 40
  for (int b = 0; b < 8; ++b) head[40 + b] = static_cast<unsigned char>(eoa >> (8 * b));
  io.seekp(40);
  io.write(reinterpret_cast<const char*>(head + 40), 8);
  io.close();
  {
    h5::Handle f = h5::open_file(path, false);
    EXPECT_EQ(h5::column_size(f.id(), "c"), 192u);
    EXPECT_EQ(h5::stored_rows(f.id(), "c", SIZE_MAX), 128u);
    EXPECT_EQ(h5::read_column<double>(f.id(), "c", 0, 128), rows(128, 0));
    EXPECT_THROW(h5::read_column<double>(f.id(), "c"), h5::Error);
  }
  // As --resume does: cut to the stored rows, append (chunks that compress to less than the
  // third, so that HDF5 would put them where it was).
  const std::vector<double> more(128, 7.0);
  {
    h5::Handle f = h5::open_file(path, true);
    h5::resize_column(f.id(), "c", 128);
    h5::append_columns(f.id(), {h5::column_rows("c", more, fmt)});
  }
  h5::Handle f = h5::open_file(path, false);
  std::vector<double> want = rows(128, 0);
  want.insert(want.end(), more.begin(), more.end());
  EXPECT_EQ(h5::read_column<double>(f.id(), "c"), want);
  EXPECT_EQ(h5::stored_rows(f.id(), "c", SIZE_MAX), 256u);
  std::filesystem::remove(path);
}

}  // namespace
