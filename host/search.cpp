#include "host/search.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <fstream>
#include <iostream>
#include <limits>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>

#include "agents/factory.hpp"
#include "agents/nsga2.hpp"
#include "agents/rng.hpp"
#include "host/h5.hpp"
#include "host/provenance.hpp"
#include "host/signals.hpp"
#include "host/population.hpp"
#include "host/text.hpp"
#include "psa/config.hpp"
#include "psa/names.hpp"

#ifndef COSMIC_VERSION
#define COSMIC_VERSION "0.0.0"
#endif

namespace cosmic {

namespace {

// 2: every group has a dimension (xarray opens it without phony dimensions): /evaluated's new
// column `evaluation`, /generations' `generation`, /best's `gene`. --resume continues format 2
// files only (format 1 lacks the columns a resumed session would have to append to).
constexpr int64_t kSearchFormatVersion = 2;
const double kInf = std::numeric_limits<double>::infinity();

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// What the loop keeps across generations: best point, counts, Pareto archive.
struct State {
  int32_t ngenes = 0, nobj = 1;
  uint64_t generations = 0, evaluations = 0, feasible = 0;
  // Seconds, cumulative over sessions. eval_s, agent_s and write_s are disjoint stretches of the
  // search loop's thread, so they add up to at most wall_s; writer_s is the background writer's
  // busy time, which overlaps them.
  double wall_s = 0, eval_s = 0, agent_s = 0, write_s = 0, writer_s = 0;
  bool have_best = false;
  std::vector<int32_t> best_genome;
  agents::Scores best;  // 1 row
  uint64_t best_at = 0;  // evaluation count when found
  std::vector<double> best_metrics;
  // Pareto archive (nobj >= 2): feasible non-dominated points, one per objective vector.
  std::vector<int32_t> arch_genes;  // row-major
  std::vector<double> arch_obj;     // row-major
  std::vector<uint64_t> arch_eval;  // evaluation number
  std::vector<double> arch_metrics;  // row-major, kPopMetrics a point (time_s, ...)
};

void update_archive(State& st, const agents::Population& pop, const agents::Scores& s, const PopulationMetrics& m,
                    uint64_t first_eval) {
  const size_t na = st.arch_eval.size();
  std::vector<size_t> cand;
  for (size_t i = 0; i < s.size; ++i)
    if (s.feasible(i)) cand.push_back(i);
  if (cand.empty()) return;
  const size_t n = na + cand.size();
  std::vector<double> cols(size_t(st.nobj) * n);
  for (int32_t j = 0; j < st.nobj; ++j) {
    for (size_t k = 0; k < na; ++k) cols[size_t(j) * n + k] = st.arch_obj[k * size_t(st.nobj) + size_t(j)];
    for (size_t k = 0; k < cand.size(); ++k) cols[size_t(j) * n + na + k] = s.at(cand[k], j);
  }
  const std::vector<int32_t> rank = agents::nondominated_sort(cols.data(), n, st.nobj, n);
  // Of points with equal objectives the earliest stays (the archive's come first: older): the
  // front sorted by its vectors, stably, marks every later one of a run of equals.
  std::vector<size_t> front;
  for (size_t k = 0; k < n; ++k)
    if (rank[k] == 0) front.push_back(k);
  const auto obj = [&](size_t k, int32_t j) { return cols[size_t(j) * n + k]; };
  const auto less = [&](size_t a, size_t b) {
    for (int32_t j = 0; j < st.nobj; ++j)
      if (obj(a, j) != obj(b, j)) return obj(a, j) < obj(b, j);
    return false;
  };
  std::vector<size_t> by_value = front;
  std::stable_sort(by_value.begin(), by_value.end(), less);
  std::vector<char> repeated(n, 0);
  for (size_t q = 1; q < by_value.size(); ++q)
    if (!less(by_value[q - 1], by_value[q])) repeated[by_value[q]] = 1;
  std::vector<int32_t> genes;
  std::vector<double> objs, metrics;
  std::vector<uint64_t> evals;
  for (size_t k : front) {
    if (repeated[k]) continue;
    for (int32_t j = 0; j < st.nobj; ++j) objs.push_back(obj(k, j));
    if (k < na) {
      genes.insert(genes.end(), st.arch_genes.begin() + ptrdiff_t(k * size_t(st.ngenes)),
                   st.arch_genes.begin() + ptrdiff_t((k + 1) * size_t(st.ngenes)));
      evals.push_back(st.arch_eval[k]);
      metrics.insert(metrics.end(), st.arch_metrics.begin() + ptrdiff_t(k * kPopMetrics),
                     st.arch_metrics.begin() + ptrdiff_t((k + 1) * kPopMetrics));
    } else {
      const size_t i = cand[k - na];
      for (int32_t g = 0; g < st.ngenes; ++g) genes.push_back(pop.at(i, g));
      evals.push_back(first_eval + i);
      for (int q = 0; q < kPopMetrics; ++q) metrics.push_back(m.metric(q)[i]);
    }
  }
  st.arch_genes.swap(genes);
  st.arch_obj.swap(objs);
  st.arch_eval.swap(evals);
  st.arch_metrics.swap(metrics);
}

// Whether point a of s is a better best than point b of t: the feasibility rules on objective 0
// (agents::better), and of feasible points equal in it the lower of the other objectives in
// order, as a sweep's top list ranks them (the cheapest of the fastest); else the earlier stays.
bool better_best(const agents::Scores& s, size_t a, const agents::Scores& t, size_t b) {
  if (agents::better(s, a, t, b, 0)) return true;
  if (agents::better(t, b, s, a, 0) || !s.feasible(a)) return false;
  for (int32_t j = 1; j < s.nobj; ++j)
    if (s.at(a, j) != t.at(b, j)) return s.at(a, j) < t.at(b, j);
  return false;
}

// Folds one evaluated generation into the state; returns its infeasible count.
uint64_t record(State& st, const agents::Population& pop, const agents::Scores& s, const PopulationMetrics& m) {
  uint64_t infeasible = 0;
  size_t gbest = s.size;
  for (size_t i = 0; i < s.size; ++i) {
    if (!s.feasible(i)) ++infeasible;
    if (gbest == s.size || better_best(s, i, s, gbest)) gbest = i;
  }
  if (gbest < s.size && (!st.have_best || better_best(s, gbest, st.best, 0))) {
    st.have_best = true;
    st.best.resize(s.nobj, 1);
    for (int32_t j = 0; j < s.nobj; ++j) st.best.obj[size_t(j)] = s.at(gbest, j);
    st.best.violation[0] = s.violation[gbest];
    st.best.reason[0] = s.reason[gbest];
    st.best_genome.resize(size_t(pop.ngenes));
    for (int32_t g = 0; g < pop.ngenes; ++g) st.best_genome[size_t(g)] = pop.at(gbest, g);
    st.best_at = st.evaluations + gbest + 1;
    st.best_metrics.assign(size_t(kPopMetrics), 0.0);
    for (int k = 0; k < kPopMetrics; ++k) st.best_metrics[size_t(k)] = m.metric(k)[gbest];
  }
  if (st.nobj >= 2) update_archive(st, pop, s, m, st.evaluations);
  st.evaluations += s.size;
  st.feasible += s.size - infeasible;
  st.generations++;
  return infeasible;
}

// The first n genomes of `pop`: pop itself when n is its size, else copied into `part`.
const agents::Population& first_genomes(const agents::Population& pop, size_t n, agents::Population& part) {
  if (n == pop.size) return pop;
  part.resize(pop.ngenes, n);
  for (int32_t g = 0; g < pop.ngenes; ++g)
    for (size_t i = 0; i < n; ++i) part.at(i, g) = pop.at(i, g);
  return part;
}

double best_value(const State& st) { return st.have_best && st.best.feasible(0) ? st.best.obj[0] : kInf; }

// /evaluated: 16,384-row chunks, deflate level 1; the byte shuffle for the gene columns (small
// integers: their high bytes gather into runs of zeros) and the evaluation numbers (rising by
// one: all but the low bytes run), not for the others. An agent's
// population repeats whole values (converged genomes, infeasible rows), which deflate alone
// matches as 8-byte strings and the shuffle would cut up. On the study's files this compresses
// 2-3.6x faster than shuffle + level 4 for all, into 3-49% fewer bytes. /generations (one row per
// generation): small uncompressed chunks, rewritten in place.
constexpr size_t kChunkRows = 16384;
const h5::ColumnFormat kGeneFormat{kChunkRows, 1, true}, kEvaluatedFormat{kChunkRows, 1, false};
const h5::ColumnFormat kGenerationsFormat{1024, 0, false};

// Which evaluated points /evaluated holds (--keep): every one, the feasible ones, or none (the
// run then keeps /generations, /best and /pareto only).
enum class KeepEvaluated { All, Feasible, None };

// Whether `keep` writes row i of a scored generation to /evaluated.
bool keeps(KeepEvaluated keep, const agents::Scores& s, size_t i) {
  return keep == KeepEvaluated::All || (keep == KeepEvaluated::Feasible && s.feasible(i));
}

// `what`: where the value came from, for the error ("search: --keep", or a resumed file's attribute).
KeepEvaluated parse_keep(const std::string& k, const std::string& what) {
  if (k == "all") return KeepEvaluated::All;
  if (k == "feasible") return KeepEvaluated::Feasible;
  if (k == "none") return KeepEvaluated::None;
  throw std::runtime_error(what + " expects all, feasible or none, got '" + k + "'");
}

// The columns of /generations, and of /evaluated in the order Pending::write appends them.
const char* const kGenerationColumns[] = {"generation", "best_objective",  "evaluations", "wall_s", "size",
                                          "infeasible", "generation_best", "agent_s",     "eval_s"};

std::vector<std::string> evaluated_columns(const psa::DesignSpace& ds) {
  std::vector<std::string> names;
  for (const auto& g : ds.genes) names.push_back(g.name);
  for (Objective o : ds.objectives) names.push_back(psa::objective_name(o));
  names.insert(names.end(), {"violation", "reason"});
  names.insert(names.end(), kPopMetricNames, kPopMetricNames + kPopMetrics);
  names.push_back("generation");
  names.push_back("evaluation");
  return names;
}

// Cuts every column of the group `name`, if there is one, to at most `rows` rows.
void cut_columns(hid_t file, const char* name, uint64_t rows) {
  if (!h5::exists(file, name)) return;
  h5::Handle g = h5::group(file, name, false);
  for (const auto& c : h5::member_names(g.id()))
    if (h5::column_size(g.id(), c) > rows) h5::resize_column(g.id(), c, size_t(rows));
}

// Rows of /evaluated in the file.
size_t evaluated_size(hid_t file) {
  if (!h5::exists(file, "evaluated")) return 0;
  h5::Handle ev = h5::group(file, "evaluated", false);
  return h5::column_size(ev.id(), "violation");
}

// Rows of /evaluated and of /generations not yet written. Appending to compressed columns costs
// about a chunk's compression per call, and appending to a partly filled compressed chunk moves
// it in the file (a kill before the next flush can then leave it unreadable; host/h5.hpp). So
// rows are gathered and written in whole chunks of /evaluated (take_front), each with the
// /generations rows of the generations it completes; only when nothing filled a chunk for
// `flush_s` seconds, and when the run stops, is everything written. After each write the file
// holds whole generations: /generations never counts rows that /evaluated lacks, except in a
// resumed session until the rows it writes again are written (see the replay in run_search).
template <class T>
struct IsGroup : std::false_type {};
template <class T>
struct IsGroup<std::vector<std::vector<T>>> : std::true_type {};
template <class C>  // a group of columns (Pending::zip)
constexpr bool kIsGroup = IsGroup<std::decay_t<C>>::value;

struct Pending {
  // /evaluated columns
  std::vector<std::vector<int16_t>> genes;
  std::vector<std::vector<double>> obj, metrics;
  std::vector<double> violation;
  std::vector<int32_t> reason;
  std::vector<int64_t> generation;
  std::vector<uint64_t> evaluation;  // 0-based evaluation number of each row
  // /generations columns (`generation`, the row number, is written from the rows in the file)
  std::vector<double> best, wall, gen_best, agent_s, eval_s;
  std::vector<uint64_t> evals, size, infeasible;
  std::vector<uint64_t> row_end;  // rows of /evaluated in the file once each generation is written
  // A batch of its own (no rows): a checkpoint to write after the batches before it
  // (checkpoint_bytes).
  std::vector<int8_t> checkpoint;

