// Helpers shared by the agents: per-individual random streams, uniform genomes, the variation
// operators of GA and NSGA-II, and the total order of the feasibility rules.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <omp.h>

#include "agents/agent.hpp"
#include "agents/breed.hpp"
#include "agents/rng.hpp"

namespace cosmic::agents {

// The per-gene mutation rate of GA and NSGA-II: the one given, or with auto (< 0) one gene a
// child in expectation, 1 / genes.
inline double mutation_rate_for(double given, size_t ngenes) {
  return given < 0 ? 1.0 / double(std::max<size_t>(1, ngenes)) : given;
}

// The operators below work on one genome stored as a row of genes (individual-major).
template <class Gene>
void random_genome(Gene* row, const std::vector<int32_t>& card, Rng& r) {
  for (size_t g = 0; g < card.size(); ++g) row[g] = Gene(r.below(uint64_t(card[g])));
}

inline void standings(const Scores& s, std::vector<Standing>& out) {
  out.resize(s.size);
  const int64_t n = int64_t(s.size);
#pragma omp parallel for schedule(static) if (n >= 32768)
  for (int64_t i = 0; i < n; ++i)
    out[size_t(i)] = s.feasible(size_t(i)) ? Standing{s.at(size_t(i), 0), 0} : Standing{s.violation[size_t(i)], 1};
}

// The first k individuals under stands_before(), in that order; with `last`, the last k, last
// first. Packed (standing, index) records, each part of them searched on its own thread with a
// heap of the k best so far (std::partial_sort: most records lose to the heap's top in one
// comparison), then the parts' winners once more. The order is a strict total order, so the
// result is the same for any number of parts (threads). Where k is half the records or more (BO
// asks for the whole order) a sort does it. Values must not be NaN (the evaluators give none).
// The records are laid out in the order in which ties are settled (by index; by falling index
// for `last`): a heap then meets a record tied with its top only after the top, where it loses in
// one comparison (for the last k of 10^5 children with many equal violations, met by rising
// index, every tie had taken the top's place: 1.3 ms a GA generation instead of 0.65 on one thread).
inline std::vector<size_t> first_k(const std::vector<Standing>& f, size_t k, bool last = false) {
  struct Ranked {
    double value;
    int32_t infeasible;
    uint32_t index;
  };
  if (f.size() > size_t(UINT32_MAX)) throw std::length_error("first_k: more than 2^32 individuals");
  const size_t n = f.size();
  k = std::min(k, n);
  const auto before = [last](const Ranked& x, const Ranked& y) {  // stands_before() on records, or reversed
    const Ranked &a = last ? y : x, &b = last ? x : y;
    const Standing sa{a.value, a.infeasible}, sb{b.value, b.infeasible};
    return better(sa, sb) || (!better(sb, sa) && a.index < b.index);
  };
  std::vector<Ranked> r(n);
  const int parts = n >= 32768 && k * 4 <= n ? omp_get_max_threads() : 1;
  std::vector<size_t> kept(static_cast<size_t>(parts));  // the first min(k, part size) of each part
#pragma omp parallel for schedule(static, 1) num_threads(parts) if (parts > 1)
  for (int p = 0; p < parts; ++p) {
    const size_t lo = n * size_t(p) / size_t(parts), hi = n * size_t(p + 1) / size_t(parts);
    for (size_t i = lo; i < hi; ++i) {
      const size_t at = last ? n - 1 - i : i;  // (below)
      r[i] = {f[at].value, f[at].infeasible, uint32_t(at)};
    }
    kept[size_t(p)] = std::min(k, hi - lo);
    if (2 * k >= hi - lo) std::sort(r.begin() + ptrdiff_t(lo), r.begin() + ptrdiff_t(hi), before);  // most of it: a sort
    else std::partial_sort(r.begin() + ptrdiff_t(lo), r.begin() + ptrdiff_t(lo + kept[size_t(p)]), r.begin() + ptrdiff_t(hi), before);
  }
  size_t winners = kept[0];
  for (int p = 1; p < parts; ++p) {  // gather the parts' winners at the front (moving left only)
    const size_t from = n * size_t(p) / size_t(parts);
    if (from != winners) std::copy_n(r.begin() + ptrdiff_t(from), kept[size_t(p)], r.begin() + ptrdiff_t(winners));
    winners += kept[size_t(p)];
  }
  if (parts > 1) std::partial_sort(r.begin(), r.begin() + ptrdiff_t(k), r.begin() + ptrdiff_t(winners), before);
  std::vector<size_t> idx(k);
  for (size_t j = 0; j < k; ++j) idx[j] = r[j].index;
  return idx;
}

// Indices of the k best individuals, best first.
std::vector<size_t> best_indices(const Scores& s, size_t k);

// Counts, for a 53-bit draw (Rng::next() >> 11), how many of an ascending list of thresholds are
// at or below it: the value of any rule from draws to 0, 1, 2, ... that is monotone in the draw
// (a mutation skip, a roulette), once first[k], the smallest draw whose value exceeds k, is known.
// A second table gives the count at the start of each of 2^bits equal slices of the draws, so a
// count is one look-up and, where a threshold falls inside the slice, a step or two past it.
class DrawCounter {
 public:
  static constexpr uint64_t kNever = ~uint64_t(0), kDraws = uint64_t(1) << 53;
  DrawCounter() = default;
  DrawCounter(std::vector<uint64_t> first, int bits) : first_(std::move(first)), shift_(53 - bits) {
    first_.push_back(kNever);  // a scan stops there
    at_slice_.resize(size_t(1) << bits);
    for (uint64_t slice = 0, k = 0; slice < at_slice_.size(); ++slice) {
      while (first_[k] <= slice << shift_) ++k;
      at_slice_[slice] = uint16_t(k);
    }
  }
  int32_t count(uint64_t bits53) const { return table().count(bits53); }
  DrawTable table() const { return {first_.data(), at_slice_.data(), shift_}; }
  const std::vector<uint64_t>& first() const { return first_; }
  const std::vector<uint16_t>& at_slice() const { return at_slice_; }
  // The smallest draw at which `reaches` (monotone: false, then true) holds, kNever if none: a
  // bisection started around `guess`.
  template <class Reaches>
  static uint64_t first_draw(Reaches&& reaches, double guess) {
    const auto at_or_past = [&](uint64_t x) { return x >= kDraws || reaches(x); };
    const uint64_t at = guess >= double(kDraws) ? kDraws : uint64_t(std::max(0.0, guess));
    uint64_t lo = at, hi = at, width = 16;  // widen until !at_or_past(lo) and at_or_past(hi)
    while (lo > 0 && at_or_past(lo)) lo = lo > width ? lo - width : 0, width *= 2;
    while (!at_or_past(hi)) hi = kDraws - hi > width ? hi + width : kDraws, width *= 2;
    if (at_or_past(lo)) return lo;  // lo == 0
    while (hi - lo > 1) {
      const uint64_t mid = lo + (hi - lo) / 2;
      (at_or_past(mid) ? hi : lo) = mid;
    }
    return hi >= kDraws ? kNever : hi;
  }

