// A small CSV reader (RFC 4180: quoted fields, doubled quotes, commas and newlines inside
// quotes). Rows are maps from header name to text.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cosmic {

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<int> line;  // 1-based line where each row starts
};

// Throws std::runtime_error naming the file on a read error or a row with the wrong field count.
CsvTable read_csv(const std::string& path);

}  // namespace cosmic
