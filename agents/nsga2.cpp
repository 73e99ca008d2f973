#include "agents/nsga2.hpp"

#include <cmath>
#include <limits>

#include "agents/common.hpp"

namespace cosmic::agents {

Nsga2Params Nsga2Params::from(const Params& p) {
  ParamReader r(p, "nsga2");
  Nsga2Params o;
  o.population = r.integer("population", o.population, 2, 100000000);
  o.crossover_rate = r.real("crossover_rate", o.crossover_rate, 0, 1);
  o.mutation_rate = r.real_or_auto("mutation_rate", -1, 0, 1);
  r.finish();
  return o;
}

std::vector<int32_t> nondominated_sort(const double* obj, size_t stride, int32_t nobj, size_t n) {
  std::vector<int32_t> rank(n, 0);
  if (n == 0) return rank;
  auto f = [&](size_t i, int32_t j) { return obj[size_t(j) * stride + i]; };
  // Lexicographic order on the objectives, ties by index.
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), size_t(0));
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    for (int32_t j = 0; j < nobj; ++j)
      if (f(a, j) != f(b, j)) return f(a, j) < f(b, j);
    return a < b;
  });
  auto same = [&](size_t a, size_t b) {
    for (int32_t j = 0; j < nobj; ++j)
      if (f(a, j) != f(b, j)) return false;
    return true;
  };
  if (nobj == 1) {
    for (size_t k = 1; k < n; ++k) rank[idx[k]] = rank[idx[k - 1]] + (same(idx[k], idx[k - 1]) ? 0 : 1);
    return rank;
  }
  if (nobj == 2) {
    // Every earlier point has a lower f1 (or equal f1 and lower f2), so it dominates the
    // current one iff its f2 <= the current f2 (equal vectors excepted). min_f2[k] is
    // non-decreasing in k, so the first front not dominating the point is found by bisection.
    std::vector<double> min_f2;
    for (size_t k = 0; k < n; ++k) {
      const size_t i = idx[k];
      if (k > 0 && same(i, idx[k - 1])) {
        rank[i] = rank[idx[k - 1]];
        continue;
      }
      const double y = f(i, 1);
      const size_t front = size_t(std::upper_bound(min_f2.begin(), min_f2.end(), y) - min_f2.begin());
      if (front == min_f2.size()) min_f2.push_back(y);
      else min_f2[front] = std::min(min_f2[front], y);
      rank[i] = int32_t(front);
    }
    return rank;
  }
  // ENS-SS: a point joins the first front none of whose members dominates it; members are
  // checked latest first (Zhang, Tian, Cheng & Jin 2015). Only earlier points can dominate.
  auto dominates = [&](size_t a, size_t b) {
    bool strict = false;
    for (int32_t j = 0; j < nobj; ++j) {
      if (f(a, j) > f(b, j)) return false;
      if (f(a, j) < f(b, j)) strict = true;
    }
    return strict;
  };
  std::vector<std::vector<size_t>> fronts;
  for (size_t k = 0; k < n; ++k) {
    const size_t i = idx[k];
    if (k > 0 && same(i, idx[k - 1])) {
      rank[i] = rank[idx[k - 1]];
      fronts[size_t(rank[i])].push_back(i);
      continue;
    }
    size_t fr = 0;
    for (; fr < fronts.size(); ++fr) {
      bool dominated = false;
      for (size_t m = fronts[fr].size(); m-- > 0;)
        if (dominates(fronts[fr][m], i)) {
          dominated = true;
          break;
        }
      if (!dominated) break;
    }
    if (fr == fronts.size()) fronts.emplace_back();
    fronts[fr].push_back(i);
    rank[i] = int32_t(fr);
  }
  return rank;
}

std::vector<int32_t> constrained_ranks(const Scores& s) {
  std::vector<size_t> feas, infeas;
  for (size_t i = 0; i < s.size; ++i) (s.feasible(i) ? feas : infeas).push_back(i);
  std::vector<int32_t> rank(s.size, 0);
  std::vector<double> cols(size_t(s.nobj) * feas.size());
  for (int32_t j = 0; j < s.nobj; ++j)
    for (size_t k = 0; k < feas.size(); ++k) cols[size_t(j) * feas.size() + k] = s.at(feas[k], j);
  const std::vector<int32_t> r = nondominated_sort(cols.data(), feas.size(), s.nobj, feas.size());
  int32_t next = 0;
  for (size_t k = 0; k < feas.size(); ++k) {
    rank[feas[k]] = r[k];
    next = std::max(next, r[k] + 1);
  }
  std::sort(infeas.begin(), infeas.end(), [&](size_t a, size_t b) {
    return s.violation[a] != s.violation[b] ? s.violation[a] < s.violation[b] : a < b;
  });
  for (size_t k = 0; k < infeas.size(); ++k) {
    if (k > 0 && s.violation[infeas[k]] != s.violation[infeas[k - 1]]) ++next;
    rank[infeas[k]] = next;
  }
  return rank;
}