 private:
  std::vector<uint64_t> first_;     // ascending, then kNever
  std::vector<uint16_t> at_slice_;  // thresholds at or below each slice's first draw
  int shift_ = 53;
};

// How far mutate() jumps to the next gene to mutate: a geometric draw, floor(log(1 - u) /
// log(1 - rate)) genes skipped for u uniform in [0, 1) (53 random bits, Rng::uniform()), so that
// a child costs one draw per mutated gene instead of one per gene. Only skips shorter than the
// genome matter, so the skip is read from a table instead of computing a logarithm per draw: the
// smallest draw whose skip reaches k, for k = 1 .. ng, found once with the same formula, and a
// DrawCounter over 1,024 slices. The skips are the formula's: it is monotone in u (tested
// against it).
class MutationSkips {
 public:
  MutationSkips(double rate, size_t ng) : rate_(rate) {
    if (!geometric()) return;
    const double log_keep = std::log1p(-rate);
    std::vector<uint64_t> first(ng);
    for (size_t k = 1; k <= ng; ++k)
      first[k - 1] = DrawCounter::first_draw([&](uint64_t x) { return formula(x, log_keep) >= double(k); },
                                             -std::expm1(double(k) * log_keep) * double(DrawCounter::kDraws));
    table_ = DrawCounter(std::move(first), 10);
  }
  bool any() const { return rate_ > 0; }
  bool geometric() const { return rate_ > 0 && rate_ < 1; }
  // The skip for the draw `bits53` (Rng::next() >> 11), capped at ng.
  int32_t skip(uint64_t bits53) const { return table_.count(bits53); }
  // What mutate() reads; valid while this lives. A device copies table() first.
  SkipView view() const { return {rate_, table_.table()}; }
  const DrawCounter& table() const { return table_; }
  // The formula itself, for the tests.
  static double formula(uint64_t bits53, double log_keep) {
    return std::floor(std::log(1 - double(bits53) * 0x1.0p-53) / log_keep);
  }

