// Population search agents: one ask/tell interface over whole populations of genomes, so that
// each generation is a single batch-evaluator call (CPU threads or one CUDA launch).
//
//   agent.ask(pop)          -> the agent fills `pop` with the next genomes to evaluate
//   evaluate(pop) -> scores    (host/population.hpp)
//   agent.tell(pop, scores) -> the agent updates its state
//
// tell() takes the population the last ask() filled, unchanged: GA and NSGA-II keep the children
// they bred instead of reading them back. Agent::ask() and tell() keep that protocol and call
// each agent's do_ask() and do_tell().
//
// Genomes are stored as structure of arrays (gene-major), like the evaluator reads them.
// Every agent is seeded; given the same seed and the same scores it asks for the same genomes,
// whatever backend or thread count produced the scores (pagmo2's convention).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "agents/state.hpp"

namespace cosmic::agents {

struct Population {
  int32_t ngenes = 0;
  size_t size = 0;
  std::vector<int32_t> genes;  // genes[g * size + i]: gene g of individual i

  void resize(int32_t ng, size_t n) {
    ngenes = ng;
    size = n;
    genes.assign(size_t(ng) * n, 0);
  }
  int32_t& at(size_t i, int32_t g) { return genes[size_t(g) * size + i]; }
  int32_t at(size_t i, int32_t g) const { return genes[size_t(g) * size + i]; }
};

struct BreedTask;  // agents/common.hpp

// Scores of a population: objective values (lower is better) and feasibility.
struct Scores {
  int32_t nobj = 0;
  size_t size = 0;
  std::vector<double> obj;        // obj[j * size + i]
  std::vector<double> violation;  // 0 = feasible; > 0: how far from feasible (constraints, memory)
  std::vector<int32_t> reason;    // Reason code of the model (0 = OK), or -1 for a PSA constraint

  void resize(int32_t no, size_t n) {
    nobj = no;
    size = n;
    obj.assign(size_t(no) * n, 0.0);
    violation.assign(n, 0.0);
    reason.assign(n, 0);
  }
  double at(size_t i, int32_t j) const { return obj[size_t(j) * size + i]; }
  bool feasible(size_t i) const { return violation[i] == 0; }
  void save(StateWriter& w) const {
    w.put(nobj);
    w.put(uint64_t(size));
    w.put(obj);
    w.put(violation);
    w.put(reason);
  }
  void load(StateReader& r) {
    r.get(nobj);
    size = size_t(r.get<uint64_t>());
    r.get(obj);
    r.get(violation);
    r.get(reason);
    if (obj.size() != size_t(nobj) * size || violation.size() != size || reason.size() != size)
      throw std::runtime_error("agent state: scores of the wrong shape");
  }
};

// Feasibility rules (Deb 2000) on objective j: a feasible point beats an infeasible one; of two
// infeasible points the smaller violation wins; of two feasible points the lower objective.
inline bool better(const Scores& s, size_t a, const Scores& t, size_t b, int32_t j = 0) {
  const bool fa = s.feasible(a), fb = t.feasible(b);
  if (fa != fb) return fa;
  if (!fa) return s.violation[a] < t.violation[b];
  return s.at(a, j) < t.at(b, j);
}

// Thrown by an ask() that stopped early because the run asked it to (Agent::stop_when()): the
// agent is as it was before that ask(), and the population holds no generation.
struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("ask() interrupted") {}
};

class Agent {
 public:
  virtual ~Agent() = default;
  // The run's wish to stop (a signal, its time limit): an agent whose ask() may take long (BO's,
  // over a large batch) asks it now and then and throws Interrupted once it says yes.
  void stop_when(std::function<bool()> stop) { stop_ = std::move(stop); }
  virtual std::string name() const = 0;
  // Fills `pop` (already sized by the agent's population size and the space's gene count).
  void ask(Population& pop) {
    do_ask(pop);
    mark_asked(pop);
  }
  // Where the next ask() would breed children from parents (GA and NSGA-II after their first
  // generation): what it would breed, for an evaluator that breeds on its device
  // (PopulationEvaluator::breed()). The task points into the agent and is valid until its next
  // ask() or tell(). False where ask() must run.
  virtual bool breeding(BreedTask& /*task*/) { return false; }
  // In place of ask(): `pop` holds the children of breeding()'s task, bred elsewhere, and the
  // task's `children` rows were filled, as ask() would have filled both.
  void bred(const Population& pop) { mark_asked(pop); }
  // Takes the population the last ask() filled and its scores. Refused (std::invalid_argument),
  // with the agent left as it was, without an ask() since the last tell() or with a population
  // or scores of another shape.
  void tell(const Population& pop, const Scores& scores) {
    if (!asked_) throw std::invalid_argument(name() + ": tell() without a matching ask()");
    if (pop.size != asked_size_ || pop.ngenes != asked_genes_)
      throw std::invalid_argument(name() + ": tell() with a population of another shape than ask() filled");
    if (scores.nobj < 1 || scores.size != pop.size || scores.obj.size() != size_t(scores.nobj) * scores.size ||
        scores.violation.size() != scores.size || scores.reason.size() != scores.size)
      throw std::invalid_argument(name() + ": tell() with scores of another shape than the population");
    do_tell(pop, scores);  // which may refuse what only the agent knows of, before it changes
    asked_ = false;
  }
  // The state after a tell(), and back: an agent loaded with it asks what the saved one would
  // have asked next. load() is called on an agent made as the saved one was (name,
  // hyperparameters, seed, space); it throws on bytes that do not fit.
  virtual void save(StateWriter& w) const = 0;
  virtual void load(StateReader& r) = 0;

 protected:
  bool stop_requested() const { return stop_ && stop_(); }
  virtual void do_ask(Population& pop) = 0;
  virtual void do_tell(const Population& pop, const Scores& scores) = 0;

 private:
  void mark_asked(const Population& pop) {
    asked_ = true;
    asked_size_ = pop.size;
    asked_genes_ = pop.ngenes;
  }
  std::function<bool()> stop_;
  bool asked_ = false;  // an ask() not yet told
  size_t asked_size_ = 0;
  int32_t asked_genes_ = 0;
};

}  // namespace cosmic::agents
