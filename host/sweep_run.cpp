// The file-backed sweep driver: batches of the shard's index range through a backend, the
// reductions merged on the host and written to HDF5 after every batch (then flushed, so an
// interrupted run leaves a readable file), progress on stderr, SIGINT / SIGTERM handling,
// --resume, and the merge of shard files. Layout: docs/results-format.md.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "host/backend.hpp"
#include "host/h5.hpp"
#include "host/provenance.hpp"
#include "host/signals.hpp"
#include "host/sweep.hpp"
#include "host/text.hpp"
#include "psa/config.hpp"
#include "psa/names.hpp"

namespace cosmic {

namespace {

// 3: every group has a dimension (xarray opens it without phony dimensions): /histogram's new
// column `bin`, /reasons' `code`, each of /genes its own; 2: the reductions in /state; 1: the
// reductions in /top, ... themselves. All are read, and --resume moves a file to format 3.
constexpr int64_t kFormatVersion = 3;

uint64_t saturate(u128 v) { return v > u128(UINT64_MAX) ? UINT64_MAX : uint64_t(v); }

// The columns of a table of points: index, genome, objectives, metrics.
struct Table {
  std::vector<uint64_t> index, index_hi;
  std::vector<std::vector<int32_t>> genes;
  std::vector<int32_t> reason;
  std::vector<std::vector<double>> obj;
  std::vector<double> time_s, memory_bytes, network_cost_usd, tokens_per_s, mfu, first_token_s;

