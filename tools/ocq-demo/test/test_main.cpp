// SPDX-License-Identifier: GPL-2.0
//
// Host unit test of ocq-demo (GoogleTest): the command line, histogram
// percentiles, parsing of a control file read, the report built from it and its
// JSON (parsed back with nlohmann-json). Run by "make check" (ASan, UBSan).

#include "../control_file.h"
#include "../histogram.h"
#include "../options.h"
#include "../report.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ocq_demo;
using nlohmann::json;

namespace {

testing::AssertionResult contains(const std::string &s, const std::string &part)
{
	if (s.find(part) != std::string::npos)
		return testing::AssertionSuccess();
	return testing::AssertionFailure() << "'" << part << "' not in:\n" << s;
}

testing::AssertionResult near(const std::optional<double> &v, double want)
{
	if (!v)
		return testing::AssertionFailure() << "no value, want " << want;
	if (std::fabs(*v - want) <= 1e-6 * std::max(1.0, std::fabs(want)))
		return testing::AssertionSuccess();
	return testing::AssertionFailure() << *v << ", want " << want;
}

Options parseOk(const std::vector<std::string> &args)
{
	Options o;
	EXPECT_TRUE(o.parse(args)) << "unexpected parse error: " << o.error();
	return o;
}

std::string parseError(const std::vector<std::string> &args)
{
	Options o;
	EXPECT_FALSE(o.parse(args));
	return o.error();
}

// A usage error as main() reports it: exit status 2 and a message on stderr.
std::string usageError(const std::vector<std::string> &args)
{
	Options o;
	std::ostringstream err;
	EXPECT_EQ(parseCommandLine(args, o, err), kExitUsage);
	EXPECT_TRUE(contains(err.str(), "Try 'ocq-demo --help'."));
	return err.str();
}

TEST(Numbers, ParseUint)
{
	EXPECT_EQ(parseUint("0", 0, 10).value_or(99), 0U);
	EXPECT_EQ(parseUint("16", 1, 16).value_or(0), 16U);
	EXPECT_FALSE(parseUint("17", 1, 16));
	EXPECT_FALSE(parseUint("", 0, 10));
	EXPECT_FALSE(parseUint("-1", 0, 10));
	EXPECT_FALSE(parseUint("+1", 0, 10));
	EXPECT_FALSE(parseUint("1x", 0, 10));
	EXPECT_FALSE(parseUint(" 1", 0, 10));
	EXPECT_FALSE(parseUint("0x1", 0, 10));
	EXPECT_FALSE(parseUint("18446744073709551616", 0, UINT64_MAX)); // 2^64
	EXPECT_EQ(parseUint("18446744073709551615", 0, UINT64_MAX).value_or(0), UINT64_MAX);
	EXPECT_EQ(parseUint("010", 0, 10).value_or(0), 10U); // decimal, not octal
}

TEST(Numbers, ParseSecondsAsMs)
{
	EXPECT_EQ(parseSecondsAsMs("20", 3600000).value_or(0), 20000U);
	EXPECT_EQ(parseSecondsAsMs("0.5", 3600000).value_or(0), 500U);
	EXPECT_EQ(parseSecondsAsMs(".25", 3600000).value_or(0), 250U);
	EXPECT_EQ(parseSecondsAsMs("1.125", 3600000).value_or(0), 1125U);
	EXPECT_EQ(parseSecondsAsMs("0", 3600000).value_or(1), 0U);
	EXPECT_EQ(parseSecondsAsMs("3600", 3600000).value_or(0), 3600000U);
	EXPECT_FALSE(parseSecondsAsMs("3600.001", 3600000));
	EXPECT_FALSE(parseSecondsAsMs("1.", 3600000));
	EXPECT_FALSE(parseSecondsAsMs("1.2345", 3600000));
	EXPECT_FALSE(parseSecondsAsMs(".", 3600000));
	EXPECT_FALSE(parseSecondsAsMs("", 3600000));
	EXPECT_FALSE(parseSecondsAsMs("1e3", 3600000));
	EXPECT_FALSE(parseSecondsAsMs("-1", 3600000));
}

TEST(Numbers, CheckMix)
{
	EXPECT_EQ(checkMix("null:1,echo:1,read:1,write:1"), "");
	EXPECT_EQ(checkMix("echo:5"), "");
	EXPECT_EQ(checkMix("null:0,write:100"), "");
	EXPECT_NE(checkMix(""), "");
	EXPECT_NE(checkMix("null:0"), "");
	EXPECT_NE(checkMix("null"), "");
	EXPECT_NE(checkMix("null:1,"), "");
	EXPECT_NE(checkMix("null:1,,echo:1"), "");
	EXPECT_NE(checkMix("nfs:1"), "");
	EXPECT_NE(checkMix("null:1,null:2"), "");
	EXPECT_NE(checkMix("null:101"), "");
	EXPECT_NE(checkMix("null:-1"), "");
}

TEST(CommandLine, Defaults)
{
	const Options o = parseOk({"run"});
	EXPECT_EQ(o.command(), Command::kRun);
	EXPECT_EQ(o.startCommand(), "start");
	EXPECT_EQ(o.control, kDefaultControl);
	EXPECT_EQ(o.intervalMs, 1000U);
	EXPECT_EQ(o.jsonFile, "");
	EXPECT_FALSE(o.dryRun);
	EXPECT_FALSE(o.postpone);
	EXPECT_FALSE(o.statusJson);
}

TEST(CommandLine, EveryRunOption)
{
	const Options o = parseOk({
		"run",	      "--conns",      "2",	"--credits", "128",	      "--calls",
		"1000",	      "--duration",   "2.5",	"--mix",     "null:1,echo:3", "--echo-size",
		"4096",	      "--chunk-size", "512",	"--path",    "ocq-parallel",  "--work-ns",
		"1000000",    "--postpone",   "--json", "out.json",  "--control",     "/tmp/ctl",
		"--interval", "250",
	});
	EXPECT_EQ(o.startCommand(), "start conns=2 credits=128 calls=1000 duration_ms=2500 "
				    "mix=null:1,echo:3 echo_size=4096 chunk_size=512 "
				    "path=ocq-parallel work_ns=1000000 postpone=1");
	// --defer-usecs excludes --postpone (BadValuesExit2)
	EXPECT_EQ(parseOk({"run", "--path", "ocq-parallel", "--defer-usecs", "200"}).startCommand(),
		  "start path=ocq-parallel defer_us=200");
	EXPECT_EQ(parseOk({"run", "--postpone", "--defer-usecs", "0"}).startCommand(),
		  "start postpone=1 defer_us=0");
	EXPECT_EQ(parseOk({"run", "--defer-dim", "--defer-usecs", "100"}).startCommand(),
		  "start defer_us=100 defer_dim=1");
	EXPECT_EQ(parseOk({"run", "--busy-poll-usecs", "50", "--defer-usecs", "20"}).startCommand(),
		  "start defer_us=20 busy_poll_us=50");
	EXPECT_EQ(o.jsonFile, "out.json");
	EXPECT_EQ(o.control, "/tmp/ctl");
	EXPECT_EQ(o.intervalMs, 250U);
	EXPECT_FALSE(o.dryRun);
}

// every option in its --opt=VALUE form, at the ends of its range
TEST(CommandLine, EveryRunOptionWithEquals)
{
	const Options o = parseOk({"run", "--conns=16", "--credits=1", "--calls=4294967295",
				   "--duration=.001", "--mix=write:100", "--echo-size=1",
				   "--chunk-size=1048576", "--path=ocq-strict", "--work-ns=0",
				   "--defer-usecs=10000", "--json=-", "--control=/x",
				   "--interval=60000", "--dry-run"});
	EXPECT_EQ(o.startCommand(), "start conns=16 credits=1 calls=4294967295 duration_ms=1 "
				    "mix=write:100 echo_size=1 chunk_size=1048576 path=ocq-strict "
				    "work_ns=0 defer_us=10000");
	EXPECT_EQ(o.jsonFile, "-");
	EXPECT_EQ(o.control, "/x");
	EXPECT_EQ(o.intervalMs, 60000U);
	EXPECT_TRUE(o.dryRun);
	EXPECT_EQ(parseOk({"run", "--interval", "10"}).intervalMs, 10U);
	EXPECT_EQ(parseOk({"run", "--json", "-"}).jsonFile, "-");
	EXPECT_EQ(parseOk({"run", "--duration", "3600"}).startCommand(),
		  "start duration_ms=3600000");
}

// --rate: the open loop, on every path and with the options that apply to it
TEST(CommandLine, OpenLoop)
{
	EXPECT_EQ(parseOk({"run", "--rate", "1000", "--path", "ocq-strict", "--postpone",
			   "--work-ns", "100000", "--conns", "2", "--duration", "3"})
			  .startCommand(),
		  "start conns=2 duration_ms=3000 path=ocq-strict work_ns=100000 postpone=1 "
		  "rate=1000");
	for (const auto &p : pathNames())
		EXPECT_EQ(parseOk({"run", "--rate=1", "--path=" + p}).startCommand(),
			  "start path=" + p + " rate=1");
	EXPECT_EQ(parseOk({"run", "--rate", "1000000", "--calls", "5"}).startCommand(),
		  "start calls=5 rate=1000000");
	EXPECT_EQ(parseOk({"run", "--rate", "50", "--defer-usecs", "100"}).startCommand(),
		  "start defer_us=100 rate=50");
	// 0 is the closed loop: the options of calls are fine with it
	EXPECT_EQ(
		parseOk({"run", "--rate", "0", "--credits", "4", "--mix", "echo:1"}).startCommand(),
		"start credits=4 mix=echo:1 rate=0");
	// the later --rate wins, also for the exclusion
	EXPECT_EQ(parseOk({"run", "--rate", "10", "--credits", "4", "--rate", "0"}).startCommand(),
		  "start credits=4 rate=0");
	EXPECT_TRUE(contains(parseError({"run", "--rate", "0", "--credits", "4", "--rate", "9"}),
			     "excludes --credits"));
}

TEST(CommandLine, LaterOptionWins)
{
	const Options o =
		parseOk({"run", "--conns=4", "--path=naive", "--conns", "8", "--dry-run"});
	EXPECT_EQ(o.startCommand(), "start conns=8 path=naive");
	EXPECT_TRUE(o.dryRun);
	EXPECT_EQ(parseOk({"run", "--json", "a", "--json", "b"}).jsonFile, "b");
	EXPECT_EQ(parseOk({"run", "--postpone", "--postpone"}).startCommand(), "start postpone=1");
}

TEST(CommandLine, Paths)
{
	for (const auto &p : pathNames())
		EXPECT_EQ(parseOk({"run", "--path", p}).startCommand(), "start path=" + p);
	EXPECT_TRUE(isOcqPath("ocq-strict") && isOcqPath("ocq-flow") && isOcqPath("ocq-parallel"));
	EXPECT_TRUE(!isOcqPath("naive") && !isOcqPath("upstream-wq") && !isOcqPath("locked"));
}

TEST(CommandLine, Commands)
{
	// --calls alone, --duration 0 with calls: fine
	EXPECT_EQ(parseOk({"run", "--calls", "5", "--duration", "0"}).startCommand(),
		  "start calls=5 duration_ms=0");

	EXPECT_EQ(parseOk({"stop"}).command(), Command::kStop);
	EXPECT_EQ(parseOk({"stop", "--control", "/y"}).control, "/y");
	EXPECT_EQ(parseOk({"status", "--control", "/x"}).command(), Command::kStatus);
	EXPECT_EQ(parseOk({"status", "--control=/x"}).control, "/x");
	EXPECT_FALSE(parseOk({"status"}).statusJson);
	EXPECT_TRUE(parseOk({"status", "--json"}).statusJson);
	EXPECT_TRUE(parseOk({"status", "--control", "/x", "--json"}).statusJson);
	EXPECT_EQ(parseOk({"--help"}).command(), Command::kHelp);
	EXPECT_EQ(parseOk({"-h"}).command(), Command::kHelp);
	EXPECT_TRUE(contains(parseError({"run", "--conns", "99", "--help"}),
			     "1..16")); // first error wins
	EXPECT_EQ(parseOk({"run", "--help"}).command(), Command::kHelp);
	EXPECT_EQ(parseOk({"status", "-h"}).command(), Command::kHelp);
	EXPECT_EQ(parseOk({"--version"}).command(), Command::kVersion);
	EXPECT_EQ(parseOk({"help"}).command(), Command::kHelp);

	Options o;
	std::ostringstream err;
	EXPECT_EQ(parseCommandLine({"run", "--dry-run"}, o, err), kExitOk);
	EXPECT_EQ(err.str(), "");
}

TEST(CommandLine, UsageErrors)
{
	EXPECT_TRUE(contains(parseError({}), "no command"));
	EXPECT_TRUE(contains(parseError({"bogus"}), "unknown command"));
	EXPECT_TRUE(contains(parseError({"--conns", "2"}), "before the command"));
	EXPECT_TRUE(contains(parseError({"run", "--conns", "0"}), "1..16"));
	EXPECT_TRUE(contains(parseError({"run", "--conns", "17"}), "1..16"));
	EXPECT_TRUE(contains(parseError({"run", "--conns", "two"}), "--conns"));
	EXPECT_TRUE(contains(parseError({"run", "--credits", "129"}), "1..128"));
	EXPECT_TRUE(contains(parseError({"run", "--echo-size", "0"}), "1..4096"));
	EXPECT_TRUE(contains(parseError({"run", "--echo-size", "4097"}), "1..4096"));
	EXPECT_TRUE(contains(parseError({"run", "--chunk-size", "511"}), "512..1048576"));
	EXPECT_TRUE(contains(parseError({"run", "--chunk-size", "1048577"}), "512..1048576"));
	EXPECT_TRUE(contains(parseError({"run", "--work-ns", "1000001"}), "0..1000000"));
	EXPECT_TRUE(contains(parseError({"run", "--defer-usecs", "10001"}), "0..10000"));
	EXPECT_TRUE(contains(parseError({"run", "--interval", "5"}), "10..60000"));
	EXPECT_TRUE(contains(parseError({"run", "--duration", "abc"}), "--duration"));
	EXPECT_TRUE(contains(parseError({"run", "--path", "fast"}), "unknown path"));
	EXPECT_TRUE(contains(parseError({"run", "--mix", "nfs:1"}), "--mix"));
	EXPECT_TRUE(contains(parseError({"run", "--conns"}), "needs a value"));
	EXPECT_TRUE(contains(parseError({"run", "--postpone=1"}), "takes no value"));
	EXPECT_TRUE(contains(parseError({"run", "--frobnicate"}), "unknown option"));
	EXPECT_TRUE(contains(parseError({"run", "-c", "2"}), "unexpected argument"));
	EXPECT_TRUE(contains(parseError({"run", "extra"}), "unexpected argument"));
	EXPECT_TRUE(contains(parseError({"run", "--"}), "unexpected argument"));
	EXPECT_TRUE(contains(parseError({"status", "--conns", "2"}), "only for 'run'"));
	EXPECT_TRUE(contains(parseError({"stop", "--json", "x"}), "only for 'run'"));
	EXPECT_TRUE(contains(parseError({"run", "--json", ""}), "empty"));
	EXPECT_TRUE(contains(parseError({"run", "--calls", "0", "--duration", "0"}), "never end"));
	EXPECT_TRUE(contains(parseError({"run", "--calls", "4294967296"}), "0..4294967295"));
	EXPECT_TRUE(contains(parseError({"run", "--duration", "3601"}), "0..3600"));
}

// Each option's bad values, as main() reports them: exit status 2, the message.
TEST(CommandLine, BadValuesExit2)
{
	struct Bad {
		std::vector<std::string> args;
		std::string message;
	};
	const Bad bad[] = {
		{{"run", "--conns", "0"}, "--conns: '0' is not an integer in 1..16"},
		{{"run", "--conns=-1"}, "--conns: '-1' is not an integer in 1..16"},
		{{"run", "--conns", "0x2"}, "--conns: '0x2' is not an integer in 1..16"},
		{{"run", "--credits", "0"}, "--credits: '0' is not an integer in 1..128"},
		{{"run", "--calls", "-1"}, "--calls: '-1' is not an integer in 0..4294967295"},
		{{"run", "--duration", "1.2345"},
		 "--duration: '1.2345' is not a number of seconds in 0..3600 (at most 3 decimals)"},
		{{"run", "--mix", "null:1,null:2"}, "--mix: procedure 'null' given twice"},
		{{"run", "--mix", "null:0"}, "--mix: every weight is 0"},
		{{"run", "--echo-size", "x"}, "--echo-size: 'x' is not an integer in 1..4096"},
		{{"run", "--chunk-size", "1k"},
		 "--chunk-size: '1k' is not an integer in 512..1048576"},
		{{"run", "--path", "OCQ-FLOW"}, "--path: unknown path 'OCQ-FLOW' (ocq-strict, "},
		{{"run", "--work-ns", "1e3"}, "--work-ns: '1e3' is not an integer in 0..1000000"},
		{{"run", "--postpone=true"}, "option --postpone takes no value"},
		{{"run", "--dry-run=1"}, "option --dry-run takes no value"},
		{{"run", "--json", ""}, "--json: empty file name"},
		{{"run", "--json"}, "option --json needs a value"},
		{{"run", "--control", ""}, "--control: empty path"},
		{{"stop", "--control="}, "option --control needs a value"},
		{{"status", "--control", ""}, "--control: empty path"},
		{{"status", "--json=1"}, "option --json takes no value"},
		{{"status", "--json", "x"}, "unexpected argument 'x'"},
		{{"status", "--interval", "100"}, "option --interval is only for 'run'"},
		{{"stop", "--dry-run"}, "option --dry-run is only for 'run'"},
		{{"run", "--interval", "60001"},
		 "--interval: '60001' is not an integer in 10..60000"},
		{{"run", "--interval"}, "option --interval needs a value"},
		{{"run", "--version"}, "unknown option --version"},
		{{"run", "stop"}, "unexpected argument 'stop'"},
		{{"--frob", "run"}, "unknown option --frob before the command"},
		{{"nope"}, "unknown command 'nope' (run, stop, status)"},
		{{}, "no command given (run, stop, status)"},
		{{"run", "--calls=0", "--duration=0"},
		 "--calls 0 and --duration 0: the run would never end"},
		{{"run", "--postpone", "--defer-usecs", "100"},
		 "--postpone and --defer-usecs exclude each other"},
		{{"run", "--defer-usecs=1", "--path=upstream-wq"},
		 "--defer-usecs is only for the ocq-* paths, not upstream-wq"},
		{{"run", "--defer-dim"},
		 "--defer-dim needs --defer-usecs, the ceiling of the delay it picks"},
		{{"run", "--defer-dim", "--defer-usecs=0"}, "--defer-dim needs --defer-usecs"},
		{{"run", "--defer-dim=1", "--defer-usecs=9"}, "option --defer-dim takes no value"},
		{{"run", "--busy-poll-usecs=100001"},
		 "--busy-poll-usecs: '100001' is not an integer in 0..100000"},
		{{"run", "--busy-poll-usecs=5", "--path=naive"},
		 "--busy-poll-usecs is only for the ocq-* paths, not naive"},
		{{"run", "--busy-poll-usecs=5", "--postpone"},
		 "--busy-poll-usecs excludes --postpone and --defer-dim"},
		{{"run", "--busy-poll-usecs=5", "--defer-usecs=5", "--defer-dim"},
		 "--busy-poll-usecs excludes --postpone and --defer-dim"},
		{{"run", "--rate", "1000001"}, "--rate: '1000001' is not an integer in 0..1000000"},
		{{"run", "--rate=-5"}, "--rate: '-5' is not an integer in 0..1000000"},
		{{"run", "--rate", "1k"}, "--rate: '1k' is not an integer in 0..1000000"},
		{{"run", "--rate"}, "option --rate needs a value"},
		{{"status", "--rate", "5"}, "option --rate is only for 'run'"},
		{{"run", "--rate", "100", "--credits", "4"},
		 "--rate (open loop) excludes --credits: its messages have no credits, procedure "
		 "or payload"},
		{{"run", "--mix=echo:1", "--rate=1"}, "--rate (open loop) excludes --mix"},
		{{"run", "--rate", "1", "--echo-size", "8"},
		 "--rate (open loop) excludes --echo-size"},
		{{"run", "--chunk-size=4096", "--rate=1000000"},
		 "--rate (open loop) excludes --chunk-size"},
	};
	for (const auto &b : bad) {
		std::string all;
		for (const auto &a : b.args)
			all += " " + a;
		SCOPED_TRACE("ocq-demo" + all);
		EXPECT_TRUE(contains(usageError(b.args), "ocq-demo: " + b.message));
	}
}

TEST(CommandLine, HelpDocumentsEverything)
{
	const std::string help = usageText();
	for (const char *opt :
	     {"--conns",       "--credits",	   "--calls",	"--duration",	"--mix",
	      "--echo-size",   "--chunk-size",	   "--path",	"--work-ns",	"--postpone",
	      "--defer-usecs", "--rate",	   "--json",	"--control",	"--interval",
	      "--dry-run",     "--help",	   "--version", "interpolated", "Exit status",
	      "--defer-dim",   "--busy-poll-usecs"})
		EXPECT_TRUE(contains(help, opt));
	for (const auto &p : pathNames())
		EXPECT_TRUE(contains(help, p));
	for (const char *s : {"run", "stop", "status", "ocq-demo status [--json]", "'-' writes",
			      "  0  the run is done", "  1  the run failed", "  2  usage error",
			      "  3  control file unavailable"})
		EXPECT_TRUE(contains(help, s));
	// wrapped for a terminal
	std::istringstream lines(help);
	std::string line;
	while (std::getline(lines, line))
		EXPECT_LE(line.size(), 80U) << line;
}

TEST(HistogramTest, Percentiles)
{
	EXPECT_FALSE(Histogram({}).percentile(0.5));
	EXPECT_FALSE(Histogram(std::vector<std::uint64_t>(40, 0)).percentile(0.5));

	// 100 calls, all in bucket 10: [1024, 2048) ns
	std::vector<std::uint64_t> h(40, 0);
	h[10] = 100;
	const Histogram one(h);
	EXPECT_EQ(one.total(), 100U);
	EXPECT_TRUE(near(one.percentile(0.5), 1536));
	EXPECT_TRUE(near(one.percentile(0.99), 1024 + 0.99 * 1024));
	EXPECT_TRUE(near(one.percentile(0.0), 1024));
	EXPECT_TRUE(near(one.percentile(1.0), 2048));
	EXPECT_FALSE(one.percentile(-0.1));
	EXPECT_FALSE(one.percentile(1.5));

	// 90 in [4096, 8192), 9 in [8192, 16384), 1 in [2^20, 2^21)
	h.assign(40, 0);
	h[12] = 90;
	h[13] = 9;
	h[20] = 1;
	const Histogram three(h);
	EXPECT_TRUE(near(three.percentile(0.5), 4096 + 4096 * (50.0 / 90)));
	EXPECT_TRUE(near(three.percentile(0.9), 8192)); // rank 90: top of bucket 12
	EXPECT_TRUE(near(three.percentile(0.99), 16384)); // rank 99: top of bucket 13
	EXPECT_TRUE(near(three.percentile(0.999), 1048576 + 1048576 * ((99.9 - 99) / 1)));
	// monotonic
	double last = 0;
	for (int i = 0; i <= 1000; i++) {
		const auto v = three.percentile(i / 1000.0);
		EXPECT_TRUE(v && *v >= last) << "at q=" << i / 1000.0;
		last = v.value_or(last);
	}

	// the top bucket (39) and a huge count do not overflow
	h.assign(40, 0);
	h[39] = UINT64_MAX / 2;
	EXPECT_TRUE(near(Histogram(h).percentile(0.5), std::ldexp(1.5, 39)));
}

// A control file read as the module prints it, with a key this version does not
// know and some noise lines.
const char *const kSample =
	"state=done\n"
	"path=ocq-flow\n"
	"conns=2\n"
	"credits=16\n"
	"rate=0\n"
	"elapsed_ms=20000\n"
	"calls=100000\n"
	"calls_target=0\n"
	"bytes=50000000\n"
	"errors=0\n"
	"credit_stalls=12\n"
	"reorders=0\n"
	"lost=0\n"
	"duplicated=0\n"
	"dropped=0\n"
	"backlog=0\n"
	"completions=200000\n"
	"events=50000\n"
	"runs=40000\n"
	"empty_runs=400\n"
	"repolls=3000\n"
	"arms=41000\n"
	"signaled=200000\n"
	"sends=100000\n"
	"lat_hist=0,0,0,0,0,0,0,0,0,0,0,0,0,0,40000,58500,1400,90,10,0,0,0,0,0,0,0,"
	"0,0,0,0,0,0,0,0,0,0,0,0,0,0\n"
	"cpu_ns=123456789\n"
	"future_counter=7\n"
	"this line has no equals sign\n"
	"bad key=1\n"
	"error=\n";

TEST(StatusTest, Parse)
{
	const Status st = Status::parse(kSample);
	EXPECT_EQ(st.state(), "done");
	EXPECT_TRUE(st.finished());
	EXPECT_EQ(st.str("path"), "ocq-flow");
	EXPECT_EQ(st.num("calls").value_or(0), 100000U);
	EXPECT_EQ(st.num("future_counter").value_or(0), 7U);
	EXPECT_TRUE(st.has("error") && st.str("error").empty());
	EXPECT_FALSE(st.has("bad key"));
	EXPECT_FALSE(st.num("path"));
	EXPECT_FALSE(st.num("missing"));
	const auto h = st.latHist();
	ASSERT_EQ(h.size(), 40U);
	EXPECT_EQ(h[14], 40000U);
	EXPECT_EQ(Histogram(h).total(), 100000U);

	EXPECT_TRUE(Status::parse("state=stopped\n").finished());
	EXPECT_TRUE(Status::parse("state=aborted\n").finished());
	EXPECT_FALSE(Status::parse("state=running\n").finished());
	EXPECT_FALSE(Status::parse("state=idle\n").finished());
	EXPECT_FALSE(Status::parse("").finished());
	EXPECT_TRUE(Status::parse("lat_hist=1,x,3\n").latHist().empty());
	EXPECT_EQ(Status::parse("state=done\r\nstate=running\r\n").state(), "running");
	EXPECT_EQ(Status::parse(" calls = 5 \n").num("calls").value_or(0), 5U);
}

TEST(ReportTest, DerivedValuesAndTable)
{
	const Report r(Status::parse(kSample), "start path=ocq-flow");
	EXPECT_TRUE(r.passed());
	EXPECT_TRUE(near(r.callsPerSec(), 5000));
	EXPECT_TRUE(near(r.mbPerSec(), 2.5));
	EXPECT_TRUE(near(r.per1kCompletions("events"), 250));
	EXPECT_TRUE(near(r.per1kCompletions("runs"), 200));
	EXPECT_TRUE(near(r.emptyRunsPct(), 1));
	EXPECT_TRUE(near(r.latencyNs(0.5), 32768 + 32768 * (10000.0 / 58500)));
	EXPECT_TRUE(near(r.latencyNs(0.99), 65536 + 65536 * (500.0 / 1400)));
	EXPECT_TRUE(near(r.latencyNs(0.999), 131072)); // rank 99900: the top of bucket 16

	const std::string table = r.table();
	EXPECT_TRUE(contains(table, "5000.0 calls/s"));
	EXPECT_TRUE(contains(table, "2.50 MB/s"));
	EXPECT_TRUE(contains(table, "250.0 per 1k completions"));
	EXPECT_TRUE(contains(table, "400 (1.00 % of runs)"));
	EXPECT_TRUE(contains(table, "result: PASS"));
}

// The keys of the run JSON, in order, and the type each one has for kSample: what
// tools/testing/bench/aggregate.py, selftests/soak/soak_demo.sh and demo.sh read.
const std::vector<std::pair<const char *, json::value_t>> kRunKeys = {
	{"ocq_demo_version", json::value_t::string},
	{"command", json::value_t::string},
	{"state", json::value_t::string},
	{"path", json::value_t::string},
	{"passed", json::value_t::boolean},
	{"verdict", json::value_t::string},
	{"error", json::value_t::string},
	{"conns", json::value_t::number_unsigned},
	{"credits", json::value_t::number_unsigned},
	{"rate", json::value_t::number_unsigned},
	{"elapsed_ms", json::value_t::number_unsigned},
	{"calls", json::value_t::number_unsigned},
	{"bytes", json::value_t::number_unsigned},
	{"calls_per_sec", json::value_t::number_float},
	{"mb_per_sec", json::value_t::number_float},
	{"latency_p50_ns", json::value_t::number_unsigned},
	{"latency_p99_ns", json::value_t::number_unsigned},
	{"latency_p999_ns", json::value_t::number_unsigned},
	{"completions", json::value_t::number_unsigned},
	{"events_per_1k_completions", json::value_t::number_float},
	{"runs_per_1k_completions", json::value_t::number_float},
	{"empty_runs", json::value_t::number_unsigned},
	{"empty_runs_pct", json::value_t::number_float},
	{"repolls", json::value_t::number_unsigned},
	{"credit_stalls", json::value_t::number_unsigned},
	{"reorders", json::value_t::number_unsigned},
	{"lost", json::value_t::number_unsigned},
	{"duplicated", json::value_t::number_unsigned},
	{"dropped", json::value_t::number_unsigned},
	{"backlog", json::value_t::number_unsigned},
	{"errors", json::value_t::number_unsigned},
	{"counters", json::value_t::object},
	{"lat_hist", json::value_t::array},
	{"raw", json::value_t::object},
};

TEST(ReportTest, Json)
{
	const Report r(Status::parse(kSample), "start path=ocq-flow");
	const std::string text = r.json();
	ASSERT_FALSE(text.empty());
	EXPECT_EQ(text.front(), '{');
	EXPECT_EQ(text.substr(text.size() - 2), "}\n");
	const json j = json::parse(text);
	ASSERT_TRUE(j.is_object());

	// every key, in this order, with this type, and no other
	std::vector<std::string> keys;
	const auto ordered = nlohmann::ordered_json::parse(text);
	for (const auto &kv : ordered.items())
		keys.push_back(kv.key());
	ASSERT_EQ(keys.size(), kRunKeys.size());
	for (std::size_t i = 0; i < kRunKeys.size(); i++) {
		EXPECT_EQ(keys[i], kRunKeys[i].first);
		EXPECT_EQ(j[kRunKeys[i].first].type(), kRunKeys[i].second) << kRunKeys[i].first;
	}

	EXPECT_EQ(j["ocq_demo_version"], kVersion);
	EXPECT_EQ(j["command"], "start path=ocq-flow");
	EXPECT_EQ(j["state"], "done");
	EXPECT_EQ(j["path"], "ocq-flow");
	EXPECT_EQ(j["passed"], true);
	EXPECT_EQ(j["verdict"], "pass");
	EXPECT_EQ(j["error"], "");
	EXPECT_EQ(j["conns"], 2);
	EXPECT_EQ(j["calls"], 100000);
	EXPECT_EQ(j["calls_per_sec"], 5000.0);
	EXPECT_EQ(j["mb_per_sec"], 2.5);
	EXPECT_EQ(j["latency_p50_ns"], 38369); // 32768 + 32768 * 10000 / 58500, rounded
	EXPECT_EQ(j["latency_p999_ns"], 131072);
	EXPECT_EQ(j["events_per_1k_completions"], 250.0);
	EXPECT_EQ(j["runs_per_1k_completions"], 200.0);
	EXPECT_EQ(j["empty_runs_pct"], 1.0);
	EXPECT_EQ(j["reorders"], 0);
	EXPECT_EQ(j["credit_stalls"], 12);
	// the text keeps a decimal point on the derived rates
	EXPECT_TRUE(contains(text, "\"calls_per_sec\": 5000.0,"));
	EXPECT_TRUE(contains(text, "\"passed\": true,"));
	EXPECT_TRUE(contains(text, "\"reorders\": 0,"));

	// every numeric value of the read, known or not; noise lines left out
	const json &c = j["counters"];
	EXPECT_EQ(c["future_counter"], 7);
	EXPECT_EQ(c["cpu_ns"], 123456789);
	EXPECT_EQ(c["calls_target"], 0);
	EXPECT_FALSE(c.contains("path"));
	EXPECT_FALSE(c.contains("error"));
	EXPECT_FALSE(c.contains("lat_hist"));
	EXPECT_FALSE(c.contains("bad key"));
	for (const auto &kv : c.items())
		EXPECT_TRUE(kv.value().is_number_unsigned()) << kv.key();

	ASSERT_EQ(j["lat_hist"].size(), 40U);
	EXPECT_EQ(j["lat_hist"][0], 0);
	EXPECT_EQ(j["lat_hist"][14], 40000);
	EXPECT_EQ(j["lat_hist"][15], 58500);

	// the read as it was, every value a string
	const json &raw = j["raw"];
	EXPECT_EQ(raw["path"], "ocq-flow");
	EXPECT_EQ(raw["calls"], "100000");
	EXPECT_EQ(raw["error"], "");
	EXPECT_EQ(raw["lat_hist"].get<std::string>().rfind("0,0,", 0), 0U);
	for (const auto &kv : raw.items())
		EXPECT_TRUE(kv.value().is_string()) << kv.key();
}

// What selftests/soak/soak_demo.sh does: the first "KEY": N line of the file.
TEST(ReportTest, JsonLinesForSed)
{
	const std::string text = Report(Status::parse(kSample), "start").json();
	std::istringstream in(text);
	std::string line;
	std::vector<std::string> seen;
	while (std::getline(in, line))
		for (const char *key : {"completions", "lost", "reorders", "duplicated"})
			if (line.find(std::string("\"") + key + "\": ") != std::string::npos &&
			    std::find(seen.begin(), seen.end(), key) == seen.end()) {
				seen.emplace_back(key);
				EXPECT_TRUE(contains(line, key == std::string("completions") ?
								   "200000" :
								   ": 0"));
			}
	EXPECT_EQ(seen.size(), 4U);
}

TEST(ReportTest, Verification)
{
	// a reordering ocq-* path fails verification; a baseline path does not
	std::string bad = kSample;
	bad.replace(bad.find("reorders=0"), 10, "reorders=3");
	const Report rb(Status::parse(bad), "start");
	EXPECT_FALSE(rb.passed());
	EXPECT_TRUE(contains(rb.verdict(), "reorders=3"));
	EXPECT_TRUE(contains(rb.table(), "result: FAIL"));
	const json jb = json::parse(rb.json());
	EXPECT_EQ(jb["passed"], false);
	EXPECT_EQ(jb["verdict"], rb.verdict());
	EXPECT_EQ(jb["reorders"], 3);
	EXPECT_TRUE(contains(rb.json(), "\"passed\": false,"));
	bad.replace(bad.find("path=ocq-flow"), 13, "path=naive");
	const Report rn(Status::parse(bad), "start");
	EXPECT_TRUE(rn.passed());
	EXPECT_TRUE(contains(rn.table(), "result: PASS (run done; naive is a baseline path"));

	// a missing counter cannot be verified
	std::string missing = kSample;
	missing.erase(missing.find("lost=0\n"), 7);
	const Report rm(Status::parse(missing), "start");
	EXPECT_TRUE(contains(rm.verdict(), "lost missing"));
	EXPECT_TRUE(json::parse(rm.json())["lost"].is_null());

	// not done: failed, with the module's reason
	const Report ra(Status::parse("state=aborted\npath=ocq-flow\nerror=connect failed\n"), "");
	EXPECT_FALSE(ra.passed());
	EXPECT_TRUE(contains(ra.verdict(), "aborted: connect failed"));
	EXPECT_EQ(json::parse(ra.json())["error"], "connect failed");
	EXPECT_FALSE(Report(Status::parse("state=stopped\npath=naive\n"), "").passed());
}

TEST(ReportTest, OpenLoop)
{
	std::string open = kSample;
	open.replace(open.find("rate=0"), 6, "rate=2000");
	open.replace(open.find("dropped=0"), 9, "dropped=17");
	open.replace(open.find("backlog=0"), 9, "backlog=5");
	const Report r(Status::parse(open), "start rate=2000");
	EXPECT_TRUE(r.passed()); // drops are the sender's, not a CQ's fault
	EXPECT_TRUE(contains(r.table(), "2 connections, open loop at 2000 messages/s"));
	EXPECT_TRUE(contains(r.table(), "dropped                   17 (due, send queue full"));
	EXPECT_TRUE(contains(r.table(), "backlog                   5 (due, not yet posted"));
	const json j = json::parse(r.json());
	EXPECT_EQ(j["rate"], 2000);
	EXPECT_EQ(j["dropped"], 17);
	EXPECT_EQ(j["backlog"], 5);
	// the closed loop's table shows its credits and no drops
	EXPECT_TRUE(contains(Report(Status::parse(kSample), "").table(), "16 credits"));
	EXPECT_EQ(Report(Status::parse(kSample), "").table().find("dropped"), std::string::npos);
}

TEST(ReportTest, NoCounters)
{
	// no counters at all: "-" and null, no division by zero
	const Report empty(Status::parse("state=done\npath=naive\n"), "");
	EXPECT_FALSE(empty.callsPerSec());
	EXPECT_TRUE(contains(empty.table(), "- calls/s"));
	const std::string text = empty.json();
	EXPECT_TRUE(contains(text, "\"calls_per_sec\": null,"));
	EXPECT_TRUE(contains(text, "\"counters\": {},"));
	const json j = json::parse(text);
	for (const char *key :
	     {"calls_per_sec", "mb_per_sec", "latency_p50_ns", "latency_p99_ns", "latency_p999_ns",
	      "events_per_1k_completions", "runs_per_1k_completions", "empty_runs_pct", "conns",
	      "calls", "completions", "lost", "error"})
		EXPECT_TRUE(j[key].is_null()) << key;
	EXPECT_TRUE(j["counters"].empty());
	EXPECT_TRUE(j["lat_hist"].is_array() && j["lat_hist"].empty());
	EXPECT_EQ(j["raw"].size(), 2U);
	// zero elapsed time: no rate
	EXPECT_TRUE(json::parse(Report(Status::parse("state=done\nelapsed_ms=0\ncalls=5\n"), "")
					.json())["calls_per_sec"]
			    .is_null());
}

TEST(ReportTest, JsonStrings)
{
	// quotes, backslashes and control characters come back as they were
	const std::string odd = "a\"b\\c\n\x01\t";
	EXPECT_EQ(json::parse(Report(Status::parse("state=done\n"), odd).json())["command"], odd);
	EXPECT_EQ(json(std::string("a\"b\\c\n\x01")).dump(), "\"a\\\"b\\\\c\\n\\u0001\"");
	// bytes that are not UTF-8 do not make the JSON unwritable
	const std::string text =
		Report(Status::parse("state=aborted\nerror=bad \xff byte\n"), "").json();
	const json j = json::parse(text);
	EXPECT_EQ(j["error"], "bad \xef\xbf\xbd byte"); // U+FFFD
	EXPECT_EQ(j["raw"]["error"], "bad \xef\xbf\xbd byte");
}

TEST(StatusTest, Text)
{
	const std::string text = Report::statusText(Status::parse(kSample));
	EXPECT_TRUE(contains(text, "state"));
	EXPECT_TRUE(contains(text, "future_counter"));
	EXPECT_TRUE(contains(text, "100000 calls, p50"));
}

TEST(StatusTest, Json)
{
	const std::string text = Report::statusJson(Status::parse(kSample));
	EXPECT_EQ(text.substr(text.size() - 2), "}\n");
	const json j = json::parse(text);
	std::vector<std::string> keys;
	const auto ordered = nlohmann::ordered_json::parse(text);
	for (const auto &kv : ordered.items())
		keys.push_back(kv.key());
	EXPECT_EQ(keys,
		  (std::vector<std::string>{"ocq_demo_version", "state", "path", "error",
					    "finished", "latency_p50_ns", "latency_p99_ns",
					    "latency_p999_ns", "counters", "lat_hist", "raw"}));
	EXPECT_EQ(j["ocq_demo_version"], kVersion);
	EXPECT_EQ(j["state"], "done");
	EXPECT_EQ(j["path"], "ocq-flow");
	EXPECT_EQ(j["error"], "");
	EXPECT_EQ(j["finished"], true);
	EXPECT_EQ(j["latency_p50_ns"], 38369);
	EXPECT_EQ(j["latency_p999_ns"], 131072);
	EXPECT_EQ(j["counters"]["calls"], 100000);
	EXPECT_EQ(j["counters"]["future_counter"], 7);
	EXPECT_EQ(j["lat_hist"].size(), 40U);
	EXPECT_EQ(j["raw"]["state"], "done");

	// a module between runs: idle, no histogram yet
	const json idle = json::parse(Report::statusJson(Status::parse("state=idle\n")));
	EXPECT_EQ(idle["state"], "idle");
	EXPECT_EQ(idle["finished"], false);
	EXPECT_TRUE(idle["path"].is_null());
	EXPECT_TRUE(idle["latency_p50_ns"].is_null());
	EXPECT_TRUE(idle["counters"].is_object() && idle["counters"].empty());
	EXPECT_TRUE(idle["lat_hist"].is_array() && idle["lat_hist"].empty());
}

TEST(ControlFileTest, ReadWriteAndGone)
{
	char name[] = "/tmp/ocq-demo-test-XXXXXX";
	const int fd = mkstemp(name);
	ASSERT_GE(fd, 0);
	close(fd);
	{
		std::ofstream f(name);
		f << kSample;
	}
	ControlFile cf(name);
	std::string text;
	EXPECT_TRUE(cf.read(text));
	EXPECT_EQ(text, kSample);
	EXPECT_TRUE(cf.write("stop"));
	EXPECT_TRUE(cf.read(text));
	EXPECT_EQ(text, std::string(kSample) + "stop"); // appended: the fake keeps its contents
	EXPECT_EQ(Status::parse(text).state(), "done");
	unlink(name);

	ControlFile gone(name);
	EXPECT_FALSE(gone.read(text));
	EXPECT_TRUE(gone.unavailable());
	EXPECT_TRUE(contains(gone.lastError(), "module loaded"));
	EXPECT_FALSE(gone.write("stop"));
	EXPECT_TRUE(gone.unavailable());
}

} // namespace

int main(int argc, char **argv)
{
	testing::InitGoogleTest(&argc, argv);
	return RUN_ALL_TESTS();
}