  // Calls rows(a.c, b.c) for each /evaluated column c of a and b (genes, obj and metrics are
  // groups: vectors of columns) and gens(a.c, b.c) for each /generations column, in the order
  // of a checkpoint's bytes.
  template <class A, class B, class Rows, class Gens>
  static void zip(A& a, B& b, Rows rows, Gens gens) {
    rows(a.obj, b.obj), rows(a.metrics, b.metrics), rows(a.genes, b.genes);
    rows(a.violation, b.violation), rows(a.reason, b.reason), rows(a.generation, b.generation);
    rows(a.evaluation, b.evaluation);
    gens(a.best, b.best), gens(a.wall, b.wall), gens(a.gen_best, b.gen_best), gens(a.agent_s, b.agent_s);
    gens(a.eval_s, b.eval_s), gens(a.evals, b.evals), gens(a.size, b.size), gens(a.infeasible, b.infeasible);
    gens(a.row_end, b.row_end);
  }

  void save(agents::StateWriter& w) const {
    const auto put = [&](const auto& c, const auto&) {
      if constexpr (kIsGroup<decltype(c)>) {
        w.put(uint64_t(c.size()));
        for (const auto& col : c) w.put(col);
      } else {
        w.put(c);
      }
    };
    zip(*this, *this, put, put);
  }
  void load(agents::StateReader& r) {
    const auto get = [&](auto& c, const auto&) {
      if constexpr (kIsGroup<decltype(c)>) {
        c.resize(size_t(r.get<uint64_t>()));
        for (auto& col : c) r.get(col);
      } else {
        r.get(c);
      }
    };
    zip(*this, *this, get, get);
  }

  // The rows of one generation that `keep` keeps: all, the feasible ones, or none. Its first
  // genome is evaluation number `first_evaluation` (0-based).
  void add(const agents::Population& pop, const agents::Scores& s, const PopulationMetrics& m, uint64_t gen,
           KeepEvaluated keep, uint64_t rows_before, uint64_t first_evaluation) {
    const bool all = keep == KeepEvaluated::All;
    std::vector<size_t> pick;  // the rows kept, when not all
    for (size_t i = 0; i < s.size && !all; ++i)
      if (keeps(keep, s, i)) pick.push_back(i);
    const size_t n = all ? pop.size : pick.size();
    row_end.push_back(rows_before + n);
    if (n == 0) return;
    const auto append = [&](auto& col, const auto* from) {
      const size_t at = col.size();
      col.resize(at + n);
      for (size_t k = 0; k < n; ++k) col[at + k] = std::remove_reference_t<decltype(col[0])>(from[all ? k : pick[k]]);
    };
    genes.resize(size_t(pop.ngenes));
    obj.resize(size_t(s.nobj));
    metrics.resize(kPopMetrics);
    for (int32_t g = 0; g < pop.ngenes; ++g) append(genes[size_t(g)], &pop.genes[size_t(g) * pop.size]);
    for (int32_t j = 0; j < s.nobj; ++j) append(obj[size_t(j)], &s.obj[size_t(j) * s.size]);
    for (int k = 0; k < kPopMetrics; ++k) append(metrics[size_t(k)], m.metric(k));
    append(violation, s.violation.data());
    append(reason, s.reason.data());
    generation.insert(generation.end(), n, int64_t(gen));
    for (size_t k = 0; k < n; ++k) evaluation.push_back(first_evaluation + (all ? k : pick[k]));
  }
  size_t rows() const { return violation.size(); }

  // Appends o's rows and generations after these.
  void append(const Pending& o) {
    const auto cat = [](auto& to, const auto& from) {
      if constexpr (kIsGroup<decltype(to)>) {
        if (to.size() < from.size()) to.resize(from.size());
        for (size_t c = 0; c < from.size(); ++c) to[c].insert(to[c].end(), from[c].begin(), from[c].end());
      } else {
        to.insert(to.end(), from.begin(), from.end());
      }
    };
    zip(*this, o, cat, cat);
  }

  // Moves the first `n` rows of /evaluated and the first `gens` rows of /generations out.
  Pending take_front(size_t n, size_t gens) {
    Pending h;
    if (n == rows() && gens == evals.size()) {
      std::swap(h, *this);
      return h;
    }
    const auto cut = [](size_t k) {
      return [k](auto& from, auto& to) {
        if constexpr (kIsGroup<decltype(from)>) {
          for (auto& c : from) to.push_back(h5::cut_front(c, k));
        } else {
          to = h5::cut_front(from, k);
        }
      };
    };
    zip(*this, h, cut(n), cut(gens));
    return h;
  }

