// The measurements of a search by key (target, bucket, shape and candidate), backed by a file of
// one JSON line per measurement, so that an interrupted run resumes without measuring again.
#pragma once

#include <fstream>
#include <map>
#include <string>

#include "measure.h"

namespace attngen::tuner {

class Cache {
  public:
    // Reads the measurements of an earlier run when resuming (a line cut short by an
    // interruption is measured again), and appends to the file from then on. An empty path
    // keeps them in memory only.
    Cache(const std::string &path, bool resume);
    const Measurement *find(const std::string &key) const;
    void add(const std::string &key, const Measurement &m);

  private:
    std::string path_;
    std::map<std::string, Measurement> entries_;
    std::ofstream out_;
};

}  // namespace attngen::tuner
