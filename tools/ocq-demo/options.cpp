// SPDX-License-Identifier: GPL-2.0
//
// options.cpp - command line of ocq-demo, parsed with CLI11.
//
// CLI11 does the tokenizing (--opt VALUE, --opt=VALUE, subcommands, help); the
// values are checked here with the module's ranges, and CLI11's errors are
// turned into this program's messages (all of them exit status 2).

#include "options.h"

#include <CLI/CLI.hpp>

#include <charconv>
#include <memory>
#include <set>
#include <sstream>
#include <type_traits>

namespace ocq_demo {

namespace {

constexpr std::uint64_t kMaxDurationMs = 3600ULL * 1000; // one hour
constexpr std::uint64_t kMaxCalls = 4294967295ULL;
constexpr std::uint64_t kMaxWeight = 100;
constexpr std::uint64_t kMaxRate = 1000000;

// Every option of "run", for the message about one given to another command.
const char *const kRunOptions[] = {
	"conns",      "credits", "calls",	"duration", "mix",	 "echo-size",
	"chunk-size", "path",	 "work-ns",	"postpone", "json",	 "control",
	"interval",   "dry-run", "defer-usecs", "rate",	    "defer-dim", "busy-poll-usecs",
};

bool isRunOption(const std::string &name)
{
	for (const char *o : kRunOptions)
		if (name == o)
			return true;
	return false;
}

std::string range(std::uint64_t lo, std::uint64_t hi)
{
	return std::to_string(lo) + ".." + std::to_string(hi);
}

std::string pathList(const char *sep)
{
	std::string all;
	for (const auto &p : pathNames())
		all += (all.empty() ? "" : sep) + p;
	return all;
}

// Help texts are wrapped to this width: CLI11 puts them after a 24-column option
// name, indented by 2 for a command's options, and does not wrap them.
constexpr std::size_t kHelpWidth = 80 - 2 - 24;

std::string wrap(const std::string &text)
{
	std::istringstream in(text);
	std::string word, out, line;

	while (in >> word) {
		if (!line.empty() && line.size() + 1 + word.size() > kHelpWidth) {
			out += line + "\n";
			line.clear();
		}
		line += (line.empty() ? "" : " ") + word;
	}
	return out + line;
}

// A CLI11 check: the message of a refused value (CLI11 puts "--name: " before it),
// empty for a good one.
CLI::Validator check(const std::function<std::string(const std::string &)> &why)
{
	return CLI::Validator([why](std::string &v) { return why(v); }, "");
}

// The command line, bound to an Options. Built for parsing and for the help text.
class Cli {
public:
	explicit Cli(Options &o);