  // Appends the rows, sets the root counters and flushes the file, in three steps, each flushed
  // before the next starts: the rows of /evaluated; evaluated_rows, counting them; the rows of
  // /generations (the generations these rows complete) with the counters generations and
  // evaluated_count. A kill inside a flush can leave what that flush writes unreadable, so each
  // counter is written only once what it counts is on disk: readers of a killed file take the
  // first evaluated_rows rows of /evaluated, and every generation /generations lists has its
  // rows among them. write_final sets the whole count.
  void write(hid_t file, const psa::DesignSpace& ds) const {
    if (rows() > 0) {
      const h5::ColumnFormat& f = kEvaluatedFormat;
      h5::Handle ev = h5::group(file, "evaluated", true);
      const std::vector<std::string> names = evaluated_columns(ds);
      size_t c = 0;
      std::vector<h5::ColumnRows> cols;  // compressed on the OpenMP threads (h5::append_columns)
      for (size_t g = 0; g < genes.size(); ++g) cols.push_back(h5::column_rows(names[c++], genes[g], kGeneFormat));
      for (size_t j = 0; j < obj.size(); ++j) cols.push_back(h5::column_rows(names[c++], obj[j], f));
      cols.push_back(h5::column_rows(names[c++], violation, f));
      cols.push_back(h5::column_rows(names[c++], reason, f));
      for (int k = 0; k < kPopMetrics; ++k) cols.push_back(h5::column_rows(names[c++], metrics[size_t(k)], f));
      cols.push_back(h5::column_rows(names[c++], generation, f));
      cols.push_back(h5::column_rows(names[c++], evaluation, kGeneFormat));
      h5::append_columns(ev.id(), cols);
      h5::set_dimension(ev.id(), "evaluation");  // a row per evaluation kept
      h5::flush(file);
    }
    h5::set_attr(file, "evaluated_rows", uint64_t(evaluated_size(file)));
    if (rows() > 0) h5::flush(file);
    if (!evals.empty()) {
      const h5::ColumnFormat& f = kGenerationsFormat;
      h5::Handle g = h5::group(file, "generations", true);  // last: it says which generations are whole
      std::vector<int64_t> number(evals.size());  // these generations' numbers, after those in the file
      std::iota(number.begin(), number.end(), int64_t(h5::exists(g.id(), "generation") ? h5::column_size(g.id(), "generation") : 0));
      h5::append_column(g.id(), "generation", number, f);
      h5::append_column(g.id(), "best_objective", best, f);
      h5::append_column(g.id(), "evaluations", evals, f);
      h5::append_column(g.id(), "wall_s", wall, f);
      h5::append_column(g.id(), "size", size, f);
      h5::append_column(g.id(), "infeasible", infeasible, f);
      h5::append_column(g.id(), "generation_best", gen_best, f);
      h5::append_column(g.id(), "agent_s", agent_s, f);
      h5::append_column(g.id(), "eval_s", eval_s, f);
      h5::set_dimension(g.id(), "generation");  // a row per generation
      // The curves are objective 0's values, in its units (the columns are named for what they
      // hold, not for the objective, so h5::column_units does not know them).
      for (const char* c : {"best_objective", "generation_best"}) {
        h5::Handle d = h5::dataset(g.id(), c);
        if (!h5::has_attr(d.id(), "units")) h5::set_attr(d.id(), "units", std::string(psa::objective_units(ds.objectives[0])));
      }
      h5::set_attr(file, "generations", uint64_t(h5::column_size(g.id(), "evaluations")));
      h5::set_attr(file, "evaluated_count", evals.back());
    }
    h5::flush(file);
    if (!checkpoint.empty()) write_checkpoint(file);
  }

  // Into the slot /checkpoint does not name, flushed, and only then named: a kill while it is
  // written leaves the one before. Uncompressed and written over in place, so that the file
  // does not grow by a checkpoint each session (space freed in one session is lost to the next).
  void write_checkpoint(hid_t file) const {
    h5::Handle g = h5::group(file, "checkpoint", true);
    const std::string slot = h5::has_attr(g.id(), "current") && h5::attr_string(g.id(), "current") == "0" ? "1" : "0";
    h5::overwrite_column(g.id(), slot, checkpoint, h5::ColumnFormat{size_t(1) << 20, 0, false});
    h5::make_scale(g.id(), slot);  // a dimension of its own (the slots' lengths differ)
    h5::flush(file);
    h5::set_attr(g.id(), "current", slot);
    h5::flush(file);
  }
};

// Writes batches of pending rows on a thread of its own, so that compressing and writing them
// overlaps the next generations' agent and evaluator work. At most two batches wait: memory
// stays bounded, and when writing is slower than searching the loop waits in push(). While the
// writer runs no other thread calls HDF5: one thread uses the file at a time, so its state stays
// simple and the library's global lock (thread-safe builds serialize every call) is never
// contended. The loop takes the file back by calling finish() before it writes anything itself.
// Batches are written in order, so the file's contents do not depend on how rows were split.
class Writer {
 public:
  Writer(hid_t file, const psa::DesignSpace& ds) : file_(file), ds_(ds), thread_([this] { loop(); }) {}
  ~Writer() {
    try {
      finish();
    } catch (...) {  // an error already being handled, or one nobody asked about
    }
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Queues a batch, waiting while two are queued; rethrows the writer's error, if any.
  void push(Pending&& p) {
    std::unique_lock<std::mutex> lock(mu_);
    room_.wait(lock, [&] { return queue_.size() < 2 || error_; });
    if (error_) std::rethrow_exception(error_);
    queue_.push_back(std::move(p));
    work_.notify_one();
  }

  // Writes what is queued, stops the thread and rethrows the writer's error, if any.
  void finish() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    work_.notify_one();
    if (thread_.joinable()) thread_.join();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

  double busy_s() const { return busy_s_; }     // after finish()
  uint64_t batches() const { return batches_; }  // batches written, after finish()

 private:
  void loop() {
    h5::quiet();
    sigset_t stop;  // SIGINT and SIGTERM go to the search loop, which checks for them
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    for (;;) {
      Pending p;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_.wait(lock, [&] { return !queue_.empty() || done_; });
        if (queue_.empty()) return;
        p = std::move(queue_.front());
        queue_.pop_front();
      }
      room_.notify_one();
      const double t0 = now_s();
      try {
        p.write(file_, ds_);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu_);
        error_ = std::current_exception();
        queue_.clear();
        room_.notify_one();
        return;
      }
      busy_s_ += now_s() - t0;
      if (p.checkpoint.empty()) ++batches_;  // batches of rows
    }
  }

