// SPDX-License-Identifier: GPL-2.0
//
// report.h - the results of a run: derived values, verification, the table and the
// JSON object.

#ifndef OCQ_DEMO_REPORT_H
#define OCQ_DEMO_REPORT_H

#include "control_file.h"

#include <optional>
#include <string>

namespace ocq_demo {

class Report {
public:
	// status: the final read of the control file; command: the start command sent.
	Report(Status status, std::string command);

	// done, and for ocq-* paths no reorder, loss, duplicate or failed call
	bool passed() const { return verdict_.empty(); }
	// why the run did not pass; empty when it passed
	const std::string &verdict() const { return verdict_; }

	std::optional<double> callsPerSec() const;
	std::optional<double> mbPerSec() const;
	// call latency quantile in ns (interpolated within its log2 bucket)
	std::optional<double> latencyNs(double q) const;
	// value per 1000 completions
	std::optional<double> per1kCompletions(const std::string &key) const;
	std::optional<double> emptyRunsPct() const;

	std::string table() const;
	// The results as one JSON object (run --json).
	std::string json() const;

	// A pretty-printed control file read (ocq-demo status).
	static std::string statusText(const Status &st);
	// The same read as one JSON object (ocq-demo status --json).
	static std::string statusJson(const Status &st);

private:
	Status st_;
	std::string command_;
	std::string verdict_;
};

} // namespace ocq_demo

#endif // OCQ_DEMO_REPORT_H
