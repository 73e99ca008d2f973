#include "agents/nsga2.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <utility>

#include "agents/common.hpp"

namespace cosmic::agents {

namespace {

// A sort key with the index it belongs to.
struct Keyed {
  double key;
  size_t i;
};

// Unsigned integers in the order of the doubles (IEEE 754: flip all bits of negatives, the
// sign bit of the rest); -0.0 is taken as +0.0, as < and == take it. Not for NaN.
inline uint64_t ordered_bits(double d) {
  uint64_t u;
  const double z = d == 0 ? 0.0 : d;
  std::memcpy(&u, &z, sizeof u);
  return (u >> 63) ? ~u : u | (uint64_t(1) << 63);
}

// Sorts records that come in increasing i by (key, i), that is by key with equal keys kept in
// their current order: an LSD radix sort of the ordered key bits, 11 bits a pass (passes where
// every key has the same digit are skipped). Below 1,024 records, a comparison sort by (key, i)
// (a stable sort would allocate a buffer for each of the many short runs a generation sorts).
// Linear in n, where a comparison sort of the 10^5 records of a generation took most of the
// selection's time. From 32,768 records the passes run on the OpenMP threads: each thread counts
// the digits of its own block of records, and scatters them to the places that the counts of
// the blocks before it leave free, so the result is the same stable order on any thread count.
void stable_sort_by_key(std::vector<Keyed>& v) {
  const size_t n = v.size();
  if (n < 1024) {  // below that the radix passes' fixed cost (2,048 buckets each) dominates
    std::sort(v.begin(), v.end(), [](const Keyed& a, const Keyed& b) { return a.key < b.key || (a.key == b.key && a.i < b.i); });
    return;
  }
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t(1) << kBits;
  std::vector<uint64_t> u(n), u_tmp(n);
  std::vector<Keyed> tmp(n);
  const int max_threads = n >= 32768 ? omp_get_max_threads() : 1;
  std::vector<size_t> count(size_t(max_threads) * kBuckets);  // count[t * kBuckets + digit]
#pragma omp parallel num_threads(max_threads)
  {
    const size_t nt = size_t(omp_get_num_threads()), t = size_t(omp_get_thread_num());
    const size_t lo = n * t / nt, hi = n * (t + 1) / nt;
    size_t* mine = &count[t * kBuckets];
    for (size_t k = lo; k < hi; ++k) u[k] = ordered_bits(v[k].key);
    for (int shift = 0; shift < 64; shift += kBits) {
      std::fill(mine, mine + kBuckets, size_t(0));
      for (size_t k = lo; k < hi; ++k) ++mine[(u[k] >> shift) & (kBuckets - 1)];
#pragma omp barrier
      // Every thread computes the same skip decision from the shared counts.
      const size_t d0 = (u[0] >> shift) & (kBuckets - 1);
      size_t same = 0;
      for (size_t b = 0; b < nt; ++b) same += count[b * kBuckets + d0];
      if (same == n) {  // one digit for all: nothing moves
#pragma omp barrier
        continue;
      }
      // Start of this thread's part of each bucket: everything in lower buckets, then the
      // same bucket's records of lower blocks.
      std::vector<size_t> at(kBuckets);
      size_t sum = 0;
      for (size_t d = 0; d < kBuckets; ++d)
        for (size_t b = 0; b < nt; ++b) {
          if (b == t) at[d] = sum;
          sum += count[b * kBuckets + d];
        }
      for (size_t k = lo; k < hi; ++k) {
        const size_t to = at[(u[k] >> shift) & (kBuckets - 1)]++;
        tmp[to] = v[k];
        u_tmp[to] = u[k];
      }
#pragma omp barrier
#pragma omp single
      {
        v.swap(tmp);
        u.swap(u_tmp);
      }  // implicit barrier: the counts are rewritten only after every thread has scattered
    }
  }
}

// std::upper_bound(v.begin(), v.end(), y) - v.begin() for ascending v, as a bisection without
// branches: a converged population of 10^5 has thousands of fronts, and a branch per step of the
// search mispredicts half the time.
size_t first_above(const std::vector<double>& v, double y) {
  if (v.empty()) return 0;
  const double* base = v.data();
  for (size_t n = v.size(); n > 1; n -= n / 2) base = base[n / 2] <= y ? base + n / 2 : base;
  return size_t(base - v.data()) + (*base <= y ? 1 : 0);
}

// The fronts' staircases in (f2, f3) for the three-objective sort (below): each front's members
// that no other member matches or beats in both, by f2 with f3 falling. A front dominates
// (y2, y3) iff its last step at or before y2 has f3 <= y3. advance() tests B points, each
// against a front, at once: bisections without branches, taken in step (as far as the longest of
// the B staircases needs, each clamped to its own last step), so that their chains of dependent
// loads overlap, where one point's bisection with branches mispredicted half of them (the points
// of a converged population land on any of ~130 fronts of 10-25 steps): the sort of a
// generation's 1.4 x 10^5 points at a population of 10^5 went from 15 to 10 ms. A staircase is
// a sorted array after a sentinel step (f2 -inf, f3 NaN, which no comparison passes: a y2 before
// the first step stops there, not dominated). Past kArrayMax steps it becomes a tree, since an
// array's inserts move the steps after them and a front whose points come by falling f2 would be
// quadratic (a front of 2 x 10^5 such points took 3.4 s as an array, 0.06 s as a tree); at 256
// a move is at most 4 KB, and 2 x 10^5 uniform random points (130 fronts of ~60 steps) took 26
// ms, where trees past 64 steps took 60.
class Staircases {
 public:
  size_t size() const { return fronts_.size(); }
  // For each of the B points (y2[b], y3[b]): base[b] += half where front base[b] + half - 1
  // dominates it (without a branch).
  template <size_t B>
  void advance(size_t* base, size_t half, const double* y2, const double* y3) const {
    const Step* s[B];
    size_t last[B], p[B];  // p[b]: the last step at or before y2[b] found so far
    bool in_tree[B];       // a tree's answer (its array keeps only the sentinel)
    for (size_t b = 0; b < B; ++b) {
      const Front& f = fronts_[base[b] + half - 1];
      s[b] = f.steps.data(), last[b] = f.steps.size() - 1, p[b] = 0, in_tree[b] = false;
      if (!f.tree.empty()) {
        const auto at = f.tree.upper_bound(y2[b]);
        in_tree[b] = at != f.tree.begin() && std::prev(at)->second <= y3[b];
      }
    }
    size_t reach = 1, all = 0;  // 2 * reach - 1 >= every last[b]
    for (size_t b = 0; b < B; ++b) all |= last[b];
    while (2 * reach <= all) reach *= 2;
    for (size_t h = all ? reach : 0; h > 0; h /= 2)
      for (size_t b = 0; b < B; ++b) {
        const size_t q = std::min(p[b] + h, last[b]);
        p[b] = s[b][q].f2 <= y2[b] ? q : p[b];
      }
    for (size_t b = 0; b < B; ++b) base[b] += half & -size_t((s[b][p[b]].f3 <= y3[b]) | in_tree[b]);
  }
  // Adds a point that no step of front f dominates (f == size(): a new front), removing the
  // steps it matches or beats in both.
  void add(size_t f, double y2, double y3) {
    if (f == fronts_.size()) fronts_.push_back({{{-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}}, {}});
    Front& fr = fronts_[f];
    if (!fr.tree.empty()) {
      auto at = fr.tree.lower_bound(y2);
      while (at != fr.tree.end() && at->second >= y3) at = fr.tree.erase(at);
      fr.tree.emplace_hint(at, y2, y3);
      return;
    }
    std::vector<Step>& v = fr.steps;
    const auto from = std::lower_bound(v.begin() + 1, v.end(), y2, [](const Step& a, double y) { return a.f2 < y; });
    auto to = from;
    while (to != v.end() && to->f3 >= y3) ++to;
    if (to == from) {
      v.insert(from, {y2, y3});
    } else {
      *from = {y2, y3};
      v.erase(from + 1, to);
    }
    if (v.size() > kArrayMax + 1) {
      for (auto a = v.begin() + 1; a != v.end(); ++a) fr.tree.emplace_hint(fr.tree.end(), a->f2, a->f3);
      v.resize(1);
    }
  }

