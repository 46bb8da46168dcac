// SPDX-License-Identifier: GPL-2.0
//
// histogram.h - the module's call latency histogram: bucket i counts latencies in
// [2^i, 2^(i+1)) ns, i = 0..39.

#ifndef OCQ_DEMO_HISTOGRAM_H
#define OCQ_DEMO_HISTOGRAM_H

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace ocq_demo {

class Histogram {
public:
	explicit Histogram(std::vector<std::uint64_t> counts) : counts_(std::move(counts)) {}

	std::uint64_t total() const;
	// The q-quantile (0 <= q <= 1) in ns: the bucket that holds rank q * total is
	// found and the value interpolated linearly between its bounds. nullopt when
	// the histogram is empty.
	std::optional<double> percentile(double q) const;

	static double bucketLow(std::size_t i);

private:
	std::vector<std::uint64_t> counts_;
};

} // namespace ocq_demo

#endif // OCQ_DEMO_HISTOGRAM_H
