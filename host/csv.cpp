#include "host/csv.hpp"

#include "psa/config.hpp"

#include <stdexcept>

namespace cosmic {

CsvTable read_csv(const std::string& path) {
  std::string text = psa::read_input(path, "a CSV file", size_t(256) << 20);
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);  // a UTF-8 byte-order mark, as spreadsheets write

  std::vector<std::vector<std::string>> records;
  std::vector<int> starts;
  std::vector<std::string> rec;
  std::string field;
  bool quoted = false, any = false;
  int line = 1, rec_line = 1;
  const auto end_record = [&] {
    if (any || !field.empty()) { rec.push_back(field); records.push_back(rec); starts.push_back(rec_line); }
    rec.clear(); field.clear(); any = false;
    rec_line = ++line;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    // A NUL byte is no text a CSV file holds (a UTF-16 file has one in every other byte).
    if (ch == '\0')
      throw std::runtime_error(path + ":" + std::to_string(line) + ": a NUL byte (is it a CSV file, in UTF-8 or ASCII?)");
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') { field += '"'; ++i; }
      else if (ch == '"') quoted = false;
      else { if (ch == '\n' || (ch == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'))) ++line; field += ch; }
      continue;
    }
    if (ch == '"') { quoted = true; any = true; }
    else if (ch == ',') { rec.push_back(field); field.clear(); any = true; }
    else if (ch == '\r') { if (i + 1 == text.size() || text[i + 1] != '\n') end_record(); }  // CR LF, or a lone CR
    else if (ch == '\n') end_record();
    else { field += ch; any = true; }
  }
  if (quoted) throw std::runtime_error(path + ":" + std::to_string(rec_line) + ": unterminated quoted field");
  if (any || !field.empty()) { rec.push_back(field); records.push_back(rec); starts.push_back(rec_line); }

  CsvTable t;
  if (records.empty()) throw std::runtime_error(path + ": empty CSV file");
  t.header = records[0];
  for (std::string& name : t.header) {  // ` tp` as spreadsheets may write it after a comma
    const size_t a = name.find_first_not_of(" \t"), b = name.find_last_not_of(" \t");
    name = a == std::string::npos ? "" : name.substr(a, b - a + 1);
  }
  for (size_t c = 0; c < t.header.size(); ++c)
    for (size_t d = 0; d < c; ++d)
      if (!t.header[c].empty() && t.header[d] == t.header[c])  // (unnamed columns are read by no one)
        throw std::runtime_error(path + ":" + std::to_string(starts[0]) + ": column " + std::to_string(c + 1) + ", '" +
                                 t.header[c] + "', is given twice (first as column " + std::to_string(d + 1) +
                                 "): which one holds the values?");
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != t.header.size())
      throw std::runtime_error(path + ":" + std::to_string(starts[r]) + ": expected " + std::to_string(t.header.size()) +
                               " fields (as the header on line " + std::to_string(starts[0]) + "), found " +
                               std::to_string(records[r].size()) + " (is it a CSV file?)");
    std::map<std::string, std::string> row;
    for (size_t c = 0; c < t.header.size(); ++c) row[t.header[c]] = records[r][c];
    t.rows.push_back(std::move(row));
    t.line.push_back(starts[r]);
  }
  return t;
}

}  // namespace cosmic