  hid_t file_;
  const psa::DesignSpace& ds_;
  std::mutex mu_;
  std::condition_variable work_, room_;
  std::deque<Pending> queue_;
  bool done_ = false;
  std::exception_ptr error_;
  double busy_s_ = 0;
  uint64_t batches_ = 0;
  std::thread thread_;  // last: it starts running in the constructor
};

// A checkpoint of the search loop after a generation told to the agent: the loop's State, the
// rows and generations not yet handed to the writer (Pending), the rows handed (a whole number
// of /evaluated's chunks) and the agent's state, as bytes in /checkpoint (two slots, the
// attribute `current` naming the last one written). --resume starts from the last checkpoint
// whose generations the file holds, instead of running every generation before it again, and
// runs those after it again as before. A checkpoint holds the cosmic version and model revision
// that wrote it, and one of another version, revision or layout (kCheckpointFormat, to be raised
// with any change to what an agent saves) is not used: the generations are run again instead.
// Its last 8 bytes are the FNV-1a hash of the others: a checkpoint changed since it was written
// (a damaged disk, a byte edited) is not used either, where its rows and genomes were taken as
// they read (an out-of-range gene, a NaN objective).
constexpr uint32_t kCheckpointFormat = 4;  // 2: the Pareto archive's metrics; 3: rows' evaluation numbers; 4: the hash

struct Checkpoint {
  State st;
  Pending pending;
  uint64_t written = 0;
};

std::vector<int8_t> checkpoint_bytes(const State& st, const Pending& pending, uint64_t written, const agents::Agent& agent) {
  agents::StateWriter w;
  w.put(kCheckpointFormat);
  w.put(int64_t(kModelRevision));
  const std::string version = COSMIC_VERSION;
  w.put(std::vector<char>(version.begin(), version.end()));
  w.put(st.generations), w.put(st.evaluations), w.put(st.feasible);
  w.put(uint8_t(st.have_best));
  w.put(st.best_genome);
  st.best.save(w);
  w.put(st.best_at);
  w.put(st.best_metrics);
  w.put(st.arch_genes), w.put(st.arch_obj), w.put(st.arch_eval), w.put(st.arch_metrics);
  w.put(written);
  pending.save(w);
  agent.save(w);
  const uint64_t hash = agents::fnv1a(w.bytes().data(), w.bytes().size());
  w.put(hash);
  std::vector<int8_t> bytes(w.bytes().size());
  std::memcpy(bytes.data(), w.bytes().data(), bytes.size());
  return bytes;
}

// Reads the checkpoint of /checkpoint's `slot` ("current" or "other") into `cp` and `agent`, and
// the dataset's name into `used`; false where there is none, it is another version's, or it does
// not read (the agent may then be half loaded: the caller makes a new one).
bool read_checkpoint(hid_t file, const char* slot, const State& like, Checkpoint& cp, agents::Agent& agent,
                     std::string& used) {
  try {
    if (!h5::exists(file, "checkpoint")) return false;
    h5::Handle g = h5::group(file, "checkpoint", false);
    if (!h5::has_attr(g.id(), "current")) return false;
    std::string name = h5::attr_string(g.id(), "current");
    if (std::string(slot) == "other") name = name == "0" ? "1" : "0";
    if (!h5::exists(g.id(), name)) return false;
    used = name;
    const std::vector<int8_t> bytes = h5::read_column<int8_t>(g.id(), name);
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
    uint64_t hash = 0;
    if (bytes.size() < sizeof hash) return false;
    const size_t n = bytes.size() - sizeof hash;
    std::memcpy(&hash, data + n, sizeof hash);
    if (hash != agents::fnv1a(data, n)) return false;
    agents::StateReader r(data, n);
    std::vector<char> version;
    if (r.get<uint32_t>() != kCheckpointFormat || r.get<int64_t>() != kModelRevision) return false;
    r.get(version);
    if (std::string(version.begin(), version.end()) != COSMIC_VERSION) return false;
    cp.st.ngenes = like.ngenes;
    cp.st.nobj = like.nobj;
    r.get(cp.st.generations), r.get(cp.st.evaluations), r.get(cp.st.feasible);
    cp.st.have_best = r.get<uint8_t>() != 0;
    r.get(cp.st.best_genome);
    cp.st.best.load(r);
    r.get(cp.st.best_at);
    r.get(cp.st.best_metrics);
    r.get(cp.st.arch_genes), r.get(cp.st.arch_obj), r.get(cp.st.arch_eval), r.get(cp.st.arch_metrics);
    if (cp.st.arch_metrics.size() != cp.st.arch_eval.size() * kPopMetrics) return false;
    r.get(cp.written);
    cp.pending.load(r);
    agent.load(r);
    r.finish();
  } catch (const std::exception&) {  // a damaged checkpoint: the generations are run again instead
    return false;
  }
  return true;
}

// /best (decoded) and /pareto; root counters.
void write_final(hid_t file, const psa::DesignSpace& ds, const State& st, const std::string& stopped, bool complete) {
  if (st.have_best) {
    h5::Handle b = h5::group(file, "best", true);
    std::vector<std::string> names, labels;
    std::vector<int32_t> genome;
    for (size_t g = 0; g < ds.genes.size(); ++g) {
      names.push_back(ds.genes[g].name);
      const int32_t v = st.best_genome[g];
      labels.push_back(size_t(v) < ds.genes[g].labels.size() ? ds.genes[g].labels[size_t(v)] : std::to_string(v));
      genome.push_back(v);
    }
    h5::write_strings(b.id(), "gene", names);
    h5::write_strings(b.id(), "value", labels);
    h5::write_column(b.id(), "index", genome);
    h5::set_dimension(b.id(), "gene");  // a row per gene (index: the value's, not a point's)
    // Each value with its units in an attribute named after it: latency and latency_units.
    for (int32_t j = 0; j < st.nobj; ++j) {
      const std::string name = psa::objective_name(ds.objectives[size_t(j)]);
      h5::set_attr(b.id(), name, st.best.obj[size_t(j)]);
      h5::set_attr(b.id(), name + "_units", std::string(psa::objective_units(ds.objectives[size_t(j)])));
    }
    for (int k = 0; k < kPopMetrics; ++k) {
      h5::set_attr(b.id(), kPopMetricNames[k], st.best_metrics[size_t(k)]);
      if (const char* units = column_units(kPopMetricNames[k]))
        h5::set_attr(b.id(), std::string(kPopMetricNames[k]) + "_units", std::string(units));
    }
    h5::set_attr(b.id(), "feasible", int64_t(st.best.feasible(0) ? 1 : 0));
    h5::set_attr(b.id(), "violation", st.best.violation[0]);
    h5::set_attr(b.id(), "reason", int64_t(st.best.reason[0]));
    h5::set_attr(b.id(), "found_at_evaluation", st.best_at);
    h5::set_attr(b.id(), "space_index", psa::to_string_u128(rank(*ds.view, genome.data())));
  }
  if (st.nobj >= 2) {
    h5::Handle p = h5::group(file, "pareto", true);
    const size_t n = st.arch_eval.size();
    // Rows by the first objective (then the others), as a sweep's front: the archive keeps
    // them in the order it found them. Objective vectors are distinct, so the order is total.
    std::vector<size_t> row(n);
    for (size_t i = 0; i < n; ++i) row[i] = i;
    const auto obj = [&](size_t i, int32_t j) { return st.arch_obj[i * size_t(st.nobj) + size_t(j)]; };
    std::sort(row.begin(), row.end(), [&](size_t a, size_t b) {
      for (int32_t j = 0; j < st.nobj; ++j)
        if (obj(a, j) != obj(b, j)) return obj(a, j) < obj(b, j);
      return a < b;
    });
    for (int32_t g = 0; g < st.ngenes; ++g) {
      std::vector<int16_t> col(n);
      for (size_t i = 0; i < n; ++i) col[i] = int16_t(st.arch_genes[row[i] * size_t(st.ngenes) + size_t(g)]);
      h5::write_column(p.id(), ds.genes[size_t(g)].name, col);
    }
    for (int32_t j = 0; j < st.nobj; ++j) {
      std::vector<double> col(n);
      for (size_t i = 0; i < n; ++i) col[i] = obj(row[i], j);
      h5::write_column(p.id(), psa::objective_name(ds.objectives[size_t(j)]), col);
    }
    for (int q = 0; q < kPopMetrics; ++q) {  // the model's metrics of each point, as a sweep's front has them
      std::vector<double> col(n);
      for (size_t i = 0; i < n; ++i) col[i] = st.arch_metrics[row[i] * kPopMetrics + size_t(q)];
      h5::write_column(p.id(), kPopMetricNames[q], col);
    }
    std::vector<uint64_t> evaluation(n);
    for (size_t i = 0; i < n; ++i) evaluation[i] = st.arch_eval[row[i]];
    h5::write_column(p.id(), "evaluation", evaluation);
    std::vector<uint64_t> lo(n), hi(n);  // the points' indices in the space, as a sweep's tables have them
    for (size_t i = 0; i < n; ++i) {
      const u128 index = rank(*ds.view, &st.arch_genes[row[i] * size_t(st.ngenes)]);
      lo[i] = uint64_t(index);
      hi[i] = uint64_t(index >> 64);
    }
    h5::write_column(p.id(), "index", lo);
    h5::write_column(p.id(), "index_hi", hi);
    h5::set_dimension(p.id(), "index");  // a row per point, as a sweep's tables
  }
  h5::set_attr(file, "generations", st.generations);
  h5::set_attr(file, "evaluated_count", st.evaluations);
  h5::set_attr(file, "evaluated_rows", uint64_t(evaluated_size(file)));
  h5::set_attr(file, "feasible_count", st.feasible);
  h5::set_attr(file, "best_objective", best_value(st));
  h5::set_attr(file, "stopped", stopped);
  h5::set_attr(file, "complete", int64_t(complete ? 1 : 0));
}

// /reasons: the codes of /evaluated's `reason` column with their names, as a sweep's /reasons
// (which counts them too).
void write_reasons(hid_t file) {
  h5::Handle g = h5::group(file, "reasons", true);
  std::vector<int32_t> code;
  std::vector<std::string> name;
  reason_codes(code, name);
  h5::write_column(g.id(), "code", code, h5::ColumnFormat{code.size(), 0, false});
  h5::write_strings(g.id(), "name", name);
  h5::set_dimension(g.id(), "code");
}

// Wall time and where it went (docs/results-format.md).
void write_times(hid_t file, const State& st) {
  h5::set_attr(file, "wall_time_s", st.wall_s);
  h5::set_attr(file, "configs_per_s", st.wall_s > 0 ? double(st.evaluations) / st.wall_s : 0.0);
  h5::set_attr(file, "eval_s", st.eval_s);
  h5::set_attr(file, "agent_s", st.agent_s);
  h5::set_attr(file, "write_s", st.write_s);
  h5::set_attr(file, "writer_s", st.writer_s);
}

std::vector<int32_t> cardinalities(const SpaceView& v) {
  std::vector<int32_t> c;
  for (int32_t g = 0; g < v.ngenes; ++g) c.push_back(v.gene[g].card);
  return c;
}

}  // namespace

