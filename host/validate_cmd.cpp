// `cosmic validate FILE.csv [--json]`: predicted vs measured, per row and summarised.
#include <iostream>

#include "host/cli.hpp"

#include "host/commands.hpp"
#include "host/csv.hpp"
#include "host/report.hpp"
#include "kernels/model.hpp"
#include "host/validate.hpp"

namespace cosmic {

int cmd_validate(int argc, const char* const* argv) {
  cxxopts::Options opts("cosmic validate",
                        "Compare the model with measured data. FILE is a ground-truth CSV of training runs\n"
                        "(columns of data/validation/groundtruth-dev.csv) or a CSV of collective timings\n"
                        "(columns of data/validation/astrasim-collectives-dev.csv, predicted with the\n"
                        "astra-sim convention). Prints per row predicted vs measured time and the signed\n"
                        "error, then rows skipped (with reasons) and the mean / median / max absolute error.");
  opts.positional_help("FILE.csv");
  opts.add_options()("file", "CSV file", cxxopts::value<std::string>())("json", "print JSON")(
      "row", "print the full evaluation of one ground-truth row's configuration (by row_id)",
      cxxopts::value<std::string>())("h,help", "show this help");
  opts.parse_positional({"file"});
  cxxopts::ParseResult args;
  int status = 0;
  if (!parse_command(opts, argc, argv, {{"file", "FILE.csv"}}, args, status)) return status;
  try {
    if (args.count("row")) {
      const std::string id = args["row"].as<std::string>();
      const std::string file = args["file"].as<std::string>();
      const CsvTable t = read_csv(file);
      if (csv_kind(t, file) != "training") throw std::runtime_error(file + ": --row needs a ground-truth CSV");
      for (const auto& row : t.rows) {
        if (row.count("row_id") == 0 || row.at("row_id") != id) continue;
        Config c;
        std::string why;
        if (!groundtruth_config(row, c, why)) throw std::runtime_error("row " + id + " is not modelled: " + why);
        const EvalReport rep = report_of(row.at("model_name"), "row " + id + " (" + row.at("gpu_type") + ")", c);
        if (args.count("json")) std::cout << json_text(to_json(rep), 2) << "\n";
        else std::cout << to_text(rep);
        return 0;
      }
      throw std::runtime_error(args["file"].as<std::string>() + ": no row with row_id " + id);
    }
    const ValidationReport rep = validate_file(args["file"].as<std::string>());
    if (args.count("json")) std::cout << json_text(to_json(rep), 2) << "\n";
    else std::cout << to_text(rep);
    if (rep.rows.empty()) {  // nothing compared: not a success
      std::cerr << "cosmic validate: no row of " << args["file"].as<std::string>() << " could be modelled"
                << (rep.skipped.empty() ? " (it has none)" : " (the skipped rows say why)") << "\n";
      return 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "cosmic validate: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace cosmic