  Table(int32_t ngenes, int32_t nobj) : genes(size_t(ngenes)), obj(size_t(nobj)) {}
  void add(u128 idx, const int32_t* genome, int32_t why, const double* o, const Result& r) {
    index.push_back(uint64_t(idx));
    index_hi.push_back(uint64_t(idx >> 64));
    for (size_t g = 0; g < genes.size(); ++g) genes[g].push_back(genome[g]);
    reason.push_back(why);
    for (size_t j = 0; j < obj.size(); ++j) obj[j].push_back(o[j]);
    time_s.push_back(r.time_s);
    memory_bytes.push_back(r.memory_bytes);
    network_cost_usd.push_back(r.network_cost_usd);
    tokens_per_s.push_back(r.tokens_per_s);
    mfu.push_back(r.mfu);
    first_token_s.push_back(r.first_token_s);
  }
  size_t rows() const { return index.size(); }
  u128 first_index() const { return (u128(index_hi.front()) << 64) | index.front(); }
  // f(column of this table, the same column of t), for every column.
  template <class F>
  void pair_columns(Table& t, F f) {
    f(index, t.index);
    f(index_hi, t.index_hi);
    for (size_t g = 0; g < genes.size(); ++g) f(genes[g], t.genes[g]);
    f(reason, t.reason);
    for (size_t j = 0; j < obj.size(); ++j) f(obj[j], t.obj[j]);
    f(time_s, t.time_s);
    f(memory_bytes, t.memory_bytes);
    f(network_cost_usd, t.network_cost_usd);
    f(tokens_per_s, t.tokens_per_s);
    f(mfu, t.mfu);
    f(first_token_s, t.first_token_s);
  }
  // Moves the first n rows out.
  Table take_front(size_t n) {
    Table head(int32_t(genes.size()), int32_t(obj.size()));
    pair_columns(head, [n](auto& from, auto& to) { to = h5::cut_front(from, n); });
    return head;
  }
  // f(name, column) for every column, in the order of the file's /all (and /top, /pareto).
  template <class F>
  void each_column(const psa::DesignSpace& ds, const SweepConst& k, F f) {
    f("index", index);
    f("index_hi", index_hi);
    for (size_t g = 0; g < genes.size(); ++g) f(gene_column(ds, int32_t(g)), genes[g]);
    f("reason", reason);
    for (size_t j = 0; j < obj.size(); ++j) f(psa::objective_name(k.obj[j]), obj[j]);
    f("time_s", time_s);
    f("memory_bytes", memory_bytes);
    f("network_cost_usd", network_cost_usd);
    f("tokens_per_s", tokens_per_s);
    f("mfu", mfu);
    f("first_token_s", first_token_s);
  }
  // Extends the group's columns (in_place == nullptr: whole chunks compressed on the OpenMP
  // threads, h5::append_columns), or rewrites them in place, uncompressed, in that format
  // (h5::overwrite_column). The rows are points: `index` is the dimension of every column.
  void write(hid_t grp, const psa::DesignSpace& ds, const SweepConst& k, const h5::ColumnFormat* in_place) {
    std::vector<h5::ColumnRows> cols;
    each_column(ds, k, [&](const std::string& name, const auto& v) {
      if (in_place) h5::overwrite_column(grp, name, v, *in_place);
      else cols.push_back(h5::column_rows(name, v, h5::ColumnFormat{}));
    });
    if (!in_place) h5::append_columns(grp, cols);
    h5::set_dimension(grp, "index");
  }
  // Rows first .. first + count - 1 of the group's columns.
  void read(hid_t grp, const psa::DesignSpace& ds, const SweepConst& k, size_t first, size_t count) {
    each_column(ds, k, [&](const std::string& name, auto& v) {
      v = h5::read_column<typename std::decay_t<decltype(v)>::value_type>(grp, name, first, count);
    });
  }
};

// The names of a table's columns (Table::each_column).
std::vector<std::string> table_columns(const psa::DesignSpace& ds, const SweepConst& k) {
  std::vector<std::string> names;
  Table(ds.view->ngenes, k.nobj).each_column(ds, k, [&](const std::string& n, const auto&) { names.push_back(n); });
  return names;
}

// Points of a reduction with their genome and metrics, recomputed by the scalar model.
Table points_table(const psa::DesignSpace& ds, const SweepConst& k, const std::vector<SweepPoint>& pts) {
  const SpaceView& s = *ds.view;
  Table t(s.ngenes, k.nobj);
  for (const SweepPoint& p : pts) {
    int32_t genome[kMaxGenes];
    unrank(s, p.index, genome);
    const Config c = decode(s, genome);
    t.add(p.index, genome, int32_t(Reason::Ok), p.obj, evaluate(c));
  }
  return t;
}

struct FileMeta {
  std::string psa_text, psa_file, backend, device, shard, keep;
  Provenance prov;  // model revision and base configuration
  std::vector<std::string> folded;  // genes swept at their first value only (fold_names)
  uint64_t copies = 1;              // points of the PSA's space each swept point stands for
  std::vector<std::string> objectives;
  int32_t top_k = 10;
  uint64_t seed = 0;
  u128 space = 0, begin = 0, end = 0, next = 0;
  // --keep all: every row of /all below this index is written (rows from here to `next` are
  // regenerated on resume: /all is written in whole chunks, see run_sweep).
  u128 all_next = 0;
  // --keep all: the rows of /all written with all_next (whole chunks, but for the last one of a
  // sweep that ended or stopped on a signal); -1 in files written before it was recorded.
  int64_t all_rows = -1;
  double wall_s = 0;
  bool complete = false;
  int slot = -1;  // the copy of the reductions read (/state/0 or /state/1); -1: format 1, or none yet
};

void root_counters(hid_t f, const SweepState& st, const FileMeta& m, int slot);

void write_header(hid_t f, const psa::DesignSpace& ds, const SweepState& st, const FileMeta& m) {
  root_counters(f, st, m, 0);
  write_run_header(f, "sweep", kFormatVersion, m.psa_text, m.psa_file, ds);  // a merge's too (merged_from tells it apart)
  h5::set_attr(f, "backend", m.backend);
  h5::set_attr(f, "device", m.device);
  h5::set_attr(f, "seed", m.seed);
  h5::set_attr(f, "space_size", psa::to_string_u128(m.space));
  h5::set_attr(f, "range_begin", psa::to_string_u128(m.begin));
  h5::set_attr(f, "range_end", psa::to_string_u128(m.end));
  h5::set_attr(f, "shard", m.shard);
  h5::set_attr(f, "objectives", m.objectives);
  h5::set_attr(f, "top_k", int64_t(m.top_k));
  h5::set_attr(f, "keep", m.keep);
  if (!m.folded.empty()) h5::set_attr(f, "folded_genes", m.folded);
  h5::set_attr(f, "fold_copies", m.copies);
  h5::set_attr(f, "index_space", index_space(m.folded));
  write_gene_labels(f, ds);
}

// The reductions (top-K, front, histograms, reason counts) and the counters they go with
// (next_index, all_next_index, complete, wall time) are kept twice, in /state/0 and /state/1, and
// rewritten after every batch one copy at a time (save_state):
//   1. write the copy that root attribute state_slot does not name: every column in place,
//      uncompressed (h5::overwrite_column), the counters as attributes of its group;
//   2. flush;
//   3. publish it: state_slot names it, the soft link /state/current points to it (and through
//      it /top, /pareto, /histogram, /reasons), the root counters are set from it;
//   4. flush.
// Why a SIGKILL at any moment leaves a file that reads and resumes exactly:
// - Raw data reaches the file when it is written, metadata only at the flush. A compressed chunk
//   rewritten with another size moves, and HDF5 may hand the space it left to other raw data
//   before the next flush while the file's metadata still points there (format 1 lost
//   /histogram columns this way: "inflate() failed"). Here the rewritten columns are
//   uncompressed and rewritten over their old rows, never truncated to 0 first
//   (h5::overwrite_column), so their chunks stay where they are and free nothing; only a column
//   that shrinks past a chunk boundary (a front) frees chunks, and those belong to the copy
//   being written. So between two flushes raw data lands only in that copy or in new space (/all
//   appends whole new chunks): the published copy, all that state_slot, the links and --resume
//   refer to, is never overwritten, and whatever a kill leaves in the other copy still reads
//   (uncompressed bytes decode whatever they hold).
// - Until the flush of step 4 completes, state_slot names the previous copy, complete since its
//   own step 2 and untouched since; after it, the new one. --resume reads the counters and the
//   reductions of that one copy, so next_index and the reductions it goes with cannot disagree
//   (a kill between writing the reductions and next_index cannot count a batch twice), and it
//   saves and publishes that copy again before writing anything else.
// What is left: HDF5 keeps no journal, so a kill inside one H5Fflush call can leave that flush's
// metadata half written. Step 4's flush is a handful of small writes (tens of microseconds): the
// root's object header chunk that holds state_slot and the counters (root_counters), HDF5's
// global heap (the strings next_index, all_next_index) and /state's link heap. A kill between
// them can leave the root's counters one batch behind the published copy, or next_index
// unreadable; --resume relies on neither (state_slot, then the copy's own attributes) and
// publishes again.
const char* const kSlot[2] = {"/state/0", "/state/1"};
const char* const kSlotName[2] = {"0", "1"};
const char* const kPublic[] = {"top", "pareto", "histogram", "reasons"};

// Uncompressed columns of `chunk_rows` rows a chunk, rewritten in place.
h5::ColumnFormat unfiltered(size_t chunk_rows) {
  return h5::ColumnFormat{hsize_t(std::max<size_t>(chunk_rows, 1)), 0, false};
}

// u128 counters of a copy: [low 64 bits, high 64 bits] (fixed-size attributes, written in place).
void set_u128(hid_t obj, const std::string& name, u128 v) {
  h5::set_attr(obj, name, std::vector<uint64_t>{uint64_t(v), uint64_t(v >> 64)});
}
u128 get_u128(hid_t obj, const std::string& name) {
  const std::vector<uint64_t> v = h5::attr_uints(obj, name);
  if (v.size() != 2) throw std::runtime_error("bad attribute " + name);
  return (u128(v[1]) << 64) | v[0];
}

// Step 1: the reductions and counters into copy `slot`.
void write_slot(hid_t f, const psa::DesignSpace& ds, const SweepConst& k, const SweepState& st, const FileMeta& m,
                int slot) {
  h5::Handle state = h5::group(f, "state", true);
  h5::Handle s = h5::group(state.id(), kSlotName[slot], true);
  {
    h5::Handle top = h5::group(s.id(), "top", true);
    const h5::ColumnFormat fmt = unfiltered(size_t(std::min(m.top_k, 16384)));  // one chunk for the usual K
    for (int j = 0; j < k.nobj; ++j) {
      h5::Handle g = h5::group(top.id(), psa::objective_name(k.obj[j]), true);
      points_table(ds, k, st.top[j]).write(g.id(), ds, k, &fmt);
    }
  }
  if (st.want_front) {
    h5::Handle g = h5::group(s.id(), "pareto", true);
    const h5::ColumnFormat fmt = unfiltered(1024);
    points_table(ds, k, st.pareto).write(g.id(), ds, k, &fmt);
    h5::set_attr(g.id(), "truncated", int64_t(st.pareto_truncated));
    h5::set_attr(g.id(), "max_points", int64_t(kMaxParetoPoints));
  }
  {
    h5::Handle g = h5::group(s.id(), "histogram", true);
    const h5::ColumnFormat fmt = unfiltered(kHistBins);
    if (!h5::exists(g.id(), "edges")) {
      h5::overwrite_column(g.id(), "edges", std::vector<double>(k.hist_edge, k.hist_edge + kHistEdges), fmt);
      h5::set_attr(g.id(), "bins",
                   std::string("log-spaced, 10 per decade: bin 0 < edges[0] = 1e-12 (and zero, negative, NaN); "
                               "bin b in 1..300 holds [edges[b-1], edges[b]); bin 301 >= edges[300] = 1e18"));
    }
    h5::make_scale(g.id(), "edges");  // 301 edges: a dimension of their own
    if (!h5::exists(g.id(), "bin")) {  // the bins' numbers 0 .. 301, the counts' dimension
      std::vector<int32_t> bin(kHistBins);
      for (int b = 0; b < kHistBins; ++b) bin[size_t(b)] = b;
      h5::overwrite_column(g.id(), "bin", bin, fmt);
    }
    for (int j = 0; j < k.nobj; ++j) {
      const auto from = st.hist.begin() + j * kHistBins;
      h5::overwrite_column(g.id(), psa::objective_name(k.obj[j]), std::vector<uint64_t>(from, from + kHistBins), fmt);
    }
    h5::set_dimension(g.id(), "bin");
  }
  {
    h5::Handle g = h5::group(s.id(), "reasons", true);
    std::vector<int32_t> code;
    std::vector<std::string> name;
    reason_codes(code, name);
    std::vector<uint64_t> count{saturate(st.swept - u128(st.evaluated()))};  // code -1: a constraint
    for (int r = 0; r < kNumReasons; ++r) count.push_back(st.reasons[r]);
    const h5::ColumnFormat fmt = unfiltered(code.size());
    h5::overwrite_column(g.id(), "code", code, fmt);
    // Strings are written once; again only for a file of an earlier cosmic, with fewer reasons.
    if (h5::exists(g.id(), "name") && h5::read_strings(g.id(), "name").size() != name.size()) h5::remove(g.id(), "name");
    if (!h5::exists(g.id(), "name")) h5::write_strings(g.id(), "name", name);
    h5::overwrite_column(g.id(), "count", count, fmt);
    h5::set_dimension(g.id(), "code");
  }
  set_u128(s.id(), "next_index", m.next);
  if (m.keep == "all") {
    set_u128(s.id(), "all_next_index", m.all_next);
    h5::set_attr(s.id(), "all_rows", m.all_rows);
  }
  h5::set_attr(s.id(), "wall_time_s", m.wall_s);
  h5::set_attr(s.id(), "complete", int64_t(m.complete ? 1 : 0));
}

// The root's attributes that change with every batch. write_header creates them first, so that
// they sit together at the start of the root's object header, and publishing rewrites them there.
void root_counters(hid_t f, const SweepState& st, const FileMeta& m, int slot) {
  h5::set_attr(f, "state_slot", int64_t(slot));
  h5::set_attr(f, "swept_count", saturate(st.swept));
  h5::set_attr(f, "evaluated_count", st.evaluated());
  h5::set_attr(f, "feasible_count", st.feasible());
  h5::set_attr(f, "next_index", psa::to_string_u128(m.next));
  if (m.keep == "all") {
    h5::set_attr(f, "all_next_index", psa::to_string_u128(m.all_next));
    h5::set_attr(f, "all_rows", m.all_rows);
  }
  h5::set_attr(f, "wall_time_s", m.wall_s);
  h5::set_attr(f, "configs_per_s", m.wall_s > 0 ? double(st.swept) / m.wall_s : 0.0);
  h5::set_attr(f, "evaluated_per_s", m.wall_s > 0 ? double(st.evaluated()) / m.wall_s : 0.0);
  h5::set_attr(f, "complete", int64_t(m.complete ? 1 : 0));
}

// Step 3: copy `slot` becomes the one readers and --resume see.
void publish(hid_t f, const SweepState& st, const FileMeta& m, int slot) {
  {
    h5::Handle state = h5::group(f, "state", false);
    if (h5::soft_link_target(state.id(), "current") != kSlot[slot]) h5::soft_link(state.id(), "current", kSlot[slot]);
  }
  for (const char* name : kPublic) {  // format 1 files (resumed) hold groups here: replaced by links
    if (std::string(name) == "pareto" && !st.want_front) continue;
    const std::string target = std::string("/state/current/") + name;
    if (h5::soft_link_target(f, name) != target) h5::soft_link(f, name, target);
  }
  root_counters(f, st, m, slot);
}

// Steps 1-4: writes the copy that is not current and makes it current (slot: the current copy).
void save_state(hid_t f, const psa::DesignSpace& ds, const SweepConst& k, const SweepState& st, const FileMeta& m,
                int& slot) {
  const int next = slot == 0 ? 1 : 0;
  write_slot(f, ds, k, st, m, next);
  h5::flush(f);
  publish(f, st, m, next);
  h5::flush(f);
  slot = next;
}

Objective objective_from_name(const std::string& n) {
  if (const auto o = psa::objective_named(n)) return *o;
  throw std::runtime_error("unknown objective '" + n + "' in result file");
}

u128 attr_u128(hid_t f, const std::string& name) {
  u128 v = 0;
  if (!psa::parse_u128(h5::attr_string(f, name), v)) throw std::runtime_error("bad attribute " + name);
  return v;
}

FileMeta read_meta(hid_t f, const std::string& path) {
  const std::string kind = h5::result_kind(f);
  if (!h5::has_attr(f, "format_version") || !h5::has_attr(f, "shard") || kind != "sweep")
    throw std::runtime_error(path + ": not a cosmic sweep file" + (kind != "sweep" ? " (a " + kind + " file)" : ""));
  const int64_t version = h5::attr_int(f, "format_version");
  if (version < 1 || version > kFormatVersion)
    throw std::runtime_error(path + ": unsupported format_version " + std::to_string(version) + " (this cosmic reads 1 to " +
                             std::to_string(kFormatVersion) + ")");
  FileMeta m;
  m.psa_text = h5::attr_string(f, "psa");
  m.psa_file = h5::attr_string(f, "psa_file");
  m.prov = read_provenance(f);
  // Informational, and rewritten when a sweep resumes: a kill inside that flush may leave them
  // unreadable, which must not stop the next --resume.
  try {
    m.backend = h5::attr_string(f, "backend");
    m.device = h5::attr_string(f, "device");
  } catch (const h5::Error&) {
    m.backend = m.device = "?";
  }
  m.shard = h5::attr_string(f, "shard");
  m.keep = h5::attr_string(f, "keep");
  m.objectives = h5::attr_strings(f, "objectives");
  m.top_k = int32_t(h5::attr_int(f, "top_k"));
  m.seed = h5::attr_uint(f, "seed");
  if (h5::has_attr(f, "folded_genes")) m.folded = h5::attr_strings(f, "folded_genes");
  if (h5::has_attr(f, "fold_copies")) m.copies = h5::attr_uint(f, "fold_copies");
  m.space = attr_u128(f, "space_size");
  m.begin = attr_u128(f, "range_begin");
  m.end = attr_u128(f, "range_end");
  // The counters of the copy of the reductions that state_slot names, 0 or 1; a format 1 file
  // has no state_slot (slot -1: reductions in /top, ..., counters at the root).
  const bool has_slot = h5::has_attr(f, "state_slot");
  const int64_t slot_attr = has_slot ? h5::attr_int(f, "state_slot") : -1;
  if (has_slot && slot_attr != 0 && slot_attr != 1)
    throw std::runtime_error(path + ": damaged: state_slot is " + std::to_string(slot_attr) + ", expected 0 or 1");
  m.slot = int(slot_attr);
  h5::Handle slot;
  if (m.slot >= 0) slot = h5::group(f, kSlot[m.slot], false);
  const hid_t c = m.slot >= 0 ? slot.id() : f;
  // Format 1 keeps them as decimal strings at the root, format 2 as [low, high] words.
  auto index = [&](const char* name) { return m.slot < 0 ? attr_u128(c, name) : get_u128(c, name); };
  m.next = index("next_index");
  m.all_next = h5::has_attr(c, "all_next_index") ? index("all_next_index") : m.next;
  if (h5::has_attr(c, "all_rows")) m.all_rows = h5::attr_int(c, "all_rows");
  m.wall_s = h5::attr_double(c, "wall_time_s");
  m.complete = h5::attr_int(c, "complete") != 0;
  return m;
}

std::vector<SweepPoint> read_points(hid_t grp, const std::vector<std::string>& objs) {
  const auto lo = h5::read_column<uint64_t>(grp, "index");
  const auto hi = h5::read_column<uint64_t>(grp, "index_hi");
  std::vector<SweepPoint> pts(lo.size());
  for (size_t i = 0; i < pts.size(); ++i) pts[i].index = (u128(hi[i]) << 64) | lo[i];
  for (size_t j = 0; j < objs.size(); ++j) {
    const auto v = h5::read_column<double>(grp, objs[j]);
    for (size_t i = 0; i < pts.size(); ++i) pts[i].obj[j] = v[i];
  }
  return pts;
}

// The reductions stored in a file (for --resume and merge): those of the copy read_meta read.
SweepState read_state(hid_t file, const FileMeta& m) {
  h5::Handle slot;
  if (m.slot >= 0) slot = h5::group(file, kSlot[m.slot], false);
  const hid_t f = m.slot >= 0 ? slot.id() : file;
  SweepState st;
  const int32_t nobj = int32_t(m.objectives.size());
  st.init(nobj, m.top_k, h5::exists(f, "pareto"));
  st.swept = m.next - m.begin;
  {
    h5::Handle g = h5::group(f, "reasons", false);
    const auto code = h5::read_column<int32_t>(g.id(), "code");
    const auto count = h5::read_column<uint64_t>(g.id(), "count");
    for (size_t i = 0; i < code.size(); ++i)
      if (code[i] >= 0 && code[i] < kNumReasons) st.reasons[code[i]] = count[i];
    // A merged file may have gaps below next_index (shards that stopped early): its indices
    // swept are what /reasons counts, constraint-skipped ones included.
    if (m.shard == "merged") {
      st.swept = 0;
      for (uint64_t c : count) st.swept += c;
    }
  }
  {
    h5::Handle g = h5::group(f, "histogram", false);
    for (int32_t j = 0; j < nobj; ++j) {
      const auto h = h5::read_column<uint64_t>(g.id(), m.objectives[size_t(j)]);
      std::copy(h.begin(), h.end(), st.hist.begin() + j * kHistBins);
    }
  }
  {
    h5::Handle top = h5::group(f, "top", false);
    for (int32_t j = 0; j < nobj; ++j) {
      h5::Handle g = h5::group(top.id(), m.objectives[size_t(j)], false);
      st.top[j] = read_points(g.id(), m.objectives);
    }
  }
  if (st.want_front) {
    h5::Handle g = h5::group(f, "pareto", false);
    st.pareto = read_points(g.id(), m.objectives);
    st.pareto_truncated = h5::attr_int(g.id(), "truncated") != 0;
  }
  return st;
}

// Progress on stderr: a bar redrawn in place on a terminal, plain periodic lines otherwise.
class Progress {
 public:
  Progress(bool quiet, double every_s) : quiet_(quiet), tty_(isatty(2) != 0), every_s_(every_s) {}
  void update(u128 done, u128 total, double elapsed_s, const SweepState& st, const SweepConst& k, bool last) {
    if (quiet_) return;
    if (!tty_ && !last && elapsed_s - last_s_ < every_s_) return;
    last_s_ = elapsed_s;
    const double frac = total ? double(done) / double(total) : 1.0;
    const double rate = elapsed_s > 0 ? double(done) / elapsed_s : 0;
    std::ostringstream os;
    os << (tty_ ? "\r" : "") << "sweep ";
    if (tty_) {
      const int w = 24, fill = int(frac * w);
      os << "[" << std::string(size_t(fill), '#') << std::string(size_t(w - fill), '.') << "] ";
    }
    char pct[16];
    std::snprintf(pct, sizeof pct, "%5.1f%%", 100 * frac);
    os << pct << " " << human(rate) << " configs/s, ETA "
       << (rate > 0 ? duration(double(total - done) / rate) : std::string("?")) << ", feasible "
       << human(double(st.feasible()));
    if (!st.top[0].empty()) os << ", best " << psa::objective_name(k.obj[0]) << " " << st.top[0][0].obj[0];
    // Nothing feasible at the end: the model's reasons, most frequent first.
    if (last && st.feasible() == 0 && st.evaluated() > 0) {
      std::vector<std::pair<uint64_t, int>> why;
      for (int r = 1; r < kNumReasons; ++r)
        if (st.reasons[r] > 0) why.push_back({st.reasons[r], -r});
      std::sort(why.rbegin(), why.rend());
      for (size_t i = 0; i < why.size(); ++i)
        os << (i ? ", " : " (not feasible: ") << names::name(names::kReason, Reason(-why[i].second)) << " "
           << psa::with_commas(std::to_string(why[i].first));
      os << ")";
    }
    os << (tty_ ? (last ? "\n" : "   ") : "\n");
    std::cerr << os.str() << std::flush;
  }

