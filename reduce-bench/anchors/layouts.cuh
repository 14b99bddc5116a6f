// The segment layouts `bench seglayouts --layouts DIR` writes (u32 CSR offsets, one file
// `<layout>@<N>.u32` each), as the anchors that reduce or scan them read them.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

// The names of the files in `dir` that end with `suffix` ("@67108864.u32", or ".u32" for all),
// without the mean-length sweep's ("sweep...") unless `sweep`.
inline std::vector<std::string> layout_files(const std::string& dir, const std::string& suffix, bool sweep) {
  std::vector<std::string> files;
  if (FILE* p = popen(("ls " + dir + " 2>/dev/null").c_str(), "r")) {
    char line[512];
    while (fgets(line, sizeof line, p)) {
      std::string f(line);
      while (!f.empty() && (f.back() == '\n' || f.back() == '\r')) f.pop_back();
      if (f.size() > suffix.size() && f.compare(f.size() - suffix.size(), suffix.size(), suffix) == 0 &&
          (sweep || f.rfind("sweep", 0) != 0))
        files.push_back(f);
    }
    pclose(p);
  }
  return files;
}

// The offsets in the file `path`, as `T` (empty where it cannot be read).
template <class T>
std::vector<T> read_offsets(const std::string& path) {
  std::vector<T> offsets;
  if (FILE* in = fopen(path.c_str(), "rb")) {
    uint32_t v;
    while (fread(&v, 4, 1, in) == 1) offsets.push_back((T)v);
    fclose(in);
  }
  return offsets;
}