std::vector<double> crowding_distance(const double* obj, size_t stride, int32_t nobj, const std::vector<size_t>& front) {
  const size_t m = front.size();
  std::vector<double> d(m, 0.0);
  if (m <= 2) {
    std::fill(d.begin(), d.end(), std::numeric_limits<double>::infinity());
    return d;
  }
  std::vector<size_t> pos(m);
  for (int32_t j = 0; j < nobj; ++j) {
    const double* fj = obj + size_t(j) * stride;
    std::iota(pos.begin(), pos.end(), size_t(0));
    std::sort(pos.begin(), pos.end(), [&](size_t a, size_t b) {
      return fj[front[a]] != fj[front[b]] ? fj[front[a]] < fj[front[b]] : front[a] < front[b];
    });
    const double lo = fj[front[pos.front()]], hi = fj[front[pos.back()]];
    d[pos.front()] = d[pos.back()] = std::numeric_limits<double>::infinity();
    if (!(hi > lo)) continue;
    for (size_t k = 1; k + 1 < m; ++k) d[pos[k]] += (fj[front[pos[k + 1]]] - fj[front[pos[k - 1]]]) / (hi - lo);
  }
  return d;
}

Nsga2::Nsga2(std::vector<int32_t> card, int32_t nobj, Nsga2Params p, uint64_t seed)
    : card_(std::move(card)), nobj_(nobj), p_(p), seed_(seed) {
  mutation_rate_ = p_.mutation_rate < 0 ? 1.0 / double(std::max<size_t>(1, card_.size())) : p_.mutation_rate;
}

bool Nsga2::wins(size_t a, size_t b) const {
  if (rank_[a] != rank_[b]) return rank_[a] < rank_[b];
  if (crowd_[a] != crowd_[b]) return crowd_[a] > crowd_[b];
  return a < b;
}

void Nsga2::ask(Population& pop) {
  check_sizes(pop, size_t(p_.population), int32_t(card_.size()), "nsga2");
  // Binary tournament on (rank, crowding distance), Deb et al. 2002.
  breed(pop, card_, seed_, gen_, have_parents_, rows_, p_.crossover_rate, mutation_rate_, [&](Rng& r) {
    const size_t x = size_t(r.below(parents_.size)), y = size_t(r.below(parents_.size));
    return wins(y, x) ? y : x;
  });
}

// Ranks and crowding distances of a population (rank_, crowd_).
void Nsga2::assign(const Population&, const Scores& s) {
  rank_ = constrained_ranks(s);
  crowd_.assign(s.size, 0.0);
  int32_t nfronts = 0;
  for (int32_t r : rank_) nfronts = std::max(nfronts, r + 1);
  auto fronts = std::vector<std::vector<size_t>>(size_t(nfronts));
  for (size_t i = 0; i < s.size; ++i) fronts[size_t(rank_[i])].push_back(i);
  for (const auto& fr : fronts) {
    if (fr.empty() || !s.feasible(fr[0])) continue;  // infeasible fronts: distance 0
    const std::vector<double> d = crowding_distance(s.obj.data(), s.size, s.nobj, fr);
    for (size_t k = 0; k < fr.size(); ++k) crowd_[fr[k]] = d[k];
  }
}

void Nsga2::tell(const Population& pop, const Scores& scores) {
  ++gen_;
  if (!have_parents_) {
    parents_ = pop;
    parent_scores_ = scores;
    assign(parents_, parent_scores_);
    to_rows(parents_, rows_);
    have_parents_ = true;
    return;
  }
  // Parents and children together, then the best P by (rank, crowding distance).
  const size_t P = parents_.size, N = P + pop.size;
  Population all;
  all.resize(pop.ngenes, N);
  Scores all_s;
  all_s.resize(scores.nobj, N);
  for (int32_t g = 0; g < pop.ngenes; ++g) {
    std::copy_n(&parents_.genes[size_t(g) * P], P, &all.genes[size_t(g) * N]);
    std::copy_n(&pop.genes[size_t(g) * pop.size], pop.size, &all.genes[size_t(g) * N + P]);
  }
  for (size_t i = 0; i < P; ++i) copy_scores(parent_scores_, i, all_s, i);
  for (size_t i = 0; i < pop.size; ++i) copy_scores(scores, i, all_s, P + i);
  assign(all, all_s);
  std::vector<size_t> order(N);
  std::iota(order.begin(), order.end(), size_t(0));
  std::nth_element(order.begin(), order.begin() + ptrdiff_t(P), order.end(), [&](size_t a, size_t b) { return wins(a, b); });
  order.resize(P);
  std::sort(order.begin(), order.end());
  Population next;
  next.resize(pop.ngenes, P);
  Scores next_s;
  next_s.resize(scores.nobj, P);
  std::vector<int32_t> next_rank(P);
  std::vector<double> next_crowd(P);
  for (size_t k = 0; k < P; ++k) {
    for (int32_t g = 0; g < pop.ngenes; ++g) next.at(k, g) = all.at(order[k], g);
    copy_scores(all_s, order[k], next_s, k);
    next_rank[k] = rank_[order[k]];
    next_crowd[k] = crowd_[order[k]];
  }
  parents_ = std::move(next);
  parent_scores_ = std::move(next_s);
  // As in Deb et al. 2002, the survivors keep the (rank, distance) of the selection for the next
  // generation's tournaments.
  rank_ = std::move(next_rank);
  crowd_ = std::move(next_crowd);
  to_rows(parents_, rows_);
}

}  // namespace cosmic::agents
