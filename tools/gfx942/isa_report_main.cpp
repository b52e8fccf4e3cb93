// dsa-gfx942-isa-report OUT_DIR NAME... : for each code object NAME, reads
// NAME.notes.txt (llvm-readelf --notes) and NAME.s (llvm-objdump -d) from
// OUT_DIR and writes OUT_DIR/isa_report.json and OUT_DIR/isa_report.md; prints
// the table. Exit 2 on a file it cannot read or parse.
#include <fstream>
#include <iostream>
#include <sstream>

#include "dsa/error.hpp"
#include "dsa/gfx942/isa_report.hpp"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw dsa::InvalidInput("path", "cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: dsa-gfx942-isa-report OUT_DIR CODE_OBJECT...\n";
    return 2;
  }
  try {
    const std::string dir = argv[1];
    std::vector<dsa::gfx942::KernelReport> all;
    for (int i = 2; i < argc; ++i) {
      const std::string name = argv[i];
      auto reports = dsa::gfx942::make_reports(name + ".hsaco", read_file(dir + "/" + name + ".notes.txt"),
                                               read_file(dir + "/" + name + ".s"));
      all.insert(all.end(), reports.begin(), reports.end());
    }
    const std::string table = dsa::gfx942::reports_table(all);
    std::ofstream(dir + "/isa_report.json") << dsa::gfx942::reports_json(all);
    std::ofstream(dir + "/isa_report.md") << table;
    std::cout << "gfx942 ISA report (" << dir << "/isa_report.json)\n" << table;
  } catch (const std::exception& e) {
    std::cerr << "dsa-gfx942-isa-report: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
