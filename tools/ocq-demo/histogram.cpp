// SPDX-License-Identifier: GPL-2.0
//
// histogram.cpp - percentiles of a log2 latency histogram.

#include "histogram.h"

#include <cmath>

namespace ocq_demo {

std::uint64_t Histogram::total() const
{
	std::uint64_t t = 0;
	for (auto c : counts_)
		t += c;
	return t;
}

double Histogram::bucketLow(std::size_t i)
{
	return std::ldexp(1.0, static_cast<int>(i));
}

std::optional<double> Histogram::percentile(double q) const
{
	const std::uint64_t n = total();
	if (n == 0 || !(q >= 0.0 && q <= 1.0))
		return std::nullopt;
	const double rank = q * static_cast<double>(n);
	double below = 0;
	for (std::size_t i = 0; i < counts_.size(); i++) {
		const auto c = static_cast<double>(counts_[i]);
		if (c == 0)
			continue;
		if (rank <= below + c) {
			const double lo = bucketLow(i);
			const double frac = rank > below ? (rank - below) / c : 0.0;
			return lo + frac * lo; // the bucket spans [lo, 2 lo)
		}
		below += c;
	}
	// only reachable through rounding at q = 1: the top of the last used bucket
	for (std::size_t i = counts_.size(); i-- > 0;)
		if (counts_[i] != 0)
			return 2 * bucketLow(i);
	return std::nullopt;
}

} // namespace ocq_demo