agents::Params psa_agent_params(const psa::DesignSpace& ds, const std::string& agent, const agents::Params& given) {
  agents::Params mine = given;
  for (const auto& sec : ds.agent_sections) {
    agents::Params params = sec.params;
    if (sec.name == agent)
      for (const auto& [k, v] : given) params[k] = v;
    try {
      agents::check_params(sec.name, params);
    } catch (const agents::ParamError& e) {
      // "key: what is wrong": a value from the command line is the command line's error; one
      // from the file is named where the file wrote the key (or the agent).
      const std::string msg = e.what(), key = msg.substr(0, msg.find(':'));
      if (sec.name == agent && given.count(key)) throw;
      const auto at = sec.where_of.find(key);
      throw psa::ConfigError((at != sec.where_of.end() ? at->second : sec.where) + ": agent: " + msg);
    }
    if (sec.name == agent) mine = params;
  }
  return mine;
}

namespace {
// The best so far for progress lines: "none feasible" until a feasible point is found (not "inf").
std::string best_text(double best) { return std::isfinite(best) ? fmt_g(best) : "none feasible"; }
}  // namespace

size_t listed_generations(hid_t file) {
  if (!h5::exists(file, "generations")) return 0;
  h5::Handle g = h5::group(file, "generations", false);
  const bool numbered = h5::has_attr(file, "format_version") && h5::attr_int(file, "format_version") >= 2;
  size_t n = SIZE_MAX;
  for (const char* c : kGenerationColumns)
    if (numbered || std::string(c) != "generation") n = std::min(n, h5::exists(g.id(), c) ? h5::column_size(g.id(), c) : 0);
  return n;
}

// The population a search runs with: one asked for, cut to the budget; the default of a
// generational agent (GA, NSGA-II, ACO), cut to a tenth of the budget, so that a small budget
// still runs ten generations instead of one of random genomes.
bool generational(const std::string& agent) { return agent == "ga" || agent == "nsga2" || agent == "aco"; }

agents::Params budget_params(const std::string& agent, agents::Params params, uint64_t budget) {
  const uint64_t least = agent == "ga" || agent == "nsga2" ? 2 : 1;  // they pair parents
  const bool asked = params.count(agent + ".population") > 0;
  const uint64_t most = std::max<uint64_t>(generational(agent) && !asked ? budget / 10 : budget, least);
  if (uint64_t(agents::check_params(agent, params)) > most) params[agent + ".population"] = std::to_string(most);
  return params;
}

// What a search holds in memory, bytes, for a population of P on `ngenes` genes: the resident
// size per individual measured on the 2-core machine (2026-12-05: max RSS at populations 2 x 10^5
// and 10^6, three generations, on spaces of 12 and 35 genes; the slope between them, fitted as
// a + b genes) plus, with `--keep all`, three copies of a row of /evaluated waiting for the writer
// (2 bytes a gene, 8 an objective, 76 for the violation, reason, metrics, generation and
// evaluation; measured 470 bytes more with 35 genes). The CUDA evaluator's pinned host buffers
// add `pinned` bytes an individual (cuda_pinned_bytes). BO's population (at most 10^6) is taken
// as the GA's, and BO also keeps its whole history, every evaluation of the budget: 116 + 14
// bytes a gene each (measured as above at budgets 2 x 10^5 and 10^6, population 10^5: 594 bytes
// with 35 genes).
double search_bytes(const std::string& agent, size_t P, uint64_t budget, int32_t ngenes, int32_t nobj,
                    KeepEvaluated keep, double pinned) {
  const double g = ngenes, row = 2 * g + 8 * nobj + 76;
  const double per = agent == "rw" ? 70 + 4 * g : agent == "aco" ? 102 + 4 * g : agent == "nsga2" ? 260 + 12 * g : 162 + 8 * g;
  const double history = agent == "bo" ? double(budget) * (116 + 14 * g) : 0.0;
  return double(P) * (per + (keep == KeepEvaluated::None ? 0.0 : 3 * row) + pinned) + history;
}

// The CUDA evaluator's pinned host buffers, bytes an individual (host/population_cuda.cu): its
// genes (uint16), outputs (the objectives, the violation and kPopMetrics metrics, doubles) and
// reason (int32); breeding on the device adds a parent's record (16 bytes) and row and a child's
// row, one byte a gene where every gene has at most 256 values, else four.
double cuda_pinned_bytes(const std::vector<int32_t>& card, int32_t nobj, bool device_breeding) {
  const double g = double(card.size()), gene_bytes = agents::ParentRows::fits_in_bytes(card) ? 1 : 4;
  return 2 * g + 8.0 * (nobj + 1 + kPopMetrics) + 4 + (device_breeding ? 16 + 2 * gene_bytes * g : 0.0);
}

// A cgroup's memory limit on this process (v2's memory.max, v1's memory.limit_in_bytes, under
// the paths /proc/self/cgroup names: a batch job's or a container's), or +inf.
double cgroup_limit_bytes() {
  std::ifstream cgroups("/proc/self/cgroup");
  double limit = INFINITY;
  for (std::string line; std::getline(cgroups, line);) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",", path = line.substr(b + 1);
    const std::string file = controllers == ",," ? "/sys/fs/cgroup" + path + "/memory.max"
                             : controllers.find(",memory,") != std::string::npos
                                 ? "/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes"
                                 : "";
    std::ifstream f(file);
    double v = 0;
    if (!file.empty() && f >> v) limit = std::min(limit, v);  // "max" (no limit) does not read as a number
  }
  return limit;
}

// The memory a run may use, bytes: the machine's, or less under its cgroup or `ulimit -v`.
double memory_limit_bytes() {
  double bytes = std::min(double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE)), cgroup_limit_bytes());
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) bytes = std::min(bytes, double(as.rlim_cur));
  return bytes;
}

