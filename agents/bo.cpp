#include "agents/bo.hpp"

#include <cmath>

#include "agents/common.hpp"

namespace cosmic::agents {

BoParams BoParams::from(const Params& p, Params* effective) {
  ParamReader r(p, "bo", effective);
  BoParams o;
  o.population = r.integer("population", o.population, 1, 1000000);
  o.startup = r.integer("startup", o.startup, 1, 100000000);
  o.gamma = r.real("gamma", o.gamma, 1e-6, 1);
  o.candidates = r.integer("candidates", o.candidates, 1, 100000);
  o.prior_weight = r.real("prior_weight", o.prior_weight, 1e-9, 1e9);
  r.finish();
  return o;
}

Bo::Bo(std::vector<int32_t> card, BoParams p, uint64_t seed) : card_(std::move(card)), p_(p), seed_(seed) {
  int32_t off = 0;
  for (int32_t c : card_) {
    offset_.push_back(off);
    off += c;
  }
  hist_.resize(1, 0);
}

uint64_t Bo::hash(const int32_t* genome) const { return fnv1a(genome, card_.size() * sizeof(int32_t)); }

void Bo::do_ask(Population& pop) {
  check_sizes(pop, size_t(p_.population), int32_t(card_.size()), "bo");
  const int32_t ng = int32_t(card_.size());
  const size_t n = hist_.size;
  if (n < size_t(p_.startup)) {
    random_population(pop, card_, seed_, gen_);
    return;
  }
  // Split the history: the best ceil(gamma n) points are good.
  const size_t ngood = std::max<size_t>(1, std::min(n - 1, size_t(std::ceil(p_.gamma * double(n)))));
  const std::vector<size_t> order = best_indices(hist_, n);
  const size_t nv = size_t(offset_.back() + card_.back());
  std::vector<double> good(nv, 0.0), bad(nv, 0.0);
  for (size_t k = 0; k < n; ++k) {
    std::vector<double>& t = k < ngood ? good : bad;
    const int32_t* x = &genomes_[order[k] * size_t(ng)];
    for (int32_t g = 0; g < ng; ++g) t[size_t(offset_[g] + x[g])] += 1;
  }
  // Smoothed densities, as cumulative weights for l (sampling) and log-ratios (scoring).
  std::vector<double> cum(nv), logratio(nv);
  for (int32_t g = 0; g < ng; ++g) {
    const double prior = p_.prior_weight / card_[g];
    double s = 0;
    for (int32_t v = 0; v < card_[g]; ++v) {
      const size_t j = size_t(offset_[g] + v);
      const double l = (good[j] + prior) / (double(ngood) + p_.prior_weight);
      const double b = (bad[j] + prior) / (double(n - ngood) + p_.prior_weight);
      s += l;
      cum[j] = s;
      logratio[j] = std::log(l) - std::log(b);
    }
  }
  std::unordered_set<uint64_t> batch;
  auto cand = std::vector<int32_t>(size_t(ng)), best = std::vector<int32_t>(size_t(ng));
  for (size_t i = 0; i < pop.size; ++i) {
    // A batch of 10^6 with many candidates runs for hours: a stop is heard every 64 points
    // (nothing of the agent has changed yet).
    if (i % 64 == 0 && stop_requested()) throw Interrupted();
    Rng r(stream_seed(seed_, gen_, i));
    double best_score = -INFINITY;
    for (int64_t c = 0; c < p_.candidates; ++c) {
      double score = 0;
      for (int32_t g = 0; g < ng; ++g) {
        const double* cg = &cum[size_t(offset_[g])];
        const double x = r.uniform() * cg[card_[g] - 1];
        int32_t v = 0;
        while (v < card_[g] - 1 && cg[v] <= x) ++v;
        cand[size_t(g)] = v;
        score += logratio[size_t(offset_[g] + v)];
      }
      const uint64_t h = hash(cand.data());
      if (seen_.count(h) || batch.count(h)) continue;
      if (score > best_score) {
        best_score = score;
        best = cand;
      }
    }
    // Every draw was a repeat (l has narrowed onto points already asked): a uniform genome not
    // asked before, or after 64 tries any.
    for (int tries = 0; best_score == -INFINITY && tries < 64; ++tries) {
      for (int32_t g = 0; g < ng; ++g) best[size_t(g)] = int32_t(r.below(uint64_t(card_[g])));
      const uint64_t h = hash(best.data());
      if (!seen_.count(h) && !batch.count(h)) break;
    }
    batch.insert(hash(best.data()));
    for (int32_t g = 0; g < ng; ++g) pop.at(i, g) = best[size_t(g)];
  }
}

void Bo::do_tell(const Population& pop, const Scores& scores) {
  ++gen_;
  const size_t n0 = hist_.size, m = pop.size;
  Scores h;
  h.resize(1, n0 + m);
  for (size_t i = 0; i < n0; ++i) copy_scores(hist_, i, h, i);
  std::vector<int32_t> x(size_t(pop.ngenes));
  for (size_t i = 0; i < m; ++i) {
    h.obj[n0 + i] = scores.at(i, 0);
    h.violation[n0 + i] = scores.violation[i];
    h.reason[n0 + i] = scores.reason[i];
    for (int32_t g = 0; g < pop.ngenes; ++g) x[size_t(g)] = pop.at(i, g);
    genomes_.insert(genomes_.end(), x.begin(), x.end());
    seen_.insert(hash(x.data()));
  }
  hist_ = std::move(h);
}

// The history (the set of genomes seen follows from it).
void Bo::save(StateWriter& w) const {
  w.put(gen_);
  w.put(genomes_);
  hist_.save(w);
}

void Bo::load(StateReader& r) {
  r.get(gen_);
  r.get(genomes_);
  hist_.load(r);
  if (genomes_.size() != hist_.size * card_.size()) throw std::runtime_error("agent state: bo history of the wrong shape");
  seen_.clear();
  for (size_t i = 0; i < hist_.size; ++i) seen_.insert(hash(&genomes_[i * card_.size()]));
}

}  // namespace cosmic::agents

