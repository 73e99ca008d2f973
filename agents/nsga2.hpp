// NSGA-II (Deb, Pratap, Agarwal & Meyarivan 2002) for two or more objectives, with the
// constrained-domination of that paper (feasible points dominate infeasible ones; infeasible
// points rank by violation, Deb 2000):
//   - non-dominated sorting: 2 objectives O(N log N) (sort by f1, then each point joins the
//     first front whose lowest f2 so far exceeds its f2, found by binary search; Jensen 2003);
//     3, the same bisection over the fronts, each front kept as its staircase in (f2, f3);
//     4 or more, the same bisection, each front kept as k-d trees over objectives 2..M (a
//     front dominates a point iff one of its members lies at or below it in all of them);
//   - crowding distance within each front; survivors of parents + children by (rank, distance);
//   - children by binary tournaments on (rank, crowding), uniform crossover and per-gene
//     categorical mutation (the GA's operators).
// Points with equal objective vectors do not dominate each other (same front).
#pragma once

#include <cstdint>
#include <vector>

#include "agents/agent.hpp"
#include "agents/common.hpp"
#include "agents/params.hpp"

namespace cosmic::agents {

struct Nsga2Params {
  int64_t population = 4096;    // nsga2.population
  double crossover_rate = 0.9;  // nsga2.crossover_rate
  double mutation_rate = -1;    // nsga2.mutation_rate: per gene; auto (-1) = 1 / genes
  static Nsga2Params from(const Params& p, Params* effective = nullptr);
};

// Front index (0 = non-dominated) of each of the n points; objective j of point i is
// obj[j * stride + i]. Minimisation. `order`, when given, receives the points in lexicographic
// order (objective 0, then 1, ..., then index), which the sort goes through. `sorted_prefix`,
// when given, is that order of the points 0 .. m - 1 (m its size), known from an earlier call:
// only the points after them are sorted, and merged with it.
std::vector<int32_t> nondominated_sort(const double* obj, size_t stride, int32_t nobj, size_t n,
                                       std::vector<size_t>* order = nullptr,
                                       const std::vector<size_t>* sorted_prefix = nullptr);

// The orders constrained_ranks goes through, of the points 0 .. of - 1: the feasible points in
// lexicographic order, the infeasible ones by (violation, index).
struct RankOrders {
  size_t of = 0;
  std::vector<size_t> feasible, infeasible;
};

// Ranks with constraints: feasible points by nondominated_sort, then infeasible ones after the
// last feasible front, one front per distinct violation, smaller first. A caller that needs the
// order of the first `needed` points only may pass it: when that many are feasible, every
// infeasible point gets the same rank after the feasible fronts (no sort by violation).
// `orders`, when given, holds the orders of the first orders->of points (a population's parents,
// say: the ranking then sorts only the points after them), and receives those of all points (of
// the infeasible ones none, where `needed` spared their sort).
std::vector<int32_t> constrained_ranks(const Scores& s, size_t needed = SIZE_MAX, RankOrders* orders = nullptr);

// Crowding distance of the points `front` (indices into obj, increasing: equal values are
// ordered by index); boundary points get infinity.
std::vector<double> crowding_distance(const double* obj, size_t stride, int32_t nobj, const std::vector<size_t>& front);

// The same for two objectives, with the values of the front's m members given in lexicographic
// order (f1, f2, index; member k has values f1[k], f2[k] and gets d[k]), without sorting: in a
// front of two objectives f2 falls as f1 rises, and equal f1 means equal points, so the order by
// f2 is the lexicographic one with its groups of equal points reversed. Equal to
// crowding_distance bit for bit (the same sums in the same order).
std::vector<double> crowding_distance_lex2(const double* f1, const double* f2, size_t m);

class Nsga2 : public Agent {
 public:
  Nsga2(std::vector<int32_t> card, int32_t nobj, Nsga2Params p, uint64_t seed);
  std::string name() const override { return "nsga2"; }
  void save(StateWriter& w) const override;
  void load(StateReader& r) override;
  bool breeding(BreedTask& task) override;

 protected:
  void do_ask(Population& pop) override;
  void do_tell(const Population& pop, const Scores& scores) override;

 private:
  bool wins(size_t a, size_t b) const;  // crowded comparison
  Breeding parents() const;             // binary tournaments on the crowded comparison
  // The fronts of a population: front f's members, in index order, are
  // members[start[f]] .. members[start[f + 1] - 1].
  struct Fronts {
    std::vector<size_t> start, members;
  };
  Fronts assign(const Scores& s, size_t keep, RankOrders& orders);
  std::vector<int32_t> card_;
  int32_t nobj_;  // objectives of every tell()
  Nsga2Params p_;
  double mutation_rate_;
  uint64_t seed_;
  ParentRows rows_;      // the parents (and the children while selecting)
  ParentRows children_;  // the children of the last ask()
  uint64_t gen_ = 0;
  Scores parent_scores_;
  std::vector<Crowded> crowded_;  // per parent (per parent and child while selecting)
  // The parents' orders from the selection that kept them (none after load(): the next tell()
  // sorts them again, to the same orders), so that a generation sorts only its children.
  RankOrders parent_orders_;
};

}  // namespace cosmic::agents