int run_search(const psa::DesignSpace& ds, const SearchOptions& o_in, SearchSummary* summary) {
  StopSignals signals;  // from the start: a signal while the file is made stops the run once it is
  SearchOptions o = o_in;
  const SpaceView& view = *ds.view;
  if (ds.objectives.empty()) throw std::runtime_error("search: the space names no objective");
  if (!o.resume) agents::check_params(o.agent, o.params);  // an unknown agent or bad value first, before notes on it
  if (ds.objectives.size() > 1 && o.agent != "nsga2" && !o.quiet && !o.resume)
    std::cerr << "search: " << o.agent << " optimises the first objective, " << psa::objective_name(ds.objectives[0])
              << ", alone (the file's Pareto front is of the points it evaluated); nsga2 searches for the front of all "
              << ds.objectives.size() << "\n";
  // A space the budget could sweep whole: the sweep is exact (docs/agents.md, Recommendations).
  if (!o.quiet && !o.resume && space_size(view) <= u128(o.budget))
    std::cerr << "search: note: the space holds " << psa::to_string_u128(space_size(view)) << " points, no more than the "
              << "budget: `cosmic sweep` scores every one and gives the exact optimum\n";
  const double t_session = now_s();

  h5::Handle file;
  State st;
  st.ngenes = view.ngenes;
  st.nobj = int32_t(ds.objectives.size());
  uint64_t replay_gens = 0;
  bool extend = false;  // --resume with a larger --budget
  uint64_t old_budget = 0;
  uint64_t population_asked = 0;  // a population the budget cut (recorded: a resume may name it again)
  if (o.resume) {
    file = h5::open_file(o.out, true);
    const hid_t f = file.id();
    if (h5::result_kind(f) != "search")
      throw std::runtime_error(o.out + ": not a cosmic search file");
    const int64_t version = h5::has_attr(f, "format_version") ? h5::attr_int(f, "format_version") : 0;
    if (version != kSearchFormatVersion)
      throw std::runtime_error(o.out + ": cannot resume: the file is in search format " + std::to_string(version) +
                               ", this cosmic writes format " + std::to_string(kSearchFormatVersion) +
                               " (docs/results-format.md); resume it with the cosmic that wrote it, or run the search "
                               "again without --resume");
    if (h5::attr_string(f, "psa") != ds.text)
      throw std::runtime_error(o.out + ": the PSA text differs from the one the search was started with");
    const std::string why = provenance_mismatch(read_provenance(f), ds);
    if (!why.empty()) throw std::runtime_error(o.out + ": cannot resume: " + why);
    const uint64_t recorded = h5::attr_uint(f, "budget");
    if (o_in.budget > 0 && o_in.budget < recorded)
      throw std::runtime_error(o.out + ": --budget " + std::to_string(o_in.budget) + " with --resume: the search's budget is " +
                               std::to_string(recorded) + "; a resume may raise it, not lower it");
    extend = o_in.budget > recorded;
    old_budget = recorded;
    if (h5::has_attr(f, "population_asked")) population_asked = h5::attr_uint(f, "population_asked");
    if (h5::attr_int(f, "complete") && !extend) {
      if (!o.quiet) std::cerr << "search: " << o.out << " is already complete (--budget N raises its budget)\n";
      if (summary) summary->stopped = "budget";
      return 0;
    }
    o.agent = h5::attr_string(f, "agent");
    o.seed = h5::attr_uint(f, "seed");
    o.budget = extend ? o_in.budget : recorded;
    o.keep = h5::has_attr(f, "keep") ? h5::attr_string(f, "keep") : "all";  // files before --keep kept all
    o.params = agents::params_from_text(h5::attr_string(f, "params"));  // older files may hold other agents' keys
    // /generations' columns are appended one after another: after a kill some may be shorter or
    // missing, and only the generations that all of them hold count.
    if (h5::exists(f, "generations")) {
      h5::Handle gg = h5::group(f, "generations", false);
      replay_gens = listed_generations(f);
      // A larger budget: the old budget's short last generation (asked in full, evaluated in part,
      // never told) is made again in full, as a search with the larger budget made it.
      if (extend && replay_gens > 0) {
        const auto evals = h5::read_column<uint64_t>(gg.id(), "evaluations");
        const uint64_t n_last = evals[replay_gens - 1] - (replay_gens > 1 ? evals[replay_gens - 2] : 0);
        if (n_last < h5::attr_uint(f, "population")) --replay_gens;
      }
    }
  }
  if (o.budget == 0) throw std::runtime_error("search: --budget must be at least 1");
  const KeepEvaluated keep = parse_keep(o.keep, o.resume ? o.out + ": the keep attribute" : "search: --keep");

  // A new search runs with the population cut to the budget, and records that one.
  if (!o.resume) {
    const agents::Params fitted = budget_params(o.agent, o.params, o.budget);
    if (fitted != o.params) population_asked = uint64_t(agents::check_params(o.agent, o.params));
    // A warning where the search is not the one asked for (--quiet keeps it); a note, which
    // --quiet silences, where a default population is cut: a random walk's (its draws the
    // population only batches) or a generational agent's, to a tenth (budget_params).
    const bool asked = o.params.count(o.agent + ".population") > 0;
    const bool tenth = !asked && generational(o.agent);
    const bool note = tenth || (!asked && o.agent == "rw");
    const uint64_t cut = fitted != o.params ? std::stoull(fitted.at(o.agent + ".population")) : 1;
    const uint64_t generations = (o.budget + cut - 1) / cut;
    if (fitted != o.params && (!o.quiet || !note))
      std::cerr << "search: " << (asked ? "population " : "the default population ")
                << agents::check_params(o.agent, o.params) << " is more than "
                << (tenth ? "a tenth of the budget: " : "the budget: ") << cut << " instead"
                << (cut > o.budget ? " (the least " + o.agent + " pairs parents with)" : "")
                << (tenth ? ", " + std::to_string(generations) + " generations"
                    : o.agent == "rw" || generations > 1 ? ""
                                                         : ", so the search is one generation of random genomes")
                << "\n";
    o.params = fitted;
  }
  const auto make = [&] { return agents::make_agent(o.agent, cardinalities(view), st.nobj, o.params, o.seed); };
  agents::MadeAgent made = make();
  const size_t P = made.population;
  std::unique_ptr<PopulationEvaluator> eval = make_population_evaluator(o.backend, view, ds.objectives);
  // A search the memory cannot hold is refused before its file is made (or resumed): past it the
  // kernel's OOM killer, or std::bad_alloc under `ulimit -v`, would end the run.
  // --breed device: GA's and NSGA-II's children made by the CUDA evaluator (the same children;
  // the other agents do not breed from parents).
  const bool device_breeding = o.breed == "device" && eval->name() == "cuda" && (o.agent == "ga" || o.agent == "nsga2");
  const double pinned = eval->name() == "cuda" ? cuda_pinned_bytes(cardinalities(view), st.nobj, device_breeding) : 0.0;
  const double need = search_bytes(o.agent, P, o.budget, view.ngenes, st.nobj, keep, pinned);
  const double have = memory_limit_bytes();
  if (need > have)
    throw std::runtime_error(
        "search: this search (" + o.agent + ", population " + std::to_string(P) +
        (o.agent == "bo" ? ", budget " + std::to_string(o.budget) : "") + ", " + std::to_string(view.ngenes) +
        " genes, --keep " + o.keep + ", " + eval->name() + ") needs about " + human(need) +
        "B of memory (docs/agents.md, \"Memory\"), more than the " + human(have) +
        "B this machine, its cgroup or `ulimit -v` allows: " +
        (o.resume ? "--resume keeps the file's population and --keep, so only more memory runs it"
                  : o.agent == "bo" ? std::string("a smaller --budget (BO keeps every evaluation) or --population")
                                    : std::string("a smaller --population") + (keep == KeepEvaluated::None ? "" : ", or --keep none")));

  if (!o.resume) {
    // Made as OUT.partial and renamed once its attributes are on disk, so that a file named OUT
    // is always one --resume can continue, even when the search was killed as it started.
    h5::NewFile created(o.out, "search");
    const hid_t f = created.id();
    write_run_header(f, "search", kSearchFormatVersion, ds.text, ds.file, ds);
    h5::set_attr(f, "agent", o.agent);
    h5::set_attr(f, "params", agents::params_text(o.params));
    agents::Params effective;
    agents::check_params(o.agent, o.params, &effective);
    h5::set_attr(f, "params_effective", agents::params_text(effective));
    h5::set_attr(f, "seed", o.seed);
    h5::set_attr(f, "population", uint64_t(P));
    if (population_asked) h5::set_attr(f, "population_asked", population_asked);
    h5::set_attr(f, "budget", o.budget);
    h5::set_attr(f, "keep", o.keep);
    std::vector<std::string> objs, names;
    for (Objective ob : ds.objectives) objs.push_back(psa::objective_name(ob));
    for (const auto& g : ds.genes) names.push_back(g.name);
    h5::set_attr(f, "objectives", objs);
    h5::set_attr(f, "gene_names", names);
    h5::set_attr(f, "index_space", index_space({}));  // a search runs over the PSA's whole space
    write_gene_labels(f, ds);
    write_reasons(f);
    h5::set_attr(f, "complete", int64_t(0));
    h5::flush(f);
    file = created.publish();
  }
  h5::set_attr(file.id(), "backend", eval->name());  // of the latest session
  h5::set_attr(file.id(), "device", eval->device());
  if (o.breed == "device" && eval->name() != "cuda" && !o.quiet)
    std::cerr << "search: note: --breed device needs the CUDA evaluator; breeding on the host\n";
  h5::set_attr(file.id(), "breeding", std::string(device_breeding ? "device" : "host"));

  agents::Population pop;
  pop.resize(view.ngenes, P);
  agents::Scores scores;
  PopulationMetrics metrics;

  // Replay of the stored generations through the fresh agent: each is asked for and evaluated
  // again (the evaluator is deterministic, and both backends give the same scores) and checked
  // against the file, so that a file of another version, agent or seed, or a damaged one, is
  // refused rather than continued: each generation's infeasible count and best-so-far against
  // /generations, and the genomes against the rows /evaluated keeps of it (all, the feasible
  // ones, or none: --keep).
  //
  // Only the whole 16,384-row chunks that every column of /evaluated holds are kept (and
  // checked); the replayed rows past them (a partly filled last chunk, or rows a kill left
  // missing) go to the writer again from the replay. So the session appends whole chunks, as a
  // fresh one does: appending to a partly filled compressed chunk would rewrite it elsewhere in
  // the file, and a kill before the next flush could leave it unreadable.
  Pending pending;
  uint64_t rows_in_file = 0;  // rows the replayed generations keep in /evaluated
  uint64_t kept_rows = 0;     // of them, those in whole chunks of the file
  bool last_told = false;     // the last generation was told to the agent (a whole one)
  uint64_t from_checkpoint = 0;  // the generations a checkpoint gave (not run again)
  std::string checkpoint_slot;   // the /checkpoint dataset they came from
  if (replay_gens > 0) {
    const hid_t f = file.id();
    h5::Handle gg = h5::group(f, "generations", false);
    const auto evals = h5::read_column<uint64_t>(gg.id(), "evaluations");
    const auto best = h5::read_column<double>(gg.id(), "best_objective");
    const auto infeasible = h5::read_column<uint64_t>(gg.id(), "infeasible");
    const auto walls = h5::read_column<double>(gg.id(), "wall_s");
    uint64_t expected = 0;  // rows /evaluated should hold, from /generations (the replay checks them)
    for (uint64_t k = 0; k < replay_gens; ++k) {
      const uint64_t n = evals[k] - (k ? evals[k - 1] : 0);
      expected += keep == KeepEvaluated::All ? n : keep == KeepEvaluated::Feasible ? n - std::min(n, infeasible[k]) : 0;
    }
    uint64_t present = expected;  // rows every column holds
    if (expected > 0) {
      if (!h5::exists(f, "evaluated")) present = 0;
      else {
        h5::Handle ev = h5::group(f, "evaluated", false);
        for (const auto& c : evaluated_columns(ds))  // stored_rows: a kill inside a flush can leave less
          present = h5::exists(ev.id(), c) ? h5::stored_rows(ev.id(), c, size_t(present)) : 0;
      }
    }
    kept_rows = present / kChunkRows * kChunkRows;
    // A kill leaves at most a partly filled chunk and a generation's rows to write again; more is
    // a damaged file, which would be rebuilt in memory.
    if (expected - kept_rows > kChunkRows + P)
      throw std::runtime_error(o.out + ": resume: /evaluated lacks " + std::to_string(expected - present) +
                               " of the rows /generations lists (more than a kill leaves: a damaged file?)");
    uint64_t pending_from = UINT64_MAX;  // the row at which the rows given to the writer begin
    // The last checkpoint the file holds the generations of (and the rows it counts written), if
    // it agrees with /generations: the replay starts there.
    for (const char* slot : {"current", "other"}) {
      if (o.checkpoint_s < 0) break;
      Checkpoint cp;
      std::string used;
      const bool read = read_checkpoint(f, slot, st, cp, *made.agent, used);
      const uint64_t g = cp.st.generations;
      if (read && g >= 1 && g <= replay_gens && cp.written <= kept_rows && cp.written % kChunkRows == 0 &&
          cp.st.evaluations == evals[g - 1] && best_value(cp.st) == best[g - 1] && cp.pending.evals.size() <= g) {
        st = std::move(cp.st);
        from_checkpoint = g;
        // Its rows (from row cp.written) go to the writer again where the file's whole chunks
        // do not hold them; its generations are in /generations. The file keeps its whole
        // chunks, and the generations run again are checked against them, as in a full replay:
        // so a kill during this session leaves /evaluated as complete as it found it.
        rows_in_file = cp.written + cp.pending.rows();
        pending = std::move(cp.pending);
        pending.take_front(size_t(std::min<uint64_t>(pending.rows(), kept_rows - cp.written)), pending.evals.size());
        if (pending.rows() > 0) pending_from = kept_rows;
        last_told = true;
        checkpoint_slot = used;
        if (summary)
          for (uint64_t k = 0; k < g; ++k) {
            summary->best_curve.push_back(best[k]);
            summary->evaluations_curve.push_back(evals[k]);
          }
        break;
      }
      made = make();  // a checkpoint that did not fit may have left the agent half loaded
    }
    // /evaluated's gene columns, read a window of rows at a time (a file of 10^8 rows holds
    // gigabytes of genes): stored[g][row - window_first].
    // Called for rows below kept_rows only.
    h5::Handle ev = kept_rows > 0 ? h5::group(f, "evaluated", false) : h5::Handle();
    std::vector<std::vector<int16_t>> stored(ds.genes.size());
    size_t window_first = 0;
    const auto stored_gene = [&](size_t row, int32_t g) -> int16_t {
      if (row < window_first || row - window_first >= stored[0].size()) {
        window_first = row;
        for (size_t k = 0; k < ds.genes.size(); ++k)
          stored[k] = h5::read_column<int16_t>(ev.id(), ds.genes[k].name, row,
                                               std::min<size_t>(size_t(1) << 18, size_t(kept_rows - row)));
      }
      return stored[size_t(g)][row - window_first];
    };
    const auto refuse = [&](uint64_t k, const std::string& what) {
      return std::runtime_error(o.out + ": resume: generation " + std::to_string(k) + " " + what +
                                " (another cosmic version, agent or seed, or a damaged file?)");
    };
    agents::Population part;
    for (uint64_t k = from_checkpoint; k < replay_gens; ++k) {
      const uint64_t n = evals[k] - st.evaluations;
      const bool last = evals[k] == o.budget && k + 1 == replay_gens;  // the budget's last generation may be short
      if (n != P && !(last && n < P))
        throw std::runtime_error(o.out + ": generation " + std::to_string(k) + " has " + std::to_string(n) +
                                 " genomes, the population is " + std::to_string(P));
      next_generation(*made.agent, *eval, pop, device_breeding);
      const agents::Population& evp = first_genomes(pop, size_t(n), part);
      eval->evaluate(evp, scores, &metrics);
      const uint64_t first_row = rows_in_file;
      for (size_t i = 0; i < evp.size; ++i) {
        if (!keeps(keep, scores, i)) continue;
        if (rows_in_file < kept_rows)
          for (int32_t g = 0; g < view.ngenes; ++g)
            if (evp.at(i, g) != stored_gene(size_t(rows_in_file), g)) throw refuse(k, "differs from its rows in /evaluated");
        ++rows_in_file;
      }
      if (rows_in_file > kept_rows) {  // rows past the kept chunks: to be written again
        if (pending_from == UINT64_MAX) pending_from = first_row;
        pending.add(evp, scores, metrics, k, keep, first_row, st.evaluations);
      }
      if (record(st, evp, scores, metrics) != infeasible[k] || best_value(st) != best[k])
        throw refuse(k, "does not evaluate to what /generations records");
      if (n == P) made.agent->tell(pop, scores);
      last_told = n == P;
      if (summary) {
        summary->best_curve.push_back(best_value(st));
        summary->evaluations_curve.push_back(st.evaluations);
      }
    }
    if (pending_from != UINT64_MAX) pending.take_front(size_t(kept_rows - pending_from), 0);  // rows the file keeps
    pending.row_end.clear();  // /generations has the replayed generations already
    // The root attributes hold the totals of the last session that stopped cleanly; after a
    // kill they are older than /generations, whose wall_s is then the later one.
    st.wall_s = walls[replay_gens - 1];
    if (h5::has_attr(f, "wall_time_s")) st.wall_s = std::max(st.wall_s, h5::attr_double(f, "wall_time_s"));
    for (auto [name, v] : {std::pair<const char*, double*>{"eval_s", &st.eval_s}, {"agent_s", &st.agent_s},
                           {"write_s", &st.write_s}, {"writer_s", &st.writer_s}})
      if (h5::has_attr(f, name)) *v = h5::attr_double(f, name);
    if (!o.quiet)
      std::cerr << "search: resumed " << o.out << " after generation " << replay_gens << " (" << st.evaluations
                << " evaluations, best " << best_text(best_value(st))
                << (from_checkpoint ? "; from its checkpoint after generation " + std::to_string(from_checkpoint) +
                                          (from_checkpoint < replay_gens ? ", the rest run again" : "")
                                    : "; every generation run again (no checkpoint to start from)")
                << ")"
                << (extend ? ", budget raised from " + human(double(old_budget)) + " to " + human(double(o.budget)) : "") << "\n";
    if (!o.quiet && extend && population_asked > P)
      std::cerr << "search: note: the population is " << P << ", which the first budget cut from " << population_asked
                << "; the continuation keeps it (the search with --population " << P << " and this budget)\n";
  }
  if (o.resume) {
    // The file is cut only once the replay accepted it: /generations to the generations all its
    // columns hold (a kill while they were appended), /evaluated to its kept whole chunks (only
    // whole chunks are dropped, none is rewritten). Flushed at once, so that a kill from here on
    // finds the file as cut.
    cut_columns(file.id(), "generations", replay_gens);
    cut_columns(file.id(), "evaluated", kept_rows);
    // The next checkpoint goes to the other slot than the one resumed from (`other` where
    // `current` did not fit the file): a kill while it is written leaves this one.
    if (!checkpoint_slot.empty()) h5::set_attr(h5::group(file.id(), "checkpoint", false).id(), "current", checkpoint_slot);
    h5::set_attr(file.id(), "evaluated_rows", kept_rows);
    if (extend) {
      h5::set_attr(file.id(), "budget", o.budget);
      h5::set_attr(file.id(), "complete", int64_t(0));
    }
    // What a run writes when it stops is the last session's: gone until this one stops, so that a
    // kill leaves the file as a killed first session does (docs/results-format.md).
    for (const char* a : {"stopped", "feasible_count", "best_objective"}) h5::remove_attr(file.id(), a);
    for (const char* g : {"best", "pareto"}) h5::remove(file.id(), g);
    h5::flush(file.id());
  }

  uint64_t written = kept_rows;  // rows of /evaluated in the file or handed to the writer
  double last_write = now_s(), last_checkpoint = now_s();
  const double wall0 = st.wall_s;
  double last_progress = -1e9;
  std::string stopped = "budget";
  uint64_t session_gens = 0;
  const bool tty = isatty(2) != 0;
  // The ETA runs at the rate since the last progress line: BO's generations slow down as its
  // history grows, and the rate over the whole run had it finish about 4x too soon. The first
  // line gives none: its rate counts the session's start-up (a population of 2 read 1h18m for
  // a search of 5 s).
  double eta_wall = st.wall_s;
  uint64_t eta_evals = st.evaluations;
  bool eta_known = false;
  auto progress = [&](bool last) {
    if (o.quiet) return;
    const double t = now_s();
    if (!last && t - last_progress < o.progress_every_s) return;
    last_progress = t;
    const double rate = st.wall_s > 0 ? double(st.evaluations) / st.wall_s : 0.0;
    const double recent =
        st.wall_s > eta_wall && st.evaluations > eta_evals ? double(st.evaluations - eta_evals) / (st.wall_s - eta_wall) : rate;
    eta_wall = st.wall_s;
    eta_evals = st.evaluations;
    const bool eta_known_before = eta_known;
    eta_known = true;
    std::cerr << (tty ? "\r" : "") << "search " << o.agent << ": gen " << st.generations << ", " << human(double(st.evaluations))
              << "/" << human(double(o.budget)) << " evaluations, best " << best_text(best_value(st)) << ", " << human(rate)
              << " evals/s" << (last || !eta_known_before ? "" : ", ETA " + duration(double(o.budget - st.evaluations) / recent))
              << (tty ? "   " : "") << (tty && !last ? "" : "\n") << std::flush;
  };
  // The rows handed to the writer since /evaluated last ended on a whole chunk: a checkpoint
  // counts the rows written up to that end and holds these again (a resume writes them anew).
  Pending tail;
  const auto checkpoint = [&] {
    Pending rows = tail;
    rows.append(pending);
    Pending cp;
    cp.checkpoint = checkpoint_bytes(st, rows, written - tail.rows(), *made.agent);
    return cp;
  };
  // The generation after which the best last improved, by the feasibility rules (while nothing
  // is feasible, a lower violation is a better best): the one that evaluated the best, from the
  // evaluation counts the file holds for the generations before this session.
  uint64_t improved_at = 0;
  if (replay_gens > 0 && st.have_best) {
    h5::Handle gg = h5::group(file.id(), "generations", false);
    const auto evals = h5::read_column<uint64_t>(gg.id(), "evaluations", 0, size_t(replay_gens));
    improved_at = uint64_t(std::lower_bound(evals.begin(), evals.end(), st.best_at) - evals.begin()) + 1;
  }
  Writer writer(file.id(), ds);  // from here until writer.finish(), only the writer calls HDF5
  // A long ask() stops for a signal or the time limit as the loop below would (not during the
  // replay, which they do not cut short).
  const auto time_is_up = [&] {
    return o.time_limit_s > 0 && session_gens > 0 && now_s() - t_session >= o.time_limit_s;
  };
  made.agent->stop_when([&] { return StopSignals::received() != 0 || time_is_up(); });
  while (st.evaluations < o.budget) {
    if (StopSignals::received()) {
      stopped = "signal";
      break;
    }
    // The limit counts the whole session (a resume's replay too) but lets one new generation run,
    // so that every session moves the search on.
    if (time_is_up()) {
      stopped = "time_limit";
      break;
    }
    if (o.stop_after_generations && session_gens >= o.stop_after_generations) {
      stopped = "signal";
      break;
    }
    // Stopping rules, on the search's whole history (a resumed session that meets one stops
    // at once; without the rule it goes on): a best at or below the target, or `stall`
    // generations since the best last improved.
    if (o.target_set && best_value(st) <= o.target) {
      stopped = "target";
      break;
    }
    if (o.stall > 0 && st.generations - improved_at >= o.stall) {
      stopped = "stall";
      break;
    }
    const double t0 = now_s();
    try {
      next_generation(*made.agent, *eval, pop, device_breeding);
    } catch (const agents::Interrupted&) {  // a long ask() stopped: the agent is as before it
      stopped = StopSignals::received() ? "signal" : "time_limit";
      break;
    }
    const double t1 = now_s();
    const uint64_t left = o.budget - st.evaluations;
    const bool partial = left < P;  // the last generation: only what the budget allows
    agents::Population part;
    const agents::Population& evp = first_genomes(pop, size_t(std::min<uint64_t>(left, P)), part);
    eval->evaluate(evp, scores, &metrics);
    const double t2 = now_s();
    if (!partial) made.agent->tell(pop, scores);
    last_told = !partial;
    const double t3 = now_s();
    double gen_best = kInf;
    for (size_t i = 0; i < scores.size; ++i)
      if (scores.feasible(i)) gen_best = std::min(gen_best, scores.at(i, 0));
    const uint64_t gen = st.generations;
    const uint64_t best_before = st.best_at;  // (0 until a best is found)
    const uint64_t infeasible = record(st, evp, scores, metrics);
    if (st.best_at != best_before) improved_at = st.generations;
    const double t4 = now_s();
    st.wall_s = wall0 + (t4 - t_session);
    const double agent_s = (t1 - t0) + (t3 - t2), eval_s = t2 - t1;
    st.agent_s += agent_s;
    st.eval_s += eval_s;
    pending.add(evp, scores, metrics, gen, keep, written + pending.rows(), st.evaluations - evp.size);
    pending.best.push_back(best_value(st));
    pending.evals.push_back(st.evaluations);
    pending.wall.push_back(st.wall_s);
    pending.size.push_back(evp.size);
    pending.infeasible.push_back(infeasible);
    pending.gen_best.push_back(gen_best);
    pending.agent_s.push_back(agent_s);
    pending.eval_s.push_back(eval_s);
    // Whole chunks of /evaluated and the generations they complete; then everything when no
    // chunk filled for flush_s seconds, or when this generation took that long (the next may
    // too, and a kill meanwhile would lose this one's record).
    const uint64_t chunk_end = (written + pending.rows()) / kChunkRows * kChunkRows;
    if (chunk_end > written) {
      size_t gens = 0;
      while (gens < pending.row_end.size() && pending.row_end[gens] <= chunk_end) ++gens;
      writer.push(pending.take_front(size_t(chunk_end - written), gens));
      written = chunk_end;
      tail = Pending();
      last_write = now_s();
    }
    if (!pending.evals.empty() && (t4 - last_write >= o.flush_s || t4 - t0 >= o.flush_s)) {
      written += pending.rows();
      Pending rows = pending;
      rows.take_front(0, rows.evals.size());  // the rows alone
      tail.append(rows);
      writer.push(std::move(pending));
      pending = Pending();
      last_write = now_s();
    }
    // A checkpoint every checkpoint_s seconds, after a generation told to the agent.
    if (o.checkpoint_s >= 0 && last_told && t4 - last_checkpoint >= o.checkpoint_s) {
      writer.push(checkpoint());
      last_checkpoint = now_s();
    }
    st.write_s += now_s() - t4;
    ++session_gens;
    if (summary) {
      summary->best_curve.push_back(best_value(st));
      summary->evaluations_curve.push_back(st.evaluations);
    }
    progress(false);
  }
  made.agent->stop_when(nullptr);  // (its captures end with this function)
  const double tw = now_s();
  // And one as the session ends (after the rows it counts on are handed to the writer).
  Pending cp;
  if (o.checkpoint_s >= 0 && last_told && session_gens > 0) cp = checkpoint();
  writer.push(std::move(pending));
  if (!cp.checkpoint.empty()) writer.push(std::move(cp));
  writer.finish();  // the file is this thread's again
  st.writer_s += writer.busy_s();
  if (summary) summary->write_batches = writer.batches();
  const bool complete = st.evaluations >= o.budget;
  if (complete) stopped = "budget";
  write_final(file.id(), ds, st, stopped, complete);
  st.write_s += now_s() - tw;
  st.wall_s = wall0 + (now_s() - t_session);
  write_times(file.id(), st);
  h5::flush(file.id());
  progress(true);
  if (!o.quiet && stopped != "budget")
    std::cerr << "search: stopped (" << stopped << ") after " << st.evaluations << " evaluations; " << o.out
              << " is resumable with --resume\n";
  // A search that found nothing feasible has an infeasible /best: say so, and what it broke.
  if (!o.quiet && st.feasible == 0 && st.have_best) {
    std::cerr << "search: no feasible point in " << st.evaluations << " evaluations; /best is the least infeasible ("
              << names::reason_code_name(st.best.reason[0]) << "): a larger budget or population, or another agent, may find one (docs/agents.md)\n";
  }
  if (summary) {
    summary->generations = st.generations;
    summary->evaluations = st.evaluations;
    summary->feasible = st.feasible;
    summary->best_objective = best_value(st);
    summary->best_genome = st.best_genome;
    summary->stopped = stopped;
    summary->checkpoint_generations = from_checkpoint;
    summary->wall_s = st.wall_s;
    summary->agent_s = st.agent_s;
    summary->eval_s = st.eval_s;
    summary->write_s = st.write_s;
    summary->writer_s = st.writer_s;
  }
  if (stopped == "signal") return StopSignals::received() ? 128 + int(StopSignals::received()) : 130;
  return 0;
}

}  // namespace cosmic
