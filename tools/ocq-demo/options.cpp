// SPDX-License-Identifier: GPL-2.0
//
// options.cpp - command line of ocq-demo.

#include "options.h"

#include <cctype>
#include <set>
#include <sstream>
#include <type_traits>

namespace ocq_demo {

namespace {

constexpr std::uint64_t kMaxDurationMs = 3600ULL * 1000; // one hour
constexpr std::uint64_t kMaxCalls = 4294967295ULL;
constexpr std::uint64_t kMaxWeight = 100;

struct RunOption {
	const char *name;
	bool takesValue;
};

// Every option of "run"; --control is shared with stop and status.
const RunOption kRunOptions[] = {
	{"conns", true},    {"credits", true},	 {"calls", true},      {"duration", true},
	{"mix", true},	    {"echo-size", true}, {"chunk-size", true}, {"path", true},
	{"work-ns", true},  {"postpone", false}, {"json", true},       {"control", true},
	{"interval", true}, {"dry-run", false},
};

const RunOption *findRunOption(const std::string &name)
{
	for (const auto &o : kRunOptions)
		if (name == o.name)
			return &o;
	return nullptr;
}

} // namespace

const std::vector<std::string> &pathNames()
{
	static const std::vector<std::string> names = {
		"ocq-strict",	    "ocq-flow",		"ocq-parallel", "upstream-wq",
		"upstream-unbound", "upstream-softirq", "naive",	"locked",
	};
	return names;
}

bool isOcqPath(const std::string &path)
{
	return path.rfind("ocq-", 0) == 0;
}

std::optional<std::uint64_t> parseUint(const std::string &s, std::uint64_t lo, std::uint64_t hi)
{
	if (s.empty() || s.size() > 20)
		return std::nullopt;
	std::uint64_t v = 0;
	for (char c : s) {
		if (c < '0' || c > '9')
			return std::nullopt;
		const auto d = static_cast<std::uint64_t>(c - '0');
		if (v > (UINT64_MAX - d) / 10)
			return std::nullopt;
		v = v * 10 + d;
	}
	if (v < lo || v > hi)
		return std::nullopt;
	return v;
}

std::optional<std::uint64_t> parseSecondsAsMs(const std::string &s, std::uint64_t maxMs)
{
	const auto dot = s.find('.');
	const std::string whole = s.substr(0, dot);
	std::string frac = dot == std::string::npos ? "" : s.substr(dot + 1);
	if (whole.empty() && frac.empty())
		return std::nullopt;
	if (dot != std::string::npos && (frac.empty() || frac.size() > 3))
		return std::nullopt;
	const auto w = whole.empty() ? std::optional<std::uint64_t>(0) :
				       parseUint(whole, 0, maxMs / 1000 + 1);
	if (!w)
		return std::nullopt;
	frac.resize(3, '0');
	const auto f = parseUint(frac, 0, 999);
	if (!f)
		return std::nullopt;
	const std::uint64_t ms = *w * 1000 + *f;
	if (ms > maxMs)
		return std::nullopt;
	return ms;
}

std::string checkMix(const std::string &spec)
{
	static const std::set<std::string> procs = {"null", "echo", "read", "write"};
	std::set<std::string> seen;
	bool anyWeight = false;
	std::istringstream in(spec);
	std::string item;

	if (spec.empty())
		return "empty mix";
	while (std::getline(in, item, ',')) {
		const auto colon = item.find(':');
		if (colon == std::string::npos)
			return "'" + item + "' is not NAME:WEIGHT";
		const std::string name = item.substr(0, colon);
		if (procs.count(name) == 0)
			return "unknown procedure '" + name + "' (null, echo, read, write)";
		if (!seen.insert(name).second)
			return "procedure '" + name + "' given twice";
		const auto w = parseUint(item.substr(colon + 1), 0, kMaxWeight);
		if (!w)
			return "weight of '" + name + "' is not an integer 0.." +
			       std::to_string(kMaxWeight);
		anyWeight = anyWeight || *w > 0;
	}
	if (spec.back() == ',')
		return "trailing ','";
	if (!anyWeight)
		return "every weight is 0";
	return "";
}

bool Options::fail(const std::string &msg)
{
	error_ = msg;
	return false;
}

bool Options::parseRunOption(const std::string &name, const std::string &value)
{
	auto uintIn = [&](std::uint64_t lo, std::uint64_t hi, auto &dst) {
		const auto v = parseUint(value, lo, hi);
		if (!v)
			return fail("--" + name + ": '" + value + "' is not an integer in " +
				    std::to_string(lo) + ".." + std::to_string(hi));
		dst = static_cast<std::remove_reference_t<decltype(*dst)>>(*v);
		return true;
	};

	if (name == "conns")
		return uintIn(1, 16, conns);
	if (name == "credits")
		return uintIn(1, 128, credits);
	if (name == "calls")
		return uintIn(0, kMaxCalls, calls);
	if (name == "echo-size")
		return uintIn(1, 4096, echoSize);
	if (name == "chunk-size")
		return uintIn(512, 1048576, chunkSize);
	if (name == "work-ns")
		return uintIn(0, 1000000, workNs);
	if (name == "duration") {
		durationMs = parseSecondsAsMs(value, kMaxDurationMs);
		if (!durationMs)
			return fail("--duration: '" + value +
				    "' is not a number of seconds in 0..3600 (at most 3 decimals)");
		return true;
	}
	if (name == "mix") {
		const std::string why = checkMix(value);
		if (!why.empty())
			return fail("--mix: " + why);
		mix = value;
		return true;
	}
	if (name == "path") {
		for (const auto &p : pathNames()) {
			if (p == value) {
				path = value;
				return true;
			}
		}
		std::string all;
		for (const auto &p : pathNames())
			all += (all.empty() ? "" : ", ") + p;
		return fail("--path: unknown path '" + value + "' (" + all + ")");
	}
	if (name == "interval") {
		std::optional<unsigned> v;
		if (!uintIn(10, 60000, v))
			return false;
		intervalMs = *v;
		return true;
	}
	if (name == "postpone") {
		postpone = true;
		return true;
	}
	if (name == "dry-run") {
		dryRun = true;
		return true;
	}
	if (name == "json") {
		if (value.empty())
			return fail("--json: empty file name");
		jsonFile = value;
		return true;
	}
	if (name == "control") {
		if (value.empty())
			return fail("--control: empty path");
		control = value;
		return true;
	}
	return fail("unknown option --" + name);
}

bool Options::parse(const std::vector<std::string> &args)
{
	std::size_t i = 0;

	// Global options before the command.
	for (; i < args.size(); i++) {
		const std::string &a = args[i];
		if (a == "--help" || a == "-h") {
			command_ = Command::kHelp;
			return true;
		}
		if (a == "--version") {
			command_ = Command::kVersion;
			return true;
		}
		if (!a.empty() && a[0] == '-')
			return fail("unknown option " + a + " before the command");
		break;
	}
	if (i == args.size())
		return fail("no command given (run, stop, status)");
	const std::string &cmd = args[i++];
	if (cmd == "run")
		command_ = Command::kRun;
	else if (cmd == "stop")
		command_ = Command::kStop;
	else if (cmd == "status")
		command_ = Command::kStatus;
	else if (cmd == "help")
		command_ = Command::kHelp;
	else
		return fail("unknown command '" + cmd + "' (run, stop, status)");

	for (; i < args.size(); i++) {
		const std::string &a = args[i];
		if (a == "--help" || a == "-h") {
			command_ = Command::kHelp;
			return true;
		}
		if (a.rfind("--", 0) != 0 || a.size() == 2)
			return fail("unexpected argument '" + a + "'");
		std::string name = a.substr(2);
		std::optional<std::string> value;
		const auto eq = name.find('=');
		if (eq != std::string::npos) {
			value = name.substr(eq + 1);
			name.resize(eq);
		}
		const RunOption *opt = findRunOption(name);
		if (opt == nullptr)
			return fail("unknown option --" + name);
		if (command_ != Command::kRun && name != "control")
			return fail("option --" + name + " is only for 'run'");
		if (opt->takesValue && !value) {
			if (i + 1 == args.size())
				return fail("option --" + name + " needs a value");
			value = args[++i];
		} else if (!opt->takesValue && value) {
			return fail("option --" + name + " takes no value");
		}
		if (!parseRunOption(name, value.value_or("")))
			return false;
	}
	if (command_ == Command::kRun && calls.value_or(1) == 0 && durationMs.value_or(1) == 0)
		return fail("--calls 0 and --duration 0: the run would never end");
	return true;
}

std::string Options::startCommand() const
{
	std::ostringstream s;

	s << "start";
	if (conns)
		s << " conns=" << *conns;
	if (credits)
		s << " credits=" << *credits;
	if (calls)
		s << " calls=" << *calls;
	if (durationMs)
		s << " duration_ms=" << *durationMs;
	if (mix)
		s << " mix=" << *mix;
	if (echoSize)
		s << " echo_size=" << *echoSize;
	if (chunkSize)
		s << " chunk_size=" << *chunkSize;
	if (path)
		s << " path=" << *path;
	if (workNs)
		s << " work_ns=" << *workNs;
	if (postpone)
		s << " postpone=1";
	return s.str();
}

std::string usageText()
{
	std::string paths;
	for (std::size_t i = 0; i < pathNames().size(); i++)
		paths += (i == 0     ? "" :
			  i % 4 == 0 ? "\n                    " :
				       " ") +
			 pathNames()[i];
	return std::string() +
	       "Usage: ocq-demo run [OPTIONS]    run a workload, show progress and the results\n"
	       "       ocq-demo stop             stop the running workload\n"
	       "       ocq-demo status           read the control file once and show it\n"
	       "       ocq-demo --help | --version\n"
	       "\n"
	       "Front end of the ocq_demo kernel module, an RPC upper-layer protocol over\n"
	       "rdma_cm (NULL, ECHO, READ and WRITE procedures) whose completion queues are\n"
	       "processed by a selectable CQ path. It talks to the module through the control\n"
	       "file " +
	       std::string(kDefaultControl) +
	       " (root only).\n"
	       "\n"
	       "Workload options of 'run' (unset ones take the module's defaults; a later\n"
	       "option overrides an earlier one; --opt VALUE and --opt=VALUE both work):\n"
	       "  --conns N         connections, 1..16 (module default 2)\n"
	       "  --credits N       RPC credits (calls in flight) per connection, 1..128\n"
	       "                    (module default 16)\n"
	       "  --calls N         stop after N calls, 0..4294967295; 0 = run for --duration\n"
	       "  --duration SECS   stop after SECS seconds, 0..3600 (decimals allowed, e.g.\n"
	       "                    0.5); 0 = run until --calls (module default 20)\n"
	       "  --mix SPEC        procedure mix, NAME:WEIGHT,... with NAME null, echo, read\n"
	       "                    or write and WEIGHT 0..100; procedures left out get 0\n"
	       "                    (module default null:1,echo:1,read:1,write:1)\n"
	       "  --echo-size N     ECHO payload bytes, 1..4096 (module default 64)\n"
	       "  --chunk-size N    READ/WRITE chunk bytes, 512..1048576 (module default 65536)\n"
	       "  --path NAME       CQ processing path (module default ocq-flow), one of:\n"
	       "                    " +
	       paths +
	       "\n"
	       "  --work-ns N       CPU time burned per completion in ns, 0..1000000 (default 0)\n"
	       "  --postpone        ocq-* paths: arm the CQ postponed and resume it explicitly\n"
	       "                    (postpone=1; default off)\n"
	       "Other options:\n"
	       "  --json FILE       also write the results as one JSON object to FILE\n"
	       "                    (derived values and the raw counters)\n"
	       "  --interval MS     progress update period, 10..60000 ms (default 1000)\n"
	       "  --dry-run         print the start command and exit; the control file is\n"
	       "                    not touched\n"
	       "  --control PATH    the control file (default the debugfs file above); also for\n"
	       "                    stop and status\n"
	       "\n"
	       "'run' writes one 'start key=value ...' command, shows a progress line on\n"
	       "stderr (updated in place on a terminal, one line per interval otherwise) and\n"
	       "waits until the run is done, stopped or aborted. Ctrl-C (SIGINT) or SIGTERM\n"
	       "writes 'stop' and still prints the results; a second one gives up waiting.\n"
	       "The values are checked here with the module's ranges, but the module decides:\n"
	       "when it refuses the command, its error= reason is printed.\n"
	       "\n"
	       "Results (stdout): calls/s; MB/s (10^6 bytes of payload per second); call\n"
	       "latency p50, p99 and p99.9; completion events and processing runs per 1000\n"
	       "completions; empty runs (count and % of runs); re-polls; credit stalls;\n"
	       "reorders, lost and duplicated completions; errors. The module records\n"
	       "latencies in a log2 histogram (bucket i holds [2^i, 2^(i+1)) ns); the\n"
	       "percentiles are interpolated linearly within the bucket that holds them, so\n"
	       "they are estimates, exact only to that bucket.\n"
	       "\n"
	       "Exit status:\n"
	       "  0  the run is done and, for the ocq-* paths, no completion was reordered,\n"
	       "     lost or duplicated and no call failed (stop, status: the command worked)\n"
	       "  1  the run failed: refused by the module, aborted, stopped before its end,\n"
	       "     did not end, or failed the verification above; or the JSON file could\n"
	       "     not be written\n"
	       "  2  usage error (bad option or value)\n"
	       "  3  control file unavailable (ocq_demo module not loaded, debugfs not\n"
	       "     mounted, or not root)\n";
}

} // namespace ocq_demo