 private:
  double rate_;
  DrawCounter table_;
};

// The parents' genomes, individual-major (row i: individual i's genes), as breeding reads them:
// one byte per gene when no gene has more than 256 values (a row of the System 1 full-stack
// space is then 35 bytes instead of 140), else four. Parents are read at random, so the smaller
// rows are fewer cache misses.
class ParentRows {
 public:
  explicit ParentRows(const std::vector<int32_t>& card) : ng_(card.size()), narrow_(fits_in_bytes(card)) {}
  static bool fits_in_bytes(const std::vector<int32_t>& card) {
    return std::all_of(card.begin(), card.end(), [](int32_t c) { return c <= 256; });
  }
  bool narrow() const { return narrow_; }
  size_t size() const { return size_; }
  void resize(size_t n) {
    size_ = n;
    narrow_ ? narrow_rows_.resize(n * ng_) : wide_rows_.resize(n * ng_);
  }
  // Rows first .. first + m - 1 from m genomes stored individual-major in `block` (the rows
  // exist already: several threads may fill separate rows at once).
  template <class Gene>
  void set_block(size_t first, const Gene* block, size_t m) {
    const size_t ng = ng_;
    visit([&](auto* rows) {
      for (size_t k = 0; k < m * ng; ++k) rows[first * ng + k] = block[k];
    });
  }
  // Appends the rows of `o` (a store for the same genes).
  void append(const ParentRows& o) {
    const size_t at = size_;
    resize(size_ + o.size_);
    if (narrow_) std::copy_n(o.narrow_rows_.data(), o.size_ * ng_, narrow_rows_.data() + at * ng_);
    else std::copy_n(o.wide_rows_.data(), o.size_ * ng_, wide_rows_.data() + at * ng_);
  }
  void swap(ParentRows& o) {
    std::swap(size_, o.size_);
    narrow_rows_.swap(o.narrow_rows_);
    wide_rows_.swap(o.wide_rows_);
  }
  void get(size_t i, int32_t* genes) const {
    visit([&](const auto* rows) { std::copy_n(rows + i * ng_, ng_, genes); });
  }
  void set(size_t i, const int32_t* genes) {
    visit([&](auto* rows) {
      for (size_t g = 0; g < ng_; ++g) rows[i * ng_ + g] = genes[g];
    });
  }
  // Keeps rows which[0], which[1], ... as rows 0, 1, ... (copied in parallel, through a second
  // buffer that keeps its capacity, so that growing again next generation does not reallocate).
  void keep(const std::vector<size_t>& which) {
    const int64_t n = int64_t(which.size());
    const size_t ng = ng_;
    auto gather = [&](auto& rows, auto& kept) {
      kept.reserve(rows.capacity());
      kept.resize(which.size() * ng);
#pragma omp parallel for schedule(static) if (n >= 8192)
      for (int64_t k = 0; k < n; ++k) std::copy_n(rows.data() + which[size_t(k)] * ng, ng, kept.data() + size_t(k) * ng);
      rows.swap(kept);
    };
    narrow_ ? gather(narrow_rows_, narrow_spare_) : gather(wide_rows_, wide_spare_);
    size_ = which.size();
  }
  void save(StateWriter& w) const {
    w.put(uint64_t(size_));
    narrow_ ? w.put(narrow_rows_) : w.put(wide_rows_);
  }
  void load(StateReader& r) {
    size_ = size_t(r.get<uint64_t>());
    narrow_ ? r.get(narrow_rows_) : r.get(wide_rows_);
    if ((narrow_ ? narrow_rows_.size() : wide_rows_.size()) != size_ * ng_)
      throw std::runtime_error("agent state: parents of the wrong shape");
  }
  // f(pointer to the rows), uint8_t* or int32_t*.
  template <class F>
  void visit(F f) {
    narrow_ ? f(narrow_rows_.data()) : f(wide_rows_.data());
  }
  template <class F>
  void visit(F f) const {
    narrow_ ? f(narrow_rows_.data()) : f(wide_rows_.data());
  }

