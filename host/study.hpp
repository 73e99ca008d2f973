// `cosmic study`: runs the experiments of a study file (psa/study.hpp) in-process through the
// sweep (host/sweep.hpp) and search (host/search.hpp) entry points, each into its own HDF5 file
// in the output folder, then reads the best points back from those files, decodes and re-scores
// them with the model, computes the comparisons and writes report.md and summary.json next to
// them. Figures: scripts/study_plots.py (run when python3 with matplotlib and h5py is there).
#pragma once

#include <string>

namespace cosmic {

struct StudyOptions {
  std::string out_dir;
  std::string backend = "auto";  // auto, cpu, cuda
  bool quiet = false;            // no per-run progress (one line per experiment stays)
  bool reuse = false;            // skip runs whose complete HDF5 file (same PSA text, settings) exists
  int jobs = 1;                  // runs at a time; above 1 each is a child process (`cosmic sweep|search`)
                                 // with 1/jobs of the OpenMP threads
  bool plots = true;             // run scripts/study_plots.py when python3 can
};

// Returns the exit status (0 ok, 1 error, 130 / 143 interrupted). Throws on malformed input.
int run_study(const std::string& study_file, const StudyOptions& opts);

}  // namespace cosmic