 private:
  static constexpr size_t kArrayMax = 256;
  struct Step {
    double f2, f3;
  };
  struct Front {
    std::vector<Step> steps;         // the sentinel, then the steps by f2 while at most kArrayMax
    std::map<double, double> tree;  // f2 -> f3 beyond (else empty)
  };
  std::vector<Front> fronts_;
};

// Whether x is at or below y in each of d values.
inline bool at_or_below(const double* x, const double* y, size_t d) {
  for (size_t j = 0; j < d; ++j)
    if (x[j] > y[j]) return false;
  return true;
}

// The fronts for four or more objectives, each as a set of points in the objectives after the
// first (d = nobj - 1 of them): the sort visits the points in lexicographic order, so every
// member of a front has a first objective no larger than the point's, and, being a different
// point, dominates it iff it is at or below it in the other d. dominated(f, y) answers that for
// front f: a front holds its latest points (fewer than kBuffer) in a list, the others in static
// k-d trees of kBuffer 2^k points, at most one of each size (Bentley & Saxe's logarithmic
// method: a full list is merged with the trees below the first size not held, and built again
// as one tree of that size; a point is in O(log n) builds). A tree is laid out as the sorted
// array of its recursion: node [lo, hi) splits at mid = (lo + hi) / 2 on the dimension where its
// points spread widest (relative to the whole tree's spread, as the objectives' units differ),
// left below and right above, and keeps the smallest value of each dimension under it, so a
// query skips every subtree whose least corner is not at or below y, and a right subtree where
// y is below the split. (ENS-SS, Zhang et al. 2015, used before, searched each front's members
// latest first, so it compared a point with every member of each front not dominating it: at a
// population of 10^5 with the six objectives of `all`, 3-8 s a generation.)
class KdFronts {
 public:
  explicit KdFronts(size_t d) : d_(d) {}
  size_t size() const { return fronts_.size(); }
  bool dominated(size_t f, const double* y) const {
    const Front& fr = fronts_[f];
    if (!fr.recent.empty() && at_or_below(fr.recent_least.data(), y))
      for (size_t k = fr.recent.size() / d_; k-- > 0;)
        if (at_or_below(&fr.recent[k * d_], y)) return true;
    for (const Tree& t : fr.trees)
      if (t.n > 0 && search(t, 0, t.n, y)) return true;
    return false;
  }
  // Adds y to front f (f == size(): a new front).
  void add(size_t f, const double* y) {
    if (f == fronts_.size()) fronts_.emplace_back();
    Front& fr = fronts_[f];
    if (fr.recent.empty()) fr.recent_least.assign(y, y + d_);
    for (size_t j = 0; j < d_; ++j) fr.recent_least[j] = std::min(fr.recent_least[j], y[j]);
    fr.recent.insert(fr.recent.end(), y, y + d_);
    if (fr.recent.size() < kBuffer * d_) return;
    std::vector<double> pts;
    pts.swap(fr.recent);
    size_t level = 0;
    for (; level < fr.trees.size() && fr.trees[level].n > 0; ++level) {
      pts.insert(pts.end(), fr.trees[level].pts.begin(), fr.trees[level].pts.end());
      fr.trees[level] = Tree{};
    }
    if (level == fr.trees.size()) fr.trees.emplace_back();
    build(fr.trees[level], pts);
  }