 private:
  size_t ng_, size_ = 0;
  bool narrow_;
  std::vector<uint8_t> narrow_rows_, narrow_spare_;
  std::vector<int32_t> wide_rows_, wide_spare_;
};

// m genomes stored individual-major in `block` (m rows of ng genes) written gene-major: gene g of
// genome k to out[g * stride + k]. One-byte genes go eight genomes by eight genes at a time: an
// 8 x 8 byte transpose in eight 64-bit words (three rounds of masked swaps), then each word,
// one gene of eight genomes, widened to eight int32 (instead of a byte load per gene at a stride
// of ng bytes).
template <class Gene>
void to_gene_major(const Gene* block, size_t m, size_t ng, int32_t* out, size_t stride) {
  size_t k0 = 0, g0 = 0;
  if constexpr (sizeof(Gene) == 1) {
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "byte j of a word is gene j");
    for (; g0 + 8 <= ng; g0 += 8)
      for (size_t k = 0; k + 8 <= m; k += 8) {
        uint64_t w[8];  // w[i] byte j: gene g0 + j of genome k + i, then gene g0 + i of genome k + j
        for (size_t i = 0; i < 8; ++i) std::memcpy(&w[i], block + (k + i) * ng + g0, 8);
        const auto swap_bytes = [&](size_t i, size_t h, int bits, uint64_t mask) {
          const uint64_t t = ((w[i] >> bits) ^ w[i + h]) & mask;
          w[i + h] ^= t;
          w[i] ^= t << bits;
        };
        for (size_t i : {0, 1, 2, 3}) swap_bytes(i, 4, 32, 0x00000000ffffffffULL);
        for (size_t i : {0, 1, 4, 5}) swap_bytes(i, 2, 16, 0x0000ffff0000ffffULL);
        for (size_t i : {0, 2, 4, 6}) swap_bytes(i, 1, 8, 0x00ff00ff00ff00ffULL);
        for (size_t j = 0; j < 8; ++j) {
          int32_t* o = out + (g0 + j) * stride + k;
#ifdef __SSE2__
          const __m128i zero = _mm_setzero_si128();
          const __m128i x = _mm_unpacklo_epi8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(&w[j])), zero);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_unpacklo_epi16(x, zero));
          _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 4), _mm_unpackhi_epi16(x, zero));
#else
          for (size_t i = 0; i < 8; ++i) o[i] = int32_t((w[j] >> (8 * i)) & 0xff);
#endif
        }
      }
    k0 = m / 8 * 8;  // the transposed part: genes below g0, genomes below k0
  }
  for (size_t g = 0; g < ng; ++g)
    for (size_t k = g < g0 ? k0 : 0; k < m; ++k) out[g * stride + k] = int32_t(block[k * ng + g]);
}

