// SPDX-License-Identifier: GPL-2.0
//
// control_file.h - the ocq_demo debugfs control file: one command per write(2),
// "key=value" lines on read.

#ifndef OCQ_DEMO_CONTROL_FILE_H
#define OCQ_DEMO_CONTROL_FILE_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ocq_demo {

// One read of the control file. Lines that are not "key=value" (key without
// blanks) are ignored, and keys this program does not know are kept, so a newer
// module stays readable.
class Status {
public:
	static Status parse(const std::string &text);

	bool has(const std::string &key) const { return values_.count(key) != 0; }
	std::string str(const std::string &key) const;
	// A non-negative decimal integer value; nullopt when absent or not a number.
	std::optional<std::uint64_t> num(const std::string &key) const;
	std::uint64_t numOr0(const std::string &key) const { return num(key).value_or(0); }
	// lat_hist: comma-separated counts; empty when absent or malformed.
	std::vector<std::uint64_t> latHist() const;

	const std::string &state() const { return state_; }
	// done, stopped or aborted: the run is over.
	bool finished() const;
	const std::vector<std::pair<std::string, std::string>> &entries() const { return ordered_; }

private:
	std::map<std::string, std::string> values_;
	std::vector<std::pair<std::string, std::string>> ordered_; // in file order
	std::string state_;
};

class ControlFile {
public:
	explicit ControlFile(std::string path) : path_(std::move(path)) {}

	const std::string &path() const { return path_; }

	// Reads the whole file. On failure returns false, errno_() tells why.
	bool read(std::string &out);
	// Writes the command with a single write(2). On failure returns false.
	bool write(const std::string &command);

	int lastErrno() const { return errno_; }
	// Human-readable reason of the last failure.
	std::string lastError() const;
	// True when the last failure means "the control file is not there for us"
	// (module not loaded, debugfs not mounted, not root).
	bool unavailable() const;

private:
	std::string path_;
	int errno_ = 0;
	std::string op_;
};

} // namespace ocq_demo

#endif // OCQ_DEMO_CONTROL_FILE_H