	CLI::App app;
	CLI::App *run = nullptr;
	CLI::App *stop = nullptr;
	CLI::App *status = nullptr;
	CLI::App *help = nullptr;
	bool version = false;

private:
	// --NAME N, an integer in lo..hi, into dst
	template <typename T>
	CLI::Option *addUint(const std::string &name, std::uint64_t lo, std::uint64_t hi, T &dst,
			     const std::string &desc);
	CLI::Option *addControl(CLI::App *sub, Options &o);
};

template <typename T>
CLI::Option *Cli::addUint(const std::string &name, std::uint64_t lo, std::uint64_t hi, T &dst,
			  const std::string &desc)
{
	using Value = std::remove_reference_t<decltype(*dst)>;
	return run
		->add_option_function<std::string>(
			"--" + name,
			[&dst, lo, hi](const std::string &v) {
				dst = static_cast<Value>(parseUint(v, lo, hi).value_or(0));
			},
			desc)
		->type_name("N")
		->check(check([lo, hi](const std::string &v) {
			return parseUint(v, lo, hi) ?
				       "" :
				       "'" + v + "' is not an integer in " + range(lo, hi);
		}));
}

CLI::Option *Cli::addControl(CLI::App *sub, Options &o)
{
	return sub
		->add_option("--control", o.control,
			     "the control file (default " + std::string(kDefaultControl) + ")")
		->type_name("PATH")
		->check(check([](const std::string &v) { return v.empty() ? "empty path" : ""; }));
}

Cli::Cli(Options &o)
    : app("Front end of the ocq_demo kernel module, an RPC upper-layer protocol over\n"
	  "rdma_cm (NULL, ECHO, READ and WRITE procedures) whose completion queues are\n"
	  "processed by a selectable CQ path. It talks to the module through the control\n"
	  "file " +
		  std::string(kDefaultControl) +
		  " (root only).\n"
		  "\n"
		  "  ocq-demo run [OPTIONS]    run a workload, show progress and the results\n"
		  "  ocq-demo stop             stop the running workload\n"
		  "  ocq-demo status [--json]  read the control file once and show it\n"
		  "\n"
		  "A later option overrides an earlier one; --opt VALUE and --opt=VALUE both\n"
		  "work.\n",
	  "ocq-demo")
{
	app.set_help_flag("-h,--help", "show this help (every command and option) and exit");
	app.add_flag("--version", version, "print the version and exit");
	app.require_subcommand(0, 1);
	// unknown arguments are collected and reported here, in this program's words
	app.allow_extras();
	app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
	app.get_formatter()->column_width(24);
	app.get_formatter()->label("REQUIRED", "");

	run = app.add_subcommand("run", "run a workload, show progress and the results");
	run->allow_extras();
	const std::string wl = "Workload options (unset ones take the module's defaults)";
	addUint("conns", 1, 16, o.conns, "connections, 1..16 (module default 2)")->group(wl);
	addUint("credits", 1, 128, o.credits,
		"RPC credits (calls in flight) per connection, 1..128 (module default 16)")
		->group(wl);
	addUint("calls", 0, kMaxCalls, o.calls,
		"stop after N calls, 0..4294967295; 0 = run for --duration")
		->group(wl);
	run->add_option_function<std::string>(
		   "--duration",
		   [&o](const std::string &v) {
			   o.durationMs = parseSecondsAsMs(v, kMaxDurationMs);
		   },
		   "stop after SECS seconds, 0..3600 (decimals allowed, e.g. 0.5); 0 = run until "
		   "--calls (module default 20)")
		->type_name("SECS")
		->group(wl)
		->check(check([](const std::string &v) {
			return parseSecondsAsMs(v, kMaxDurationMs) ?
				       "" :
				       "'" + v +
					       "' is not a number of seconds in 0..3600 (at most 3 "
					       "decimals)";
		}));
	run->add_option_function<std::string>(
		   "--mix", [&o](const std::string &v) { o.mix = v; },
		   "procedure mix, NAME:WEIGHT,... with NAME null, echo, read or write and WEIGHT "
		   "0..100; procedures left out get 0 (module default null:1,echo:1,read:1,write:1)")
		->type_name("SPEC")
		->group(wl)
		->check(check(checkMix));
	addUint("echo-size", 1, 4096, o.echoSize, "ECHO payload bytes, 1..4096 (module default 64)")
		->group(wl);
	addUint("chunk-size", 512, 1048576, o.chunkSize,
		"READ/WRITE chunk bytes, 512..1048576 (module default 65536)")
		->group(wl);
	run->add_option_function<std::string>(
		   "--path", [&o](const std::string &v) { o.path = v; },
		   "CQ processing path (module default ocq-flow), one of: " + pathList(", "))
		->type_name("NAME")
		->group(wl)
		->check(check([](const std::string &v) {
			for (const auto &p : pathNames())
				if (p == v)
					return std::string();
			return "unknown path '" + v + "' (" + pathList(", ") + ")";
		}));
	addUint("work-ns", 0, 1000000, o.workNs,
		"CPU time burned per completion in ns, 0..1000000 (default 0)")
		->group(wl);
	run->add_flag("--postpone", o.postpone,
		      "ocq-* paths: arm the CQ postponed and resume it explicitly (postpone=1; "
		      "default off)")
		->group(wl)
		->disable_flag_override();
	addUint("defer-usecs", 0, 10000, o.deferUsecs,
		"ocq-* paths: deferred re-arm, poll the drained CQ again after N us instead of "
		"arming it, 0..10000 (defer_us=N; default 0, off; not with --postpone)")
		->group(wl);
	run->add_flag("--defer-dim", o.deferDim,
		      "ocq-* paths, with --defer-usecs: software DIM picks the deferral's delay, "
		      "up to --defer-usecs, and a run with a single completion arms at once "
		      "(defer_dim=1; default off)")
		->group(wl)
		->disable_flag_override();
	addUint("busy-poll-usecs", 0, 100000, o.busyPollUsecs,
		"ocq-* paths: a thread per side busy-polls its CQ while it finds work, "
		"suspending the CQ's events; the CQ is re-armed N us after the last poll, "
		"0..100000 (busy_poll_us=N; default 0, off; not with --postpone or --defer-dim)")
		->group(wl);
	addUint("rate", 0, kMaxRate, o.rate,
		"open loop: the clients post N messages per second in all (RDMA WRITEs with "
		"immediate, never answered) whatever the server does, 0..1000000 (rate=N; "
		"default 0, the closed loop of calls under credits); not with --credits, "
		"--mix, --echo-size or --chunk-size")
		->group(wl);

	const std::string other = "Other options";
	run->add_option("--json", o.jsonFile,
			"also write the results as one JSON object to FILE (derived values and "
			"the raw counters); '-' writes it to stdout, and the table to stderr")
		->type_name("FILE")
		->group(other)
		->check(check(
			[](const std::string &v) { return v.empty() ? "empty file name" : ""; }));
	run->add_option_function<std::string>(
		   "--interval",
		   [&o](const std::string &v) {
			   o.intervalMs =
				   static_cast<unsigned>(parseUint(v, 10, 60000).value_or(1000));
		   },
		   "progress update period, 10..60000 ms (default 1000)")
		->type_name("MS")
		->group(other)
		->check(check([](const std::string &v) {
			return parseUint(v, 10, 60000) ?
				       "" :
				       "'" + v + "' is not an integer in " + range(10, 60000);
		}));
	run->add_flag("--dry-run", o.dryRun,
		      "print the start command and exit; the control file is not touched")
		->group(other)
		->disable_flag_override();
	addControl(run, o)->group(other);

	stop = app.add_subcommand("stop",
				  "stop the running workload (Ctrl-C of run does the same)");
	stop->allow_extras();
	addControl(stop, o);

	status = app.add_subcommand("status", "read the control file once and show it");
	status->allow_extras();
	status->add_flag("--json", o.statusJson,
			 "print the read as one JSON object on stdout (state, path, error, "
			 "latency percentiles, every counter, lat_hist and the raw values) "
			 "instead of the table")
		->disable_flag_override();
	addControl(status, o);

	help = app.add_subcommand("help", "show this help and exit");
	help->allow_extras();

	for (CLI::App *a : {&app, run, stop, status})
		for (CLI::Option *opt : a->get_options())
			opt->description(wrap(opt->get_description()));

	app.footer("'run' writes one 'start key=value ...' command, shows a progress line on\n"
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
		   "     mounted, or not root)");
}

// This program's words for a CLI11 parse error.
std::string message(const CLI::ParseError &e)
{
	std::string what = e.what();

	if (dynamic_cast<const CLI::ArgumentMismatch *>(&e) != nullptr) {
		// "--conns: 1 required N missing", "postpone was given a disallowed flag override"
		const auto colon = what.find(": ");
		if (colon != std::string::npos && what.find(" required ") != std::string::npos)
			return "option " + what.substr(0, colon) + " needs a value";
		const auto flag = what.find(" was given a disallowed flag override");
		if (flag != std::string::npos) {
			const std::string name = what.substr(0, flag);
			return "option " + (name.rfind("--", 0) == 0 ? "" : std::string("--")) +
			       name + " takes no value";
		}
	}
	return what;
}

// What is wrong with an argument that CLI11 left over (after the command `cmd`).
std::string leftOver(const std::string &arg, const std::string &cmd)
{
	if (arg.rfind("--", 0) != 0 || arg.size() == 2)
		return "unexpected argument '" + arg + "'";
	const std::string name = arg.substr(2, arg.find('=') - 2);
	if (cmd != "run" && isRunOption(name))
		return "option --" + name + " is only for 'run'";
	return "unknown option --" + name;
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
	std::uint64_t v = 0;
	const char *const end = s.data() + s.size();

	// from_chars takes no sign, blank or base prefix; the whole string must be used
	if (s.empty() || s[0] < '0' || s[0] > '9')
		return std::nullopt;
	const auto r = std::from_chars(s.data(), end, v);
	if (r.ec != std::errc() || r.ptr != end || v < lo || v > hi)
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

bool Options::parse(const std::vector<std::string> &args)
{
	Cli cli(*this);

	// CLI11 takes a lone "--" as the end of the options; nothing here takes operands
	for (const auto &a : args)
		if (a == "--")
			return fail("unexpected argument '--'");
	try {
		// CLI11 takes the arguments last first
		std::vector<std::string> rev(args.rbegin(), args.rend());
		cli.app.parse(rev);
	} catch (const CLI::CallForHelp &) {
		command_ = Command::kHelp;
		return true;
	} catch (const CLI::CallForAllHelp &) {
		command_ = Command::kHelp;
		return true;
	} catch (const CLI::ParseError &e) {
		return fail(message(e));
	}

	const auto before = cli.app.remaining();
	if (!before.empty()) {
		const std::string &a = before.front();
		if (!a.empty() && a[0] == '-')
			return fail("unknown option " + a + " before the command");
		return fail("unknown command '" + a + "' (run, stop, status)");
	}
	if (cli.version) {
		command_ = Command::kVersion;
		return true;
	}
	const std::pair<CLI::App *, Command> commands[] = {
		{cli.run, Command::kRun},
		{cli.stop, Command::kStop},
		{cli.status, Command::kStatus},
		{cli.help, Command::kHelp},
	};
	for (const auto &c : commands) {
		if (c.first->parsed()) {
			command_ = c.second;
			const auto extra = c.first->remaining();
			if (!extra.empty())
				return fail(leftOver(extra.front(), c.first->get_name()));
			// CLI11 takes --flag=true as --flag; a flag takes no value here
			for (const auto &a : args)
				for (const CLI::Option *opt : c.first->get_options())
					if (opt->get_items_expected_max() == 0 &&
					    a.rfind(opt->get_name() + "=", 0) == 0)
						return fail("option " + opt->get_name() +
							    " takes no value");
		}
	}
	if (command_ == Command::kNone)
		return fail("no command given (run, stop, status)");
	if (command_ == Command::kRun && calls.value_or(1) == 0 && durationMs.value_or(1) == 0)
		return fail("--calls 0 and --duration 0: the run would never end");
	// the module refuses these too; saying so here makes them usage errors
	if (deferUsecs.value_or(0) && postpone)
		return fail("--postpone and --defer-usecs exclude each other (a postponed arm "
			    "waits for the ULP, a deferred one for a timer)");
	if (deferUsecs.value_or(0) && path && !isOcqPath(*path))
		return fail("--defer-usecs is only for the ocq-* paths, not " + *path);
	if (deferDim && !deferUsecs.value_or(0))
		return fail("--defer-dim needs --defer-usecs, the ceiling of the delay it picks");
	if (busyPollUsecs.value_or(0) && path && !isOcqPath(*path))
		return fail("--busy-poll-usecs is only for the ocq-* paths, not " + *path);
	if (busyPollUsecs.value_or(0) && (postpone || deferDim))
		return fail("--busy-poll-usecs excludes --postpone and --defer-dim");
	return checkOpenLoop();
}

bool Options::checkOpenLoop()
{
	const std::pair<const char *, bool> callOptions[] = {
		{"--credits", credits.has_value()},
		{"--mix", mix.has_value()},
		{"--echo-size", echoSize.has_value()},
		{"--chunk-size", chunkSize.has_value()},
	};

	if (rate.value_or(0) == 0)
		return true;
	for (const auto &c : callOptions)
		if (c.second)
			return fail(std::string("--rate (open loop) excludes ") + c.first +
				    ": its messages have no credits, procedure or payload");
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
	if (deferUsecs)
		s << " defer_us=" << *deferUsecs;
	if (deferDim)
		s << " defer_dim=1";
	if (busyPollUsecs)
		s << " busy_poll_us=" << *busyPollUsecs;
	if (rate)
		s << " rate=" << *rate;
	return s.str();
}

int parseCommandLine(const std::vector<std::string> &args, Options &opts, std::ostream &err)
{
	if (opts.parse(args))
		return kExitOk;
	err << "ocq-demo: " << opts.error() << "\nTry 'ocq-demo --help'.\n";
	return kExitUsage;
}

std::string usageText()
{
	Options unused;
	const Cli cli(unused);

	return cli.app.help("", CLI::AppFormatMode::All);
}

} // namespace ocq_demo