// Fills a population a block of individuals at a time, blocks in parallel: make(lo, m, block)
// writes the genomes of individuals lo .. lo + m - 1 (m <= kFillBlock) individual-major into
// `block` (of Gene, as the parents are stored when breeding), and they are written out gene by
// gene (m consecutive values per gene column, instead of one scattered write per gene and
// individual), and, when `rows` is given (sized to the population), as rows lo .. lo + m - 1 of it.
constexpr size_t kFillBlock = 256;

template <class Gene = int32_t, class Make>
void fill_blocks(Population& pop, Make make, ParentRows* rows = nullptr) {
  const int64_t n = int64_t(pop.size);
  const size_t ng = size_t(pop.ngenes);
  int32_t* genes = pop.genes.data();
#pragma omp parallel if (n >= 4096)
  {
    std::vector<Gene> block(kFillBlock * ng);
#pragma omp for schedule(static)
    for (int64_t lo = 0; lo < n; lo += int64_t(kFillBlock)) {
      const size_t m = size_t(std::min(int64_t(kFillBlock), n - lo));
      make(size_t(lo), m, block.data());
      if (rows) rows->set_block(size_t(lo), block.data(), m);
      to_gene_major(block.data(), m, ng, genes + lo, size_t(n));
    }
  }
}

// What breeding needs to know of the parents (see breed()): their genomes, their tournament
// records (GA's standings or NSGA-II's ranks and crowding distances) and the operators' rates.
struct Breeding {
  Breeding() = default;  // no parents: children are random genomes
  template <class Record>
  Breeding(const ParentRows& parent_rows, const std::vector<Record>& parent_records, int64_t tournament_size,
           double crossover, double mutation)
      : rows(&parent_rows), tournament(tournament_size), crossover_rate(crossover), mutation_rate(mutation) {
    static_assert(std::is_same_v<Record, Standing> || std::is_same_v<Record, Crowded>, "a record a tournament reads");
    if constexpr (std::is_same_v<Record, Standing>) standing = parent_records.data();
    else crowded = parent_records.data();
  }

  // 0 before the first generation: children are random genomes.
  size_t parents() const { return rows ? rows->size() : 0; }
  // f(records): const Standing* or const Crowded*.
  template <class F>
  void visit_records(F f) const {
    standing ? f(standing) : f(crowded);
  }

  const ParentRows* rows = nullptr;  // the parents' genomes
  const Standing* standing = nullptr;  // the parents' tournament records: one of the two
  const Crowded* crowded = nullptr;
  int64_t tournament = 2;            // contestants per tournament
  double crossover_rate = 0;
  double mutation_rate = 0;
};

// One generation of children: random genomes before any parents exist, afterwards two parents
// chosen by tournaments, uniform crossover and per-gene mutation (agents/breed.hpp; a CUDA
// evaluator does the same, breed_child() per thread). Child i draws from its own stream
// (seed, generation, i), so the result does not depend on the thread count.
//
// Children are made in blocks (fill_blocks), in three passes: draw every contestant of the block
// (prefetching its record), settle the tournaments (prefetching the winners' rows), then cross
// and mutate. Contestants and parents are random reads into arrays of megabytes; issuing them
// for a whole block at once lets them overlap. Each child's stream sees the same draws in the
// same order as breed_child()'s.
template <class Gene, class Record>
void breed_from(Population& pop, const std::vector<int32_t>& card, uint64_t seed, uint64_t gen, const Breeding& b,
                const Gene* rows, const Record* records, ParentRows* children) {
  const size_t ng = card.size(), t = size_t(std::max<int64_t>(1, b.tournament)), parents = b.parents();
  const MutationSkips skips(b.mutation_rate, ng);
  const SkipView skip_view = skips.view();
  fill_blocks<Gene>(pop, [&](size_t lo, size_t m, Gene* block) {
    Rng r[kFillBlock];
    size_t pa[kFillBlock], pb[kFillBlock];
    std::vector<size_t> drawn(m * 2 * t);
    for (size_t k = 0; k < m; ++k) {
      r[k] = Rng(stream_seed(seed, gen, lo + k));
      for (size_t j = 0; parents > 0 && j < 2 * t; ++j) {
        const size_t c = size_t(r[k].below(parents));
        drawn[k * 2 * t + j] = c;
        __builtin_prefetch(records + c);
      }
    }
    for (size_t k = 0; parents > 0 && k < m; ++k) {
      const size_t* c = &drawn[k * 2 * t];
      pa[k] = c[0];
      pb[k] = c[t];
      for (size_t j = 1; j < t; ++j) {
        if (stands_before(records, c[j], pa[k])) pa[k] = c[j];
        if (stands_before(records, c[t + j], pb[k])) pb[k] = c[t + j];
      }
      for (size_t byte = 0; byte < ng * sizeof(Gene); byte += 64) {  // a cache line at a time
        __builtin_prefetch(reinterpret_cast<const char*>(rows + pa[k] * ng) + byte);
        __builtin_prefetch(reinterpret_cast<const char*>(rows + pb[k] * ng) + byte);
      }
    }
    for (size_t k = 0; k < m; ++k) {
      Gene* child = block + k * ng;
      if (parents == 0) {
        random_genome(child, card, r[k]);
        continue;
      }
      crossover(rows + pa[k] * ng, rows + pb[k] * ng, child, ng, b.crossover_rate, r[k]);
      mutate(child, card.data(), int32_t(ng), skip_view, r[k]);
    }
  }, children);
}