 private:
  static constexpr size_t kBuffer = 32, kLeaf = 8;
  struct Tree {
    size_t n = 0;
    std::vector<double> pts;    // n points of d values, in the tree's order
    std::vector<double> least;  // at node mid, d values: the least of each dimension in [lo, hi)
    std::vector<uint8_t> dim;   // at node mid: the dimension it splits on
  };
  struct Front {
    std::vector<double> recent;        // the latest points, d values each
    std::vector<double> recent_least;  // the least of each dimension among them
    std::vector<Tree> trees;           // trees[k]: kBuffer 2^k points, or none (n = 0)
  };
  bool at_or_below(const double* x, const double* y) const { return agents::at_or_below(x, y, d_); }
  void build(Tree& t, const std::vector<double>& src) const {
    const size_t n = src.size() / d_;
    std::vector<size_t> order(n);
    for (size_t k = 0; k < n; ++k) order[k] = k;
    std::vector<double> scale(d_, 0.0);  // 1 / the tree's spread in each dimension (0 where none)
    for (size_t j = 0; j < d_; ++j) {
      double lo = src[j], hi = src[j];
      for (size_t k = 1; k < n; ++k) lo = std::min(lo, src[k * d_ + j]), hi = std::max(hi, src[k * d_ + j]);
      if (hi > lo) scale[j] = 1 / (hi - lo);
    }
    t.n = n;
    t.dim.assign(n, 0);
    t.least.assign(n * d_, 0.0);
    split(t, src, scale, order, 0, n);
    t.pts.resize(n * d_);
    for (size_t k = 0; k < n; ++k) std::copy_n(&src[order[k] * d_], d_, &t.pts[k * d_]);
  }
  void split(Tree& t, const std::vector<double>& src, const std::vector<double>& scale, std::vector<size_t>& order,
             size_t lo, size_t hi) const {
    if (hi - lo <= kLeaf) return;
    const size_t mid = (lo + hi) / 2;
    double* least = &t.least[mid * d_];
    double widest = -1;
    for (size_t j = 0; j < d_; ++j) {
      double a = src[order[lo] * d_ + j], b = a;
      for (size_t k = lo + 1; k < hi; ++k) a = std::min(a, src[order[k] * d_ + j]), b = std::max(b, src[order[k] * d_ + j]);
      least[j] = a;
      if ((b - a) * scale[j] > widest) widest = (b - a) * scale[j], t.dim[mid] = uint8_t(j);
    }
    const size_t j = t.dim[mid];
    std::nth_element(order.begin() + ptrdiff_t(lo), order.begin() + ptrdiff_t(mid), order.begin() + ptrdiff_t(hi),
                     [&](size_t a, size_t b) { return src[a * d_ + j] < src[b * d_ + j]; });
    split(t, src, scale, order, lo, mid);
    split(t, src, scale, order, mid + 1, hi);
  }
  // Whether a point of [lo, hi) is at or below y.
  bool search(const Tree& t, size_t lo, size_t hi, const double* y) const {
    while (hi - lo > kLeaf) {
      const size_t mid = (lo + hi) / 2;
      if (!at_or_below(&t.least[mid * d_], y)) return false;
      if (at_or_below(&t.pts[mid * d_], y)) return true;
      if (y[t.dim[mid]] < t.pts[mid * d_ + t.dim[mid]]) {  // right of mid: all above y there
        hi = mid;
        continue;
      }
      if (search(t, lo, mid, y)) return true;
      lo = mid + 1;
    }
    for (size_t k = lo; k < hi; ++k)
      if (at_or_below(&t.pts[k * d_], y)) return true;
    return false;
  }
  size_t d_;
  std::vector<Front> fronts_;
};

}  // namespace

Nsga2Params Nsga2Params::from(const Params& p, Params* effective) {
  ParamReader r(p, "nsga2", effective);
  Nsga2Params o;
  o.population = r.integer("population", o.population, 2, 100000000);
  o.crossover_rate = r.real("crossover_rate", o.crossover_rate, 0, 1);
  o.mutation_rate = r.real_or_auto("mutation_rate", -1, 0, 1);
  r.finish();
  return o;
}

namespace {

// The points first .. n - 1 in lexicographic order (objective 0, then 1, ..., then index): a
// stable sort by the first objective from index order, then each run of equal first objectives
// sorted by the other objectives and the index. Runs grow long as a population converges
// (thousands of points at 10^5 share a runtime and a bandwidth, with different costs): with two
// objectives they take the radix sort too.
std::vector<size_t> lex_order(const double* obj, size_t stride, int32_t nobj, size_t first, size_t n) {
  auto f = [&](size_t i, int32_t j) { return obj[size_t(j) * stride + i]; };
  std::vector<Keyed> keyed(n - first), run;
  for (size_t i = first; i < n; ++i) keyed[i - first] = {f(i, 0), i};
  stable_sort_by_key(keyed);
  std::vector<size_t> idx(keyed.size());
  for (size_t k = 0; k < keyed.size(); ++k) idx[k] = keyed[k].i;
  for (size_t lo = 0, hi; lo < keyed.size(); lo = hi) {
    for (hi = lo + 1; hi < keyed.size() && keyed[hi].key == keyed[lo].key;) ++hi;
    if (hi - lo < 2) continue;
    if (nobj == 2) {  // a run is in index order: a stable sort by f2 breaks ties by index
      run.resize(hi - lo);
      for (size_t k = lo; k < hi; ++k) run[k - lo] = {f(idx[k], 1), idx[k]};
      stable_sort_by_key(run);
      for (size_t k = lo; k < hi; ++k) idx[k] = run[k - lo].i;
    } else {
      std::sort(idx.begin() + ptrdiff_t(lo), idx.begin() + ptrdiff_t(hi), [&](size_t a, size_t b) {
        for (int32_t j = 1; j < nobj; ++j)
          if (f(a, j) != f(b, j)) return f(a, j) < f(b, j);
        return a < b;
      });
    }
  }
  return idx;
}

}  // namespace

std::vector<int32_t> nondominated_sort(const double* obj, size_t stride, int32_t nobj, size_t n, std::vector<size_t>* order,
                                       const std::vector<size_t>* sorted_prefix) {
  std::vector<int32_t> rank(n, 0);
  if (order) order->clear();
  if (n == 0) return rank;
  auto f = [&](size_t i, int32_t j) { return obj[size_t(j) * stride + i]; };
  // The points in lexicographic order: those after the prefix sorted here, and merged with the
  // prefix's order (on equal objectives the prefix's point, the lower index, first).
  const size_t m = sorted_prefix ? sorted_prefix->size() : 0;
  std::vector<size_t> idx = lex_order(obj, stride, nobj, m, n);
  if (m > 0) {
    std::vector<size_t> merged(n);
    std::merge(sorted_prefix->begin(), sorted_prefix->end(), idx.begin(), idx.end(), merged.begin(), [&](size_t a, size_t b) {
      for (int32_t j = 0; j < nobj; ++j)
        if (f(a, j) != f(b, j)) return f(a, j) < f(b, j);
      return false;
    });
    idx.swap(merged);
  }
  if (order) *order = idx;  // (a copy: idx is read below)
  if (nobj == 1) {
    for (size_t k = 1; k < n; ++k) rank[idx[k]] = rank[idx[k - 1]] + (f(idx[k], 0) == f(idx[k - 1], 0) ? 0 : 1);
    return rank;
  }
  // The values in that order (one gather), so that what follows reads them in sequence rather
  // than at random (cache misses took most of this function): point k in lexicographic order has
  // objective j at lex[j * n + k].
  std::vector<double> lex(size_t(nobj) * n);
  for (int32_t j = 0; j < nobj; ++j)
    for (size_t k = 0; k < n; ++k) lex[size_t(j) * n + k] = f(idx[k], j);
  // The objectives that decide dominance: the first, and each other one that is not a
  // non-decreasing function of it over these points (equal where the first is equal, no smaller
  // where it is larger: in lexicographic order, from each point to the next). Such a function (a
  // constant; throughput, or runtime x bandwidth, where the batch or bandwidth is fixed) is at
  // or below another point's wherever the first is, and equal wherever the first is, so leaving
  // it out changes neither who dominates whom nor which points are equal. Fewer objectives take
  // the faster sorts below: with `objectives: all` throughput is one such (a fixed batch), and
  // on a space with a fixed network, so are cost and runtime x bandwidth or x cost.
  std::vector<const double*> col{lex.data()};
  for (int32_t j = 1; j < nobj; ++j) {
    const double* v = &lex[size_t(j) * n];
    size_t k = 1;
    while (k < n && (lex[k] == lex[k - 1] ? v[k] == v[k - 1] : v[k] >= v[k - 1])) ++k;
    if (k < n) col.push_back(v);
  }
  if (col.size() == 1) {  // every objective a function of the first: as with one
    for (size_t k = 1; k < n; ++k) rank[idx[k]] = rank[idx[k - 1]] + (lex[k] == lex[k - 1] ? 0 : 1);
    return rank;
  }
  const double *f1 = col[0], *f2 = col[1], *f3 = col.size() > 2 ? col[2] : nullptr;
  if (col.size() == 2) {
    // Every earlier point has a lower f1 (or equal f1 and lower f2), so it dominates the
    // current one iff its f2 <= the current f2 (equal vectors excepted). min_f2[k] is
    // non-decreasing in k, so the first front not dominating the point is found by bisection.
    std::vector<double> min_f2;
    int32_t front = 0;
    for (size_t k = 0; k < n; ++k) {
      const double y = f2[k];
      if (k == 0 || f1[k] != f1[k - 1] || y != f2[k - 1]) {  // not the point before again
        front = int32_t(first_above(min_f2, y));
        if (size_t(front) == min_f2.size()) min_f2.push_back(y);
        else min_f2[size_t(front)] = std::min(min_f2[size_t(front)], y);
      }
      rank[idx[k]] = front;
    }
    return rank;
  }
  // Three objectives: each front kept as its staircase in (f2, f3) (Staircase, above). Every
  // member precedes the point in lexicographic order, so its f1 is no larger, and a member
  // dominates the point iff its f2 and f3 are no larger (equal vectors excepted): a front
  // dominates it iff the staircase's last step at or before its f2 has an f3 at or below its f3,
  // and a member that another matches or beats in (f2, f3) is never needed. A front that
  // dominates the point has every front before it
  // dominate it too (a member there dominates the dominating member, and dominance is
  // transitive), so the first front not dominating it is found by bisection, as with two
  // objectives (O(n log^2 n); ENS-SS, quadratic in the size of the fronts, took most of a second
  // a generation at a population of 10^5).
  if (col.size() == 3) {
    // The distinct points (those unequal to the point before; equal ones take its rank at the
    // end) 8 at a time: each one's first front not dominating it among the fronts of the points
    // before the 8, by bisections over the fronts for the 8 together (Staircases::advance; a
    // last, short group is padded with copies of its last point), then raised past the rank of
    // any of the 8 before it that dominates it (their f1 is no larger, and they differ, so a
    // lower or equal f2 and f3 dominate), since a point's rank is one past the highest rank of
    // the points that dominate it; then the 8 join their fronts in order.
    constexpr size_t B = 8;
    Staircases fronts;
    std::vector<size_t> distinct;  // positions in lexicographic order
    distinct.reserve(n);
    for (size_t k = 0; k < n; ++k)
      if (k == 0 || f1[k] != f1[k - 1] || f2[k] != f2[k - 1] || f3[k] != f3[k - 1]) distinct.push_back(k);
    for (size_t at = 0; at < distinct.size(); at += B) {
      const size_t m = std::min(B, distinct.size() - at);
      double y2[B], y3[B];
      size_t r[B] = {};
      for (size_t b = 0; b < B; ++b) y2[b] = f2[distinct[at + std::min(b, m - 1)]], y3[b] = f3[distinct[at + std::min(b, m - 1)]];
      // r[b]: the number of fronts dominating point b, by a bisection over the answers 0 ..
      // size() whose steps do not depend on the answer. With many fronts, first whether the last
      // one dominates all 8 (each then starts a new front): points in a chain, each dominating the
      // next, had bisections that missed the cache in step (2 x 10^5 such points took 39 ms, 22
      // with this test, as before the interleaving).
      bool all_new = false;
      if (fronts.size() >= 1024) {
        size_t top[B];
        std::fill(top, top + B, fronts.size() - 1);
        fronts.advance<B>(top, 1, y2, y3);
        all_new = std::count(top, top + B, fronts.size()) == ptrdiff_t(B);
      }
      if (all_new) std::fill(r, r + B, fronts.size());
      else
        for (size_t len = fronts.size() + 1; len > 1; len -= len / 2) fronts.advance<B>(r, len / 2, y2, y3);
      for (size_t b = 0; b < m; ++b) {
        for (size_t a = 0; a < b; ++a) r[b] = std::max(r[b], (r[a] + 1) & -size_t((y2[a] <= y2[b]) & (y3[a] <= y3[b])));
        fronts.add(r[b], y2[b], y3[b]);
        rank[idx[distinct[at + b]]] = int32_t(r[b]);
      }
    }
    for (size_t k = 1; k < n; ++k)
      if (f1[k] == f1[k - 1] && f2[k] == f2[k - 1] && f3[k] == f3[k - 1]) rank[idx[k]] = rank[idx[k - 1]];
    return rank;
  }
  // Four or more: the same bisection over the fronts, each front a KdFronts set. The points'
  // values point by point (point k's j-th objective of those kept at rows[k * w + j]: read in
  // sequence). Equal points take the rank of the one before them (and are not added again).
  const size_t w = col.size(), d = w - 1;
  std::vector<double> rows(w * n);
  for (size_t k = 0; k < n; ++k)
    for (size_t j = 0; j < w; ++j) rows[k * w + j] = col[j][k];
  const auto same_as_before = [&](size_t k) { return k > 0 && std::equal(&rows[k * w], &rows[k * w + w], &rows[k * w - w]); };
  KdFronts fronts(d);
  // The fronts dominating y, by bisection over 0 .. size(); with many fronts, first whether the
  // last one does (a point then starts a new front).
  const auto fronts_dominating = [&](const double* y) {
    size_t r = 0, len = fronts.size() + 1;
    if (fronts.size() >= 64 && fronts.dominated(fronts.size() - 1, y)) r = fronts.size(), len = 1;
    for (; len > 1; len -= len / 2)
      if (fronts.dominated(r + len / 2 - 1, y)) r += len / 2;
    return r;
  };
  const int threads = n >= 8192 ? omp_get_max_threads() : 1;
  if (threads == 1) {
    for (size_t k = 0; k < n; ++k) {
      if (same_as_before(k)) {
        rank[idx[k]] = rank[idx[k - 1]];
        continue;
      }
      const size_t r = fronts_dominating(&rows[k * w + 1]);
      fronts.add(r, &rows[k * w + 1]);
      rank[idx[k]] = int32_t(r);
    }
    return rank;
  }
  // On several threads, blocks of kBlock points in lexicographic order: first, in parallel,
  // each point's fronts among the points before its block, r[b] (the fronts only read); then, in
  // order, the block's own points. A front that dominates a point has every front before it
  // dominate it too (a dominating member has a dominator in each front before its own), so r[b]
  // is one more than the highest rank of a dominator before the block, no front from r[b] on
  // holds one, and the rank is the first front from r[b] on in which no earlier point of the
  // block dominates it: the block's points are linked by rank (latest[f], the latest of rank f,
  // then next[]), and only those of ranks r[b], r[b] + 1, ... are tested. Same ranks as the
  // loop above.
  constexpr size_t kBlock = 1024;
  size_t r[kBlock];
  int32_t next[kBlock];
  std::vector<int32_t> latest;  // latest[f]: the block's latest point of rank f, or -1
  std::vector<size_t> used;     // the ranks latest[] holds a point of
  for (size_t at = 0; at < n; at += kBlock) {
    const int64_t m = int64_t(std::min(kBlock, n - at));
#pragma omp parallel for schedule(dynamic, 8) num_threads(threads)
    for (int64_t b = 0; b < m; ++b) r[b] = same_as_before(at + size_t(b)) ? 0 : fronts_dominating(&rows[(at + size_t(b)) * w + 1]);
    for (size_t b = 0; b < size_t(m); ++b) {
      const size_t k = at + b;
      if (same_as_before(k)) {  // as the point before, which is linked already where it is in the block
        rank[idx[k]] = rank[idx[k - 1]];
        continue;
      }
      const double* y = &rows[k * w + 1];
      const auto dominated_in_block = [&](size_t f) {
        for (int32_t a = f < latest.size() ? latest[f] : -1; a >= 0; a = next[a])
          if (at_or_below(&rows[(at + size_t(a)) * w + 1], y, d)) return true;
        return false;
      };
      size_t f = r[b];
      while (dominated_in_block(f)) ++f;
      fronts.add(f, y);
      rank[idx[k]] = int32_t(f);
      if (f >= latest.size()) latest.resize(f + 1, -1);
      if (latest[f] < 0) used.push_back(f);
      next[b] = latest[f];
      latest[f] = int32_t(b);
    }
    for (size_t f : used) latest[f] = -1;
    used.clear();
  }
  return rank;
}

std::vector<int32_t> constrained_ranks(const Scores& s, size_t needed, RankOrders* orders) {
  // The points by feasibility, in index order; pos[i]: point i's place in its list (for the
  // points the caller's orders cover).
  size_t of = orders ? std::min(orders->of, s.size) : 0;
  std::vector<size_t> feas, infeas, pos(of);
  feas.reserve(s.size);
  infeas.reserve(s.size);
  for (size_t i = 0; i < s.size; ++i) {
    auto& list = s.feasible(i) ? feas : infeas;
    if (i < of) pos[i] = list.size();
    list.push_back(i);
  }
  // The caller's orders count: where they do not cover the points below `of` (a reduced call
  // left the infeasible ones unsorted), everything is sorted here.
  const auto below = [&](const std::vector<size_t>& v) { return size_t(std::lower_bound(v.begin(), v.end(), of) - v.begin()); };
  if (orders && (orders->feasible.size() != below(feas) || orders->infeasible.size() != below(infeas))) of = 0;
  const size_t known_feas = of ? orders->feasible.size() : 0, known_infeas = of ? orders->infeasible.size() : 0;
  std::vector<int32_t> rank(s.size, 0);
  std::vector<double> cols(size_t(s.nobj) * feas.size());
  for (int32_t j = 0; j < s.nobj; ++j)
    for (size_t k = 0; k < feas.size(); ++k) cols[size_t(j) * feas.size() + k] = s.at(feas[k], j);
  std::vector<size_t> prefix(known_feas), lex;  // in the feasible points' own indices
  for (size_t k = 0; k < known_feas; ++k) prefix[k] = pos[orders->feasible[k]];
  const std::vector<int32_t> r = nondominated_sort(cols.data(), feas.size(), s.nobj, feas.size(), orders ? &lex : nullptr, &prefix);
  int32_t next = 0;
  for (size_t k = 0; k < feas.size(); ++k) {
    rank[feas[k]] = r[k];
    next = std::max(next, r[k] + 1);
  }
  if (orders) {
    for (size_t& k : lex) k = feas[k];
    orders->of = s.size;
    orders->feasible.swap(lex);
  }
  if (feas.size() >= needed) {  // the infeasible points come after `needed` others: one rank for all
    for (size_t i : infeas) rank[i] = next;
    if (orders) orders->infeasible.clear();
    return rank;
  }
  // By (violation, index): the points after the known ones sorted (from index order, so ties go
  // by index), then merged after the known ones where violations are equal.
  std::vector<Keyed> by_violation(infeas.size() - known_infeas);
  for (size_t k = known_infeas; k < infeas.size(); ++k) by_violation[k - known_infeas] = {s.violation[infeas[k]], infeas[k]};
  stable_sort_by_key(by_violation);
  for (size_t k = known_infeas; k < infeas.size(); ++k) infeas[k] = by_violation[k - known_infeas].i;
  if (known_infeas > 0) {
    std::vector<size_t> merged(infeas.size());
    std::merge(orders->infeasible.begin(), orders->infeasible.end(), infeas.begin() + ptrdiff_t(known_infeas), infeas.end(),
               merged.begin(), [&](size_t a, size_t b) { return s.violation[a] < s.violation[b]; });
    infeas.swap(merged);
  }
  for (size_t k = 0; k < infeas.size(); ++k) {
    if (k > 0 && s.violation[infeas[k]] != s.violation[infeas[k - 1]]) ++next;
    rank[infeas[k]] = next;
  }
  if (orders) orders->infeasible.swap(infeas);
  return rank;
}

std::vector<double> crowding_distance(const double* obj, size_t stride, int32_t nobj, const std::vector<size_t>& front) {
  const size_t m = front.size();
  std::vector<double> d(m, 0.0);
  if (m <= 2) {
    std::fill(d.begin(), d.end(), std::numeric_limits<double>::infinity());
    return d;
  }
  // Per objective, the front's members by (value, index); `i` holds the position in the front
  // (front[] is in increasing index order, so a stable sort from position order breaks ties by
  // index).
  std::vector<Keyed> sorted(m);
  for (int32_t j = 0; j < nobj; ++j) {
    const double* fj = obj + size_t(j) * stride;
    for (size_t k = 0; k < m; ++k) sorted[k] = {fj[front[k]], k};
    stable_sort_by_key(sorted);
    const double lo = sorted.front().key, hi = sorted.back().key;
    d[sorted.front().i] = d[sorted.back().i] = std::numeric_limits<double>::infinity();
    if (!(hi > lo)) continue;
    for (size_t k = 1; k + 1 < m; ++k) d[sorted[k].i] += (sorted[k + 1].key - sorted[k - 1].key) / (hi - lo);
  }
  return d;
}

std::vector<double> crowding_distance_lex2(const double* f1, const double* f2, size_t m) {
  std::vector<double> d(m, 0.0);
  if (m <= 2) {
    std::fill(d.begin(), d.end(), std::numeric_limits<double>::infinity());
    return d;
  }
  // By f2 and index: the groups of equal points in reverse, each group in index order.
  std::vector<size_t> by_f2;  // positions in the lexicographic order
  by_f2.reserve(m);
  for (size_t hi = m; hi > 0;) {
    size_t lo = hi - 1;
    while (lo > 0 && f1[lo - 1] == f1[hi - 1]) --lo;  // equal f1 in a front: equal points
    for (size_t k = lo; k < hi; ++k) by_f2.push_back(k);
    hi = lo;
  }
  const double inf = std::numeric_limits<double>::infinity();
  const auto add = [&](const double* f, const auto& pos) {  // pos(k): the lex position k-th by f
    const double lo = f[pos(0)], hi = f[pos(m - 1)];
    d[pos(0)] = d[pos(m - 1)] = inf;
    if (!(hi > lo)) return;
    for (size_t k = 1; k + 1 < m; ++k) d[pos(k)] += (f[pos(k + 1)] - f[pos(k - 1)]) / (hi - lo);
  };
  add(f1, [](size_t k) { return k; });
  add(f2, [&](size_t k) { return by_f2[k]; });
  return d;
}

Nsga2::Nsga2(std::vector<int32_t> card, int32_t nobj, Nsga2Params p, uint64_t seed)
    : card_(std::move(card)), nobj_(nobj), p_(p), seed_(seed), rows_(card_), children_(card_) {
  mutation_rate_ = mutation_rate_for(p_.mutation_rate, card_.size());
}

bool Nsga2::wins(size_t a, size_t b) const { return stands_before(crowded_.data(), a, b); }

// Binary tournament on (rank, crowding distance), Deb et al. 2002.
Breeding Nsga2::parents() const { return Breeding(rows_, crowded_, 2, p_.crossover_rate, mutation_rate_); }

void Nsga2::do_ask(Population& pop) {
  check_sizes(pop, size_t(p_.population), int32_t(card_.size()), "nsga2");
  breed(pop, card_, seed_, gen_, parents(), &children_);
}

bool Nsga2::breeding(BreedTask& task) {
  return breed_task(task, parents(), size_t(p_.population), card_, seed_, gen_, children_);
}

// Ranks and crowding distances (crowded_) of a population's scores, for a caller that keeps the
// first `keep` individuals in the crowded order (rank, then distance): crowding distances are
// computed for the fronts up to the one that reaches `keep` individuals (the others keep 0), and
// constrained_ranks may give all infeasible points one rank when `keep` points are feasible.
// The kept individuals get the (rank, distance) a full assignment would give them. Returns the
// fronts. `orders` as for constrained_ranks.
Nsga2::Fronts Nsga2::assign(const Scores& s, size_t keep, RankOrders& orders) {
  const std::vector<int32_t> rank = constrained_ranks(s, keep, &orders);
  const std::vector<size_t>& lex = orders.feasible;
  crowded_.resize(s.size);
  int32_t nfronts = 0;
  for (size_t i = 0; i < s.size; ++i) {
    crowded_[i] = {rank[i], 0.0};
    nfronts = std::max(nfronts, rank[i] + 1);
  }
  // Members of each front in index order (a counting sort by rank).
  Fronts fronts;
  std::vector<size_t>&start = fronts.start, &members = fronts.members;
  start.assign(size_t(nfronts) + 1, 0);
  members.resize(s.size);
  for (int32_t r : rank) ++start[size_t(r) + 1];
  for (size_t f = 0; f < size_t(nfronts); ++f) start[f + 1] += start[f];
  std::vector<size_t> at(start.begin(), start.end() - 1);
  for (size_t i = 0; i < s.size; ++i) members[at[size_t(rank[i])]++] = i;
  // With two objectives, the feasible fronts' members also in lexicographic order (the same
  // counting sort over `lex`), which crowding_distance_lex2 needs instead of two sorts a front.
  std::vector<size_t> members_lex;
  if (s.nobj == 2) {
    members_lex.resize(lex.size());
    std::copy(start.begin(), start.end() - 1, at.begin());
    for (size_t i : lex) members_lex[at[size_t(rank[i])]++] = i;
  }
  // The fronts are independent: on the threads, each front whole on one (the same distances on
  // any thread count).
  int64_t crowded_fronts = 0;
  while (crowded_fronts < nfronts && start[size_t(crowded_fronts)] < keep) ++crowded_fronts;
#pragma omp parallel for schedule(dynamic, 1) if (s.size >= 8192)
  for (int64_t fi = 0; fi < crowded_fronts; ++fi) {
    const size_t f = size_t(fi);
    if (start[f] == start[f + 1] || !s.feasible(members[start[f]])) continue;  // infeasible fronts: distance 0
    const auto& from = s.nobj == 2 ? members_lex : members;
    const std::vector<size_t> fr(from.begin() + ptrdiff_t(start[f]), from.begin() + ptrdiff_t(start[f + 1]));
    std::vector<double> d;
    if (s.nobj == 2) {
      std::vector<double> f1(fr.size()), f2(fr.size());  // the front's values in lexicographic order
      for (size_t k = 0; k < fr.size(); ++k) f1[k] = s.at(fr[k], 0), f2[k] = s.at(fr[k], 1);
      d = crowding_distance_lex2(f1.data(), f2.data(), fr.size());
    } else {
      d = crowding_distance(s.obj.data(), s.size, s.nobj, fr);
    }
    for (size_t k = 0; k < fr.size(); ++k) crowded_[fr[k]].distance = d[k];
  }
  return fronts;
}

void Nsga2::do_tell(const Population& pop, const Scores& scores) {
  if (scores.nobj != nobj_)
    throw std::invalid_argument("nsga2: scores of " + std::to_string(scores.nobj) + " objectives, for an agent of " +
                                std::to_string(nobj_));
  ++gen_;
  if (rows_.size() == 0) {
    rows_.swap(children_);
    parent_scores_ = scores;
    parent_orders_ = {};
    assign(parent_scores_, scores.size, parent_orders_);
    return;
  }
  // Parents and children together (parents first), then the best P by (rank, crowding distance).
  const size_t P = parent_scores_.size, N = P + pop.size;
  rows_.append(children_);
  Scores all_s;
  all_s.resize(scores.nobj, N);
#pragma omp parallel for schedule(static) if (N >= 8192)
  for (int64_t i = 0; i < int64_t(N); ++i) {
    const size_t k = size_t(i);
    if (k < P) copy_scores(parent_scores_, k, all_s, k);
    else copy_scores(scores, k - P, all_s, k);
  }
  RankOrders orders = std::move(parent_orders_);
  const Fronts fronts = assign(all_s, P, orders);
  // The first P in the crowded order (wins(): rank, larger distance, index): every front before
  // the one that crosses P, and the winners of that front by distance.
  size_t cut = 0;  // the front that crosses P
  while (fronts.start[cut + 1] < P) ++cut;
  const size_t before = fronts.start[cut];
  std::vector<size_t> last(fronts.members.begin() + ptrdiff_t(before),
                           fronts.members.begin() + ptrdiff_t(fronts.start[cut + 1]));
  std::nth_element(last.begin(), last.begin() + ptrdiff_t(P - before), last.end(),
                   [&](size_t a, size_t b) { return wins(a, b); });
  std::vector<char> survives(N, 0);
  for (size_t k = 0; k < before; ++k) survives[fronts.members[k]] = 1;
  for (size_t k = 0; k < P - before; ++k) survives[last[k]] = 1;
  // The survivors in index order. As in Deb et al. 2002, they keep the (rank, distance) of the
  // selection for the next generation's tournaments.
  std::vector<size_t> kept, new_index(N);
  kept.reserve(P);
  for (size_t i = 0; i < N; ++i)
    if (survives[i]) new_index[i] = kept.size(), kept.push_back(i);
  rows_.keep(kept);
  // The survivors' orders, in their new indices (which keep the old ones' order).
  parent_orders_.of = P;
  for (auto [from, to] : {std::pair{&orders.feasible, &parent_orders_.feasible}, {&orders.infeasible, &parent_orders_.infeasible}}) {
    to->clear();
    for (size_t i : *from)
      if (survives[i]) to->push_back(new_index[i]);
  }
  parent_scores_.resize(scores.nobj, P);
  std::vector<Crowded> crowded(P);
#pragma omp parallel for schedule(static) if (P >= 8192)
  for (int64_t k = 0; k < int64_t(P); ++k) {
    copy_scores(all_s, kept[size_t(k)], parent_scores_, size_t(k));
    crowded[size_t(k)] = crowded_[kept[size_t(k)]];
  }
  crowded_.swap(crowded);
}

// The parents, their scores and the (rank, distance) of the selection that kept them.
void Nsga2::save(StateWriter& w) const {
  w.put(gen_);
  rows_.save(w);
  parent_scores_.save(w);
  std::vector<int32_t> rank(crowded_.size());
  std::vector<double> distance(crowded_.size());
  for (size_t i = 0; i < crowded_.size(); ++i) rank[i] = crowded_[i].rank, distance[i] = crowded_[i].distance;
  w.put(rank);
  w.put(distance);
}

void Nsga2::load(StateReader& r) {
  r.get(gen_);
  rows_.load(r);
  parent_scores_.load(r);
  std::vector<int32_t> rank;
  std::vector<double> distance;
  r.get(rank);
  r.get(distance);
  if (parent_scores_.size != rows_.size() || rank.size() != rows_.size() || distance.size() != rows_.size())
    throw std::runtime_error("agent state: nsga2 parents, scores and ranks differ in number");
  crowded_.resize(rank.size());
  for (size_t i = 0; i < rank.size(); ++i) crowded_[i] = {rank[i], distance[i]};
  parent_orders_ = {};
}

}  // namespace cosmic::agents