 private:
  bool quiet_, tty_;
  double every_s_, last_s_ = -1e300;
};

u128 row_index(hid_t grp, size_t row) {
  const auto lo = h5::read_column<uint64_t>(grp, "index", row, 1);
  const auto hi = h5::read_column<uint64_t>(grp, "index_hi", row, 1);
  if (lo.size() != 1 || hi.size() != 1) throw h5::Error("HDF5: /all/index has no row " + std::to_string(row));
  return (u128(hi[0]) << 64) | lo[0];
}

// --keep all: the rows of /all that a file's counters vouch for: its all_rows (in older files,
// the rows whose index is below all_next_index; all of a merged file's), cut where any column's
// stored chunks end (h5::stored_rows). A kill leaves more rows only when it came after /all was
// extended but before the counters were published; those, and anything a kill inside a flush
// left half written, are past the rows counted.
size_t committed_rows(hid_t f, const psa::DesignSpace& ds, const SweepConst& k, const FileMeta& m) {
  h5::Handle g = h5::group(f, "all", false);
  size_t rows = m.all_rows >= 0 ? size_t(m.all_rows) : SIZE_MAX;
  for (const auto& c : table_columns(ds, k)) rows = h5::stored_rows(g.id(), c, rows);
  if (m.all_rows >= 0 || m.shard == "merged") return rows;
  const auto lo = h5::read_column<uint64_t>(g.id(), "index", 0, rows);
  const auto hi = h5::read_column<uint64_t>(g.id(), "index_hi", 0, rows);
  size_t n = 0;
  for (u128 last = 0; n < lo.size(); ++n) {
    const u128 i = (u128(hi[n]) << 64) | lo[n];
    if (i >= m.all_next || i < m.begin || (n > 0 && i <= last)) break;
    last = i;
  }
  return n;
}

// --resume with --keep all: the rows of /all to keep, committed_rows cut to whole chunks (so that
// appending never rewrites a compressed chunk; a sweep stopped by a signal ended /all with a
// partial one), and the index from which the rest is swept again: all_next is lowered to just
// past the last row kept (the rows between are the points that fail a constraint, which have
// none).
size_t all_rows_to_keep(hid_t f, const psa::DesignSpace& ds, const SweepConst& k, FileMeta& m) {
  const size_t chunk = size_t(h5::ColumnFormat{}.chunk_rows);
  const size_t rows = committed_rows(f, ds, k, m) / chunk * chunk;
  h5::Handle g = h5::group(f, "all", false);
  m.all_next = std::min(m.all_next, rows > 0 ? row_index(g.id(), rows - 1) + 1 : m.begin);
  m.all_rows = int64_t(rows);
  return rows;
}

// Cuts every column of /all to `rows` rows (its chunks beyond are freed: flush before writing).
void cut_all_rows(hid_t f, const psa::DesignSpace& ds, const SweepConst& k, size_t rows) {
  h5::Handle g = h5::group(f, "all", false);
  for (const auto& c : table_columns(ds, k))
    if (h5::column_size(g.id(), c) > rows) h5::resize_column(g.id(), c, rows);
  h5::set_dimension(g.id(), "index");  // format 1 files have none
}

// [begin, end) of shard i of n over a space of `size` points.
void shard_range(u128 size, uint64_t i, uint64_t n, u128& begin, u128& end) {
  const u128 q = size / n, r = size % n;
  begin = q * i + (u128(i) < r ? u128(i) : r);
  end = begin + q + (u128(i) < r ? 1 : 0);
}

}  // namespace

std::vector<std::string> fold_names(const psa::DesignSpace& space) {
  std::vector<std::string> names;
  for (int32_t g : psa::foldable_genes(space)) names.push_back(space.genes[size_t(g)].name);
  return names;
}

int run_sweep(const psa::DesignSpace& psa_space, const SweepOptions& o) {
  StopSignals signals;  // from the start: a signal while the file is made stops the sweep once it is
  FileMeta m;
  h5::Handle file;
  SweepState st;
  if (o.resume) {
    file = h5::open_file(o.out, true);
    m = read_meta(file.id(), o.out);
    if (m.psa_text != psa_space.text) throw std::runtime_error(o.out + " was written for a different PSA text");
    const std::string why = provenance_mismatch(m.prov, psa_space);
    if (!why.empty()) throw std::runtime_error(o.out + ": cannot resume: " + why);
    if (m.complete) {
      if (!o.quiet) std::cerr << "sweep: " << o.out << " is already complete\n";
      return 0;
    }
    if (m.shard == "merged")
      throw std::runtime_error(o.out + " was written by cosmic merge and cannot be resumed: resume the shard files (" +
                               "listed in its merged_from attribute) and merge them again");
  } else if (o.fold) {
    m.folded = fold_names(psa_space);
  }
  // The space swept: the PSA's, with the genes no result depends on at their first value.
  const psa::DesignSpace ds = psa::fold_genes(psa_space, m.folded);
  const SpaceView& s = *ds.view;
  if (!o.resume) {
    m.copies = uint64_t(space_size(*psa_space.view) / space_size(s));
    m.psa_text = ds.text;
    m.psa_file = ds.file;
    m.top_k = o.top_k;
    m.keep = o.keep;
    m.seed = o.seed;
    m.space = space_size(s);
    m.shard = std::to_string(o.shard_i) + "/" + std::to_string(o.shard_n);
    shard_range(m.space, o.shard_i, o.shard_n, m.begin, m.end);
    m.next = m.all_next = m.begin;
    m.all_rows = 0;
    for (Objective obj : ds.objectives) m.objectives.push_back(psa::objective_name(obj));
  }
  std::vector<Objective> objectives;
  for (const auto& n : m.objectives) objectives.push_back(objective_from_name(n));
  const SweepConst k = make_sweep_const(s, objectives);
  SweepProblem p;
  p.view = &s;
  p.k = k;
  p.top_k = m.top_k;
  p.want_front = m.keep != "top" && k.nobj >= 2;
  p.keep_all = m.keep == "all";
  std::unique_ptr<SweepBackend> backend;
  if (o.backend == "cuda" || (o.backend == "auto" && cuda_device().available)) backend = make_cuda_sweep_backend(p);
  else backend = make_cpu_sweep_backend(p);
  m.backend = backend->name();
  m.device = backend->device();
  int slot = m.slot;  // the current copy of the reductions (save_state)
  if (o.resume) {
    st = read_state(file.id(), m);
    // /all keeps its committed rows in whole chunks (all_rows_to_keep); the rows from the lowered
    // all_next_index to next_index are regenerated below. The lowered counters are saved before
    // /all is cut, so that a kill in between leaves a file that says no more than /all holds.
    size_t all_rows = 0;
    if (p.keep_all) {
      try {
        all_rows = all_rows_to_keep(file.id(), ds, k, m);
      } catch (const h5::Error& e) {
        throw std::runtime_error(o.out + ": /all cannot be read back (" + e.what() +
                                 "): start this sweep again without --resume");
      }
    }
    h5::set_attr(file.id(), "backend", m.backend);  // the backend of the latest run
    h5::set_attr(file.id(), "device", m.device);
    h5::set_attr(file.id(), "format_version", kFormatVersion);
    label_dimensions(file.id());  // a file of an earlier format: /genes' dimensions
    h5::set_attr(file.id(), "index_space", index_space(m.folded));  // and the space of its indices
    // The copy read, saved as the other one and published again: this repairs what a kill inside
    // a flush may have left half published, moves a format 1 file's reductions to /state, and
    // gives an earlier format's reductions their dimensions (the other copy gets them with the
    // next batch).
    save_state(file.id(), ds, k, st, m, slot);
    if (p.keep_all) {
      cut_all_rows(file.id(), ds, k, all_rows);
      h5::flush(file.id());  // before any raw data can reuse the chunks cut
    }
  } else {
    // Written under a temporary name and renamed once complete: a kill before that leaves no
    // (or the previous) OUT, never one that does not open.
    st.init(k.nobj, m.top_k, p.want_front);
    h5::NewFile created(o.out, "sweep");
    write_header(created.id(), ds, st, m);
    if (p.keep_all) {
      h5::Handle g = h5::group(created.id(), "all", true);
      Table(s.ngenes, k.nobj).write(g.id(), ds, k, nullptr);  // empty columns
    }
    save_state(created.id(), ds, k, st, m, slot);
    file = created.publish();
  }

  if (!o.quiet && !m.folded.empty()) {
    std::cerr << "sweep: no result depends on " << join(m.folded) << " (docs/model.md): swept at their first value, each point "
              << "stands for " << m.copies << " points of the PSA's space"
              << (o.resume ? "" : " (--no-fold sweeps every value)") << "\n";
  }
  // A range that takes more than a day at 3 x 10^9 points a second (the H200's measured sweep
  // rate, docs/performance.md; 2 CPU cores cover 10^7 to 10^8) will not be finished by sweeping.
  const double points = double(m.end - m.next), fastest_s = points / 3e9;
  if (!o.quiet && fastest_s > 86400)
    std::cerr << "cosmic sweep: note: " << fmt_g(points, 3) << " points to sweep would take " << duration(fastest_s)
              << " even at 3 x 10^9 a second (an H200), less only as far as constraints skip regions unvisited (the "
                 "progress line's rate counts those): fix some parameters, or let cosmic search explore the space "
                 "(docs/agents.md)\n";
  Progress progress(o.quiet, o.progress_every_s);
  const auto t0 = std::chrono::steady_clock::now();
  const double wall0 = m.wall_s;
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const int32_t coarse = coarse_gene_for(s, 4096);
  uint64_t target = backend->min_batch();
  BatchOutput out;
  // --keep all: rows are appended to /all in whole chunks only (appending to a compressed chunk
  // moves it in the file, and a kill before the next flush could leave it unreadable); the rest
  // waits in `pending` and is written when the sweep ends or stops on a signal. A killed sweep
  // leaves /all with the rows below all_next_index, and --resume regenerates the rows from there
  // to next_index by sweeping that range again without counting it twice.
  Table pending(s.ngenes, k.nobj);
  auto add_rows = [&](const BatchOutput& b) {
    for (const SweepRow& r : b.rows) {
      int32_t genome[kMaxGenes];
      unrank(s, r.index, genome);
      pending.add(r.index, genome, r.reason, r.obj, r.metrics());
    }
  };
  auto write_rows = [&](bool all) {
    const size_t chunk = size_t(h5::ColumnFormat{}.chunk_rows);
    const size_t n = all ? pending.rows() : pending.rows() / chunk * chunk;
    if (n > 0) {
      h5::Handle g = h5::group(file.id(), "all", true);
      pending.take_front(n).write(g.id(), ds, k, nullptr);
      m.all_rows += int64_t(n);
    }
    m.all_next = pending.rows() > 0 ? pending.first_index() : m.next;
  };
  if (p.keep_all) {
    for (u128 cursor = m.all_next; cursor < m.next;) {
      const std::vector<Segment> segs = plan_segments(s, k, coarse, cursor, m.next, target);
      backend->run(segs, st.pruning(), out);  // rows only: the reductions already count them
      add_rows(out);
    }
  }
  while (m.next < m.end && !StopSignals::received()) {
    const double b0 = elapsed();
    const u128 from = m.next;
    u128 cursor = m.next;
    const std::vector<Segment> segs = plan_segments(s, k, coarse, cursor, m.end, target);
    backend->run(segs, st.pruning(), out);
    st.add(out, cursor - from);
    m.next = cursor;
    m.wall_s = wall0 + elapsed();
    m.complete = m.next >= m.end;
    if (p.keep_all) {
      add_rows(out);
      write_rows(m.complete);
    }
    save_state(file.id(), ds, k, st, m, slot);
    progress.update(m.next - m.begin, m.end - m.begin, m.wall_s, st, k, m.complete);
    // Aim for o.batch_s per batch: at most double or halve the live target each time.
    const double dt = elapsed() - b0;
    const double f = dt > 0 ? std::min(2.0, std::max(0.5, o.batch_s / dt)) : 2.0;
    target = uint64_t(std::min(double(backend->max_batch()), std::max(double(backend->min_batch()), double(target) * f)));
  }
  if (p.keep_all && pending.rows() > 0) {  // stopped by a signal: write the rest
    write_rows(true);
    save_state(file.id(), ds, k, st, m, slot);
  }
  if (!m.complete && m.next >= m.end) {  // an empty range (a shard of a space smaller than N)
    m.complete = true;
    save_state(file.id(), ds, k, st, m, slot);
  }
  if (StopSignals::received()) {
    if (!o.quiet)
      std::cerr << "\nsweep: interrupted; " << o.out << " holds " << psa::to_string_u128(m.next - m.begin)
                << " indices so far (complete = 0); continue with --resume\n";
    return 128 + int(StopSignals::received());
  }
  return 0;
}

int merge_sweeps(const std::string& out, const std::vector<std::string>& inputs, bool quiet) {
  struct In {
    std::string path;
    FileMeta m;
    SweepState st;
    size_t all_rows = 0;  // --keep all: the rows of its /all that merge takes (committed_rows)
  };
  std::vector<In> ins;
  for (const auto& path : inputs) {
    std::error_code ec;
    if (std::filesystem::equivalent(out, path, ec)) {
      std::cerr << "cosmic merge: the output " << out << " is also an input; write the merge to a new file\n";
      return 1;
    }
    h5::check_readable(path);
    h5::Handle f = h5::open_file(path, false);
    In in{path, read_meta(f.id(), path), {}, 0};
    in.st = read_state(f.id(), in.m);
    ins.push_back(std::move(in));
  }
  if (ins.empty()) {
    std::cerr << "cosmic merge: no input files\n";
    return 1;
  }
  // `cosmic merge shard*.h5` names the first shard as the output: refuse to write over any
  // result file but an earlier merge's.
  if (std::filesystem::exists(out)) {
    std::string what;
    try {
      h5::Handle f = h5::open_file(out, false);
      if (h5::result_kind(f.id()) != "sweep") what = "a " + h5::result_kind(f.id()) + "'s results";
      else if (h5::has_attr(f.id(), "shard") && h5::attr_string(f.id(), "shard") != "merged")
        what = "a sweep's results" + (h5::attr_string(f.id(), "shard") == "0/1" ? "" : " (shard " + h5::attr_string(f.id(), "shard") + ")");
    } catch (const std::exception&) {  // not an HDF5 file, or unreadable: nothing of ours to lose
    }
    if (!what.empty()) {
      std::cerr << "cosmic merge: the output " << out << " exists and holds " << what
                << ", not a merge's; the output comes first (cosmic merge OUT.h5 IN.h5...): name a new file\n";
      return 1;
    }
  }
  std::sort(ins.begin(), ins.end(), [](const In& a, const In& b) { return a.m.begin < b.m.begin; });
  const auto has_gap = [](const In& in) { return in.m.shard == "merged" && in.st.swept < in.m.end - in.m.begin; };
  const FileMeta& first = ins[0].m;
  for (size_t i = 0; i < ins.size(); ++i) {
    const FileMeta& m = ins[i].m;
    const std::string differs = m.psa_text != first.psa_text     ? "its PSA text"
                                : m.prov.psa_sets != first.prov.psa_sets ? "its list of --set edits"
                                : m.objectives != first.objectives ? "its objectives"
                                : m.folded != first.folded         ? "its folded genes (--no-fold)"
                                : m.space != first.space           ? "its space's size"
                                : m.keep != first.keep             ? "--keep (" + m.keep + ", not " + first.keep + ")"
                                                                   : "";
    if (!differs.empty()) {
      std::cerr << "cosmic merge: " << ins[i].path << " is from another sweep than " << ins[0].path << ": " << differs
                << " differs\n";
      return 1;
    }
    if (i > 0 && m.begin < ins[i - 1].m.end) {
      const In& prev = ins[i - 1];
      std::cerr << "cosmic merge: " << ins[i].path << " (indices from " << psa::to_string_u128(m.begin) << ") overlaps "
                << prev.path << " (up to " << psa::to_string_u128(prev.m.end) << ")"
                << (has_gap(prev) || has_gap(ins[i])
                        ? ": a merged file counts as covering its whole range, gaps too; merge the shard files (its "
                          "merged_from attribute lists them) with the new ones instead"
                        : "")
                << "\n";
      return 1;
    }
  }
  // The writer recomputes genomes and metrics from the PSA: the shards' recorded PSA text with
  // the base configuration they recorded written inline (which holds their base.KEY edits) and
  // their other --set edits, so that a merge needs neither the PSA file nor its base file
  // (another machine, or files moved or edited since the sweeps). Every input must be of this
  // model revision and of that base.
  for (const In& in : ins) {
    std::string why = revision_mismatch(in.m.prov);
    if (why.empty() && in.m.prov.base_config != first.prov.base_config)
      why = "it was swept from another base configuration than " + ins[0].path + " (" +
            first_difference(in.m.prov.base_config, first.prov.base_config, "here", "there") + ")";
    if (why.empty() && in.m.prov.device_systems != first.prov.device_systems)
      why = "it was swept with other NPU types (compute.device: attribute device_systems) than " + ins[0].path;
    if (!why.empty()) {
      std::cerr << "cosmic merge: " << in.path << ": " << why << "\n";
      return 1;
    }
  }
  psa::DesignSpace ds;
  try {
    ds = recorded_space(first.psa_text, first.psa_file, first.prov, first.folded);
  } catch (const std::runtime_error& e) {
    std::cerr << "cosmic merge: " << ins[0].path << ": " << e.what() << "\n";
    return 1;
  }

  FileMeta m = first;
  m.begin = ins.front().m.begin;
  m.end = ins.back().m.end;
  // next_index and all_next_index: the ends of what the inputs swept (and /all holds) without a
  // gap from range_begin. An input has swept its whole range when its swept count is the range's
  // size (for a merged input, counted from /reasons); a merged input that has not stops at its
  // next_index, the end of its own gapless part, except one written before that rule (its
  // next_index was its end, gaps or not), which is taken as swept from nothing.
  m.next = m.all_next = m.begin;
  bool all_gapless = true;
  for (const In& in : ins) {
    if (in.m.begin != m.next) break;
    const bool whole = in.st.swept == in.m.end - in.m.begin;
    m.next = whole ? in.m.end : (in.m.next == in.m.end ? in.m.begin : in.m.next);
    if (all_gapless) m.all_next = std::min(in.m.all_next, m.next);
    all_gapless = all_gapless && m.all_next == in.m.end;
    if (!whole) break;
  }
  const bool complete = m.begin == 0 && m.next == m.space;
  // What an incomplete merge lacks, one item each: shards (where every input is a shard I/N of
  // the same N) or index ranges no input covers, and inputs that are not finished.
  std::vector<std::string> lacks;
  {
    int shards = 0;
    std::set<int> have;
    for (const In& in : ins) {
      int i = -1, n = 0;
      if (std::sscanf(in.m.shard.c_str(), "%d/%d", &i, &n) != 2 || n < 2 || (shards && n != shards)) {
        shards = -1;
        break;
      }
      shards = n;
      have.insert(i);
    }
    if (shards > 1) {  // runs of missing shards as ranges: "shards 2-4095 of 4096"
      for (int i = 0; i < shards; ++i) {
        if (have.count(i)) continue;
        int j = i;
        while (j + 1 < shards && !have.count(j + 1)) ++j;
        const std::string n = std::to_string(shards);
        lacks.push_back((i == j ? "shard " + std::to_string(i) + "/" + n
                                : "shards " + std::to_string(i) + "-" + std::to_string(j) + " of " + n) + " (not merged)");
        i = j;
      }
    } else {
      u128 at = 0;
      const auto gap = [&](u128 lo, u128 hi) {
        if (lo < hi)
          lacks.push_back("indices " + psa::to_string_u128(lo) + " to " + psa::to_string_u128(hi - 1) + " (in no input)");
      };
      for (const In& in : ins) gap(at, in.m.begin), at = in.m.end;
      gap(at, m.space);
    }
    for (const In& in : ins)
      if (in.st.swept < in.m.end - in.m.begin)
        lacks.push_back(in.path + " (unfinished" + (in.m.shard == "merged" ? ", a merge with gaps)" : ": continue it with cosmic sweep --resume)"));
    constexpr size_t kListed = 16;  // an HDF5 attribute holds 64 KiB: the first of many, then a count
    if (lacks.size() > kListed) {
      const size_t more = lacks.size() - kListed;
      lacks.resize(kListed);
      lacks.push_back("and " + std::to_string(more) + " more");
    }
  }
  m.shard = "merged";
  m.complete = complete;
  m.wall_s = 0;
  std::set<std::string> backends, devices;
  for (const In& in : ins) {
    m.top_k = std::min(m.top_k, in.m.top_k);
    m.wall_s += in.m.wall_s;
    backends.insert(in.m.backend);
    devices.insert(in.m.device);
  }
  m.backend = join(backends);
  m.device = join(devices);
  // Settings that may differ without changing what is merged, said when they do: the best K of
  // the whole range are the best K of the shards' bests only for the smallest K, and a sweep
  // draws no random numbers (its seed is only recorded).
  for (size_t i = 1; i < ins.size() && !quiet; ++i) {
    const In& in = ins[i];
    if (in.m.top_k != first.top_k)
      std::cerr << "cosmic merge: note: the inputs kept different numbers of best points (--top " << first.top_k << " in "
                << ins[0].path << ", " << in.m.top_k << " in " << in.path << "): the merged file keeps the best " << m.top_k << "\n";
    if (in.m.seed != first.seed)
      std::cerr << "cosmic merge: note: the inputs record different seeds (" << first.seed << " in " << ins[0].path << ", "
                << in.m.seed << " in " << in.path << "; a sweep uses none): the merged file records " << m.seed << "\n";
  }
  std::vector<Objective> objectives;
  for (const auto& n : m.objectives) objectives.push_back(objective_from_name(n));
  const SweepConst k = make_sweep_const(*ds.view, objectives);
  SweepState st;
  st.init(k.nobj, m.top_k, ins[0].st.want_front);
  for (const In& in : ins) st.merge(in.st);
  if (m.keep == "all") {  // /all takes the rows each input's counters vouch for (a killed one may hold more)
    m.all_rows = 0;
    for (In& in : ins) {
      h5::Handle fi = h5::open_file(in.path, false);
      in.all_rows = committed_rows(fi.id(), ds, k, in.m);
      m.all_rows += int64_t(in.all_rows);
    }
    if (m.all_rows > int64_t(1) << 32) {  // the limit `sweep --keep all` keeps each file to
      std::cerr << "cosmic merge: the inputs' /all tables hold " << m.all_rows
                << " rows, more than 2^32 for one file: keep the shards apart\n";
      return 1;
    }
  }
  // Written under a temporary name and renamed once complete, as a new sweep file.
  h5::NewFile f(out, "sweep");
  write_header(f.id(), ds, st, m);
  std::vector<std::string> merged;
  for (const In& in : ins) merged.push_back(in.path);
  h5::set_attr(f.id(), "merged_from", merged);
  if (!lacks.empty()) h5::set_attr(f.id(), "merge_lacks", lacks);
  int slot = -1;
  save_state(f.id(), ds, k, st, m, slot);
  if (m.keep == "all") {
    // Each input's committed rows, a million at a time.
    h5::Handle g = h5::group(f.id(), "all", true);
    for (const In& in : ins) {
      h5::Handle fi = h5::open_file(in.path, false);
      h5::Handle gi = h5::group(fi.id(), "all", false);
      const size_t slice = size_t(64) * size_t(h5::ColumnFormat{}.chunk_rows);
      for (size_t first = 0; first < in.all_rows; first += slice) {
        Table t(ds.view->ngenes, k.nobj);
        t.read(gi.id(), ds, k, first, std::min(slice, in.all_rows - first));
        t.write(g.id(), ds, k, nullptr);
      }
    }
  }
  h5::flush(f.id());
  f.publish();
  if (!quiet)
    std::cerr << "merge: " << ins.size() << " files, " << psa::to_string_u128(st.swept) << " indices, "
              << st.feasible() << " feasible" << (complete ? "" : " (incomplete: lacks " + join(lacks, "; ") + ")")
              << " -> " << out << "\n";
  return 0;
}

}  // namespace cosmic