// `children`, when given, receives the children as rows too (sized here): the agent keeps them
// as the next parents without reading the population back (tell() gets the population ask()
// filled).
inline void breed(Population& pop, const std::vector<int32_t>& card, uint64_t seed, uint64_t gen, const Breeding& b,
                  ParentRows* children = nullptr) {
  if (children) children->resize(pop.size);
  if (b.parents() == 0) {  // random genomes, made one byte a gene where every gene fits in one
    const Standing* none = nullptr;
    if (children ? children->narrow() : ParentRows::fits_in_bytes(card))
      return breed_from(pop, card, seed, gen, b, static_cast<const uint8_t*>(nullptr), none, children);
    return breed_from(pop, card, seed, gen, b, static_cast<const int32_t*>(nullptr), none, children);
  }
  b.rows->visit([&](const auto* rows) {
    b.visit_records([&](const auto* records) { breed_from(pop, card, seed, gen, b, rows, records, children); });
  });
}

// An agent's next generation as one breeding, handed to an evaluator that breeds on its device
// (Agent::breeding(), PopulationEvaluator::breed()): what breed() would be called with.
struct BreedTask {
  Breeding breeding;  // with parents
  size_t population = 0;  // children, as ask() takes them
  const std::vector<int32_t>* card = nullptr;
  uint64_t seed = 0, gen = 0;
  ParentRows* children = nullptr;  // receives the children as rows, as breed() gives them
};

// GA's and NSGA-II's Agent::breeding(): the task of `b`, false before their parents exist.
inline bool breed_task(BreedTask& task, const Breeding& b, size_t population, const std::vector<int32_t>& card,
                       uint64_t seed, uint64_t gen, ParentRows& children) {
  if (b.parents() == 0) return false;
  task = {b, population, &card, seed, gen, &children};
  return true;
}

// Uniform random genomes, individual i from stream (seed, gen, i).
inline void random_population(Population& pop, const std::vector<int32_t>& card, uint64_t seed, uint64_t gen) {
  breed(pop, card, seed, gen, Breeding{});
}

inline void copy_scores(const Scores& from, size_t i, Scores& to, size_t j) {
  for (int32_t o = 0; o < from.nobj; ++o) to.obj[size_t(o) * to.size + j] = from.at(i, o);
  to.violation[j] = from.violation[i];
  to.reason[j] = from.reason[i];
}

inline void check_sizes(const Population& pop, size_t population, int32_t ngenes, const char* who) {
  if (pop.size != population || pop.ngenes != ngenes)
    throw std::invalid_argument(std::string(who) + ": population of the wrong shape");
}

}  // namespace cosmic::agents
