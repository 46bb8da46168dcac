// SPDX-License-Identifier: GPL-2.0
//
// options.h - command line of ocq-demo (parsed with CLI11): client-side validation
// and the "start" command built from it.

#ifndef OCQ_DEMO_OPTIONS_H
#define OCQ_DEMO_OPTIONS_H

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace ocq_demo {

// the VERSION file's (make deb-check compares them)
inline constexpr const char *kVersion = "0.1.0";
inline constexpr const char *kDefaultControl = "/sys/kernel/debug/ocq_demo/control";

// Exit codes (documented in --help).
enum ExitCode : int {
	kExitOk = 0,
	kExitFailed = 1,
	kExitUsage = 2,
	kExitNoControl = 3,
};

enum class Command {
	kNone,
	kRun,
	kStop,
	kStatus,
	kHelp,
	kVersion,
};

// The CQ processing paths the demo ULP offers.
const std::vector<std::string> &pathNames();
// ocq-* paths promise in-order, exactly-once completion processing.
bool isOcqPath(const std::string &path);

class Options {
public:
	// Parses argv[1..argc-1]. On failure returns false and sets error().
	bool parse(const std::vector<std::string> &args);

	const std::string &error() const { return error_; }
	Command command() const { return command_; }

	// The "start ..." command for the control file; only the keys the user gave,
	// the kernel applies its defaults to the others.
	std::string startCommand() const;

	std::string control = kDefaultControl;
	// run --json FILE: the results as JSON; "-" is stdout (the table then goes to stderr)
	std::string jsonFile;
	// status --json: the control file read as JSON instead of the table
	bool statusJson = false;
	unsigned intervalMs = 1000;
	bool dryRun = false;

	// Workload keys; unset ones are left to the kernel's defaults.
	std::optional<unsigned> conns;
	std::optional<unsigned> credits;
	std::optional<std::uint64_t> calls;
	std::optional<std::uint64_t> durationMs;
	std::optional<std::string> mix;
	std::optional<unsigned> echoSize;
	std::optional<unsigned> chunkSize;
	std::optional<std::string> path;
	std::optional<unsigned> workNs;
	bool postpone = false;
	std::optional<unsigned> deferUsecs;
	// with deferUsecs: software DIM picks the delay (IB_OCQ_DEFER_DIM)
	bool deferDim = false;
	// ocq paths: busy-poll each side's CQ, re-armed this long after the last poll
	std::optional<unsigned> busyPollUsecs;
	// open loop: messages per second, posted whatever the server does (0: closed loop)
	std::optional<unsigned> rate;

private:
	bool fail(const std::string &msg);
	// --rate > 0 with an option of the closed loop's calls: a usage error
	bool checkOpenLoop();

	Command command_ = Command::kNone;
	std::string error_;
};

// Number parsing helpers (exposed for the tests).
// A decimal integer in [lo, hi], nothing else around it (no sign, no blanks).
std::optional<std::uint64_t> parseUint(const std::string &s, std::uint64_t lo, std::uint64_t hi);
// Seconds with up to three decimals ("20", "0.5"), as milliseconds, at most maxMs.
std::optional<std::uint64_t> parseSecondsAsMs(const std::string &s, std::uint64_t maxMs);
// A procedure mix "name:weight,...": names null|echo|read|write, weights 0..100,
// at least one weight non-zero, no name twice. Empty string if valid, else the reason.
std::string checkMix(const std::string &spec);

// The full help: every command and option, the results and the exit codes.
std::string usageText();

// Parses args (argv without argv[0]) into opts. A usage error is told on err, with
// a hint at --help, and gives kExitUsage; kExitOk otherwise.
int parseCommandLine(const std::vector<std::string> &args, Options &opts, std::ostream &err);

} // namespace ocq_demo

#endif // OCQ_DEMO_OPTIONS_H
