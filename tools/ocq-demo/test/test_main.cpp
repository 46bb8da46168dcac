// SPDX-License-Identifier: GPL-2.0
//
// Host unit test of ocq-demo: option parsing, histogram percentiles, parsing of a
// control file read and the report built from it. No test framework: CHECK counts
// failures, the exit status is non-zero if any. Run by "make check" (ASan, UBSan).

#include "../control_file.h"
#include "../histogram.h"
#include "../options.h"
#include "../report.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace ocq_demo;

namespace {

int gChecks = 0;
int gFailures = 0;

void check(bool ok, const char *expr, const char *file, int line)
{
	gChecks++;
	if (!ok) {
		gFailures++;
		std::cerr << file << ":" << line << ": CHECK failed: " << expr << "\n";
	}
}

#define CHECK(expr) check(static_cast<bool>(expr), #expr, __FILE__, __LINE__)
#define CHECK_EQ(a, b) check((a) == (b), #a " == " #b, __FILE__, __LINE__)

bool near(const std::optional<double> &v, double want)
{
	return v && std::fabs(*v - want) <= 1e-6 * std::max(1.0, std::fabs(want));
}

bool contains(const std::string &s, const std::string &part)
{
	return s.find(part) != std::string::npos;
}

Options parseOk(const std::vector<std::string> &args)
{
	Options o;
	const bool ok = o.parse(args);
	if (!ok)
		std::cerr << "unexpected parse error: " << o.error() << "\n";
	CHECK(ok);
	return o;
}

std::string parseError(const std::vector<std::string> &args)
{
	Options o;
	CHECK(!o.parse(args));
	return o.error();
}

void testNumbers()
{
	CHECK_EQ(parseUint("0", 0, 10).value_or(99), 0U);
	CHECK_EQ(parseUint("16", 1, 16).value_or(0), 16U);
	CHECK(!parseUint("17", 1, 16));
	CHECK(!parseUint("", 0, 10));
	CHECK(!parseUint("-1", 0, 10));
	CHECK(!parseUint("+1", 0, 10));
	CHECK(!parseUint("1x", 0, 10));
	CHECK(!parseUint(" 1", 0, 10));
	CHECK(!parseUint("18446744073709551616", 0, UINT64_MAX)); // 2^64
	CHECK_EQ(parseUint("18446744073709551615", 0, UINT64_MAX).value_or(0), UINT64_MAX);

	CHECK_EQ(parseSecondsAsMs("20", 3600000).value_or(0), 20000U);
	CHECK_EQ(parseSecondsAsMs("0.5", 3600000).value_or(0), 500U);
	CHECK_EQ(parseSecondsAsMs(".25", 3600000).value_or(0), 250U);
	CHECK_EQ(parseSecondsAsMs("1.125", 3600000).value_or(0), 1125U);
	CHECK_EQ(parseSecondsAsMs("0", 3600000).value_or(1), 0U);
	CHECK_EQ(parseSecondsAsMs("3600", 3600000).value_or(0), 3600000U);
	CHECK(!parseSecondsAsMs("3600.001", 3600000));
	CHECK(!parseSecondsAsMs("1.", 3600000));
	CHECK(!parseSecondsAsMs("1.2345", 3600000));
	CHECK(!parseSecondsAsMs(".", 3600000));
	CHECK(!parseSecondsAsMs("", 3600000));
	CHECK(!parseSecondsAsMs("1e3", 3600000));
	CHECK(!parseSecondsAsMs("-1", 3600000));
}

void testMix()
{
	CHECK(checkMix("null:1,echo:1,read:1,write:1").empty());
	CHECK(checkMix("echo:5").empty());
	CHECK(checkMix("null:0,write:100").empty());
	CHECK(!checkMix("").empty());
	CHECK(!checkMix("null:0").empty());
	CHECK(!checkMix("null").empty());
	CHECK(!checkMix("null:1,").empty());
	CHECK(!checkMix("null:1,,echo:1").empty());
	CHECK(!checkMix("nfs:1").empty());
	CHECK(!checkMix("null:1,null:2").empty());
	CHECK(!checkMix("null:101").empty());
	CHECK(!checkMix("null:-1").empty());
}

void testOptions()
{
	Options o = parseOk({"run"});
	CHECK(o.command() == Command::kRun);
	CHECK_EQ(o.startCommand(), "start");
	CHECK_EQ(o.control, kDefaultControl);
	CHECK_EQ(o.intervalMs, 1000U);

	o = parseOk({"run",
		     "--conns",
		     "2",
		     "--credits",
		     "128",
		     "--calls",
		     "1000",
		     "--duration",
		     "2.5",
		     "--mix",
		     "null:1,echo:3",
		     "--echo-size",
		     "4096",
		     "--chunk-size",
		     "512",
		     "--path",
		     "ocq-parallel",
		     "--work-ns",
		     "1000000",
		     "--postpone",
		     "--json",
		     "out.json",
		     "--control",
		     "/tmp/ctl",
		     "--interval",
		     "250"});
	CHECK_EQ(o.startCommand(), "start conns=2 credits=128 calls=1000 duration_ms=2500 "
				   "mix=null:1,echo:3 echo_size=4096 chunk_size=512 "
				   "path=ocq-parallel work_ns=1000000 postpone=1");
	CHECK_EQ(o.jsonFile, "out.json");
	CHECK_EQ(o.control, "/tmp/ctl");
	CHECK_EQ(o.intervalMs, 250U);
	CHECK(!o.dryRun);

	// --opt=value, and a later option overrides an earlier one
	o = parseOk({"run", "--conns=4", "--path=naive", "--conns", "8", "--dry-run"});
	CHECK_EQ(o.startCommand(), "start conns=8 path=naive");
	CHECK(o.dryRun);

	// every path name is accepted
	for (const auto &p : pathNames())
		CHECK_EQ(parseOk({"run", "--path", p}).startCommand(), "start path=" + p);
	CHECK(isOcqPath("ocq-strict") && isOcqPath("ocq-flow") && isOcqPath("ocq-parallel"));
	CHECK(!isOcqPath("naive") && !isOcqPath("upstream-wq") && !isOcqPath("locked"));

	// --calls alone, --duration 0 with calls: fine
	CHECK_EQ(parseOk({"run", "--calls", "5", "--duration", "0"}).startCommand(),
		 "start calls=5 duration_ms=0");

	CHECK(parseOk({"stop"}).command() == Command::kStop);
	CHECK(parseOk({"status", "--control", "/x"}).command() == Command::kStatus);
	CHECK_EQ(parseOk({"status", "--control=/x"}).control, "/x");
	CHECK(parseOk({"--help"}).command() == Command::kHelp);
	CHECK(parseOk({"-h"}).command() == Command::kHelp);
	CHECK(contains(parseError({"run", "--conns", "99", "--help"}),
		       "1..16")); // first error wins
	CHECK(parseOk({"run", "--help"}).command() == Command::kHelp);
	CHECK(parseOk({"--version"}).command() == Command::kVersion);
	CHECK(parseOk({"help"}).command() == Command::kHelp);

	// usage errors
	CHECK(contains(parseError({}), "no command"));
	CHECK(contains(parseError({"bogus"}), "unknown command"));
	CHECK(contains(parseError({"--conns", "2"}), "before the command"));
	CHECK(contains(parseError({"run", "--conns", "0"}), "1..16"));
	CHECK(contains(parseError({"run", "--conns", "17"}), "1..16"));
	CHECK(contains(parseError({"run", "--conns", "two"}), "--conns"));
	CHECK(contains(parseError({"run", "--credits", "129"}), "1..128"));
	CHECK(contains(parseError({"run", "--echo-size", "0"}), "1..4096"));
	CHECK(contains(parseError({"run", "--echo-size", "4097"}), "1..4096"));
	CHECK(contains(parseError({"run", "--chunk-size", "511"}), "512..1048576"));
	CHECK(contains(parseError({"run", "--chunk-size", "1048577"}), "512..1048576"));
	CHECK(contains(parseError({"run", "--work-ns", "1000001"}), "0..1000000"));
	CHECK(contains(parseError({"run", "--interval", "5"}), "10..60000"));
	CHECK(contains(parseError({"run", "--duration", "abc"}), "--duration"));
	CHECK(contains(parseError({"run", "--path", "fast"}), "unknown path"));
	CHECK(contains(parseError({"run", "--mix", "nfs:1"}), "--mix"));
	CHECK(contains(parseError({"run", "--conns"}), "needs a value"));
	CHECK(contains(parseError({"run", "--postpone=1"}), "takes no value"));
	CHECK(contains(parseError({"run", "--frobnicate"}), "unknown option"));
	CHECK(contains(parseError({"run", "-c", "2"}), "unexpected argument"));
	CHECK(contains(parseError({"run", "extra"}), "unexpected argument"));
	CHECK(contains(parseError({"run", "--"}), "unexpected argument"));
	CHECK(contains(parseError({"status", "--conns", "2"}), "only for 'run'"));
	CHECK(contains(parseError({"stop", "--json", "x"}), "only for 'run'"));
	CHECK(contains(parseError({"run", "--json", ""}), "empty"));
	CHECK(contains(parseError({"run", "--calls", "0", "--duration", "0"}), "never end"));
	CHECK(contains(parseError({"run", "--calls", "4294967296"}), "0..4294967295"));
	CHECK(contains(parseError({"run", "--duration", "3601"}), "0..3600"));

	// the help text documents every option and the exit codes
	const std::string help = usageText();
	for (const char *opt :
	     {"--conns", "--credits", "--calls", "--duration", "--mix", "--echo-size",
	      "--chunk-size", "--path", "--work-ns", "--postpone", "--json", "--control",
	      "--interval", "--dry-run", "--help", "--version", "interpolated", "Exit status"})
		CHECK(contains(help, opt));
	for (const auto &p : pathNames())
		CHECK(contains(help, p));
}

void testHistogram()
{
	CHECK(!Histogram({}).percentile(0.5));
	CHECK(!Histogram(std::vector<std::uint64_t>(40, 0)).percentile(0.5));

	// 100 calls, all in bucket 10: [1024, 2048) ns
	std::vector<std::uint64_t> h(40, 0);
	h[10] = 100;
	const Histogram one(h);
	CHECK_EQ(one.total(), 100U);
	CHECK(near(one.percentile(0.5), 1536));
	CHECK(near(one.percentile(0.99), 1024 + 0.99 * 1024));
	CHECK(near(one.percentile(0.0), 1024));
	CHECK(near(one.percentile(1.0), 2048));
	CHECK(!one.percentile(-0.1));
	CHECK(!one.percentile(1.5));

	// 90 in [4096, 8192), 9 in [8192, 16384), 1 in [2^20, 2^21)
	h.assign(40, 0);
	h[12] = 90;
	h[13] = 9;
	h[20] = 1;
	const Histogram three(h);
	CHECK(near(three.percentile(0.5), 4096 + 4096 * (50.0 / 90)));
	CHECK(near(three.percentile(0.9), 8192)); // rank 90: top of bucket 12
	CHECK(near(three.percentile(0.99), 16384)); // rank 99: top of bucket 13
	CHECK(near(three.percentile(0.999), 1048576 + 1048576 * ((99.9 - 99) / 1)));
	// monotonic
	double last = 0;
	for (int i = 0; i <= 1000; i++) {
		const auto v = three.percentile(i / 1000.0);
		CHECK(v && *v >= last);
		last = v.value_or(last);
	}

	// the top bucket (39) and a huge count do not overflow
	h.assign(40, 0);
	h[39] = UINT64_MAX / 2;
	CHECK(near(Histogram(h).percentile(0.5), std::ldexp(1.5, 39)));
}

// A control file read as the module prints it, with a key this version does not
// know and some noise lines.
const char *const kSample =
	"state=done\n"
	"path=ocq-flow\n"
	"conns=2\n"
	"credits=16\n"
	"elapsed_ms=20000\n"
	"calls=100000\n"
	"calls_target=0\n"
	"bytes=50000000\n"
	"errors=0\n"
	"credit_stalls=12\n"
	"reorders=0\n"
	"lost=0\n"
	"duplicated=0\n"
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

void testStatus()
{
	const Status st = Status::parse(kSample);
	CHECK_EQ(st.state(), "done");
	CHECK(st.finished());
	CHECK_EQ(st.str("path"), "ocq-flow");
	CHECK_EQ(st.num("calls").value_or(0), 100000U);
	CHECK_EQ(st.num("future_counter").value_or(0), 7U);
	CHECK(st.has("error") && st.str("error").empty());
	CHECK(!st.has("bad key"));
	CHECK(!st.num("path"));
	CHECK(!st.num("missing"));
	const auto h = st.latHist();
	CHECK_EQ(h.size(), 40U);
	CHECK_EQ(h[14], 40000U);
	CHECK_EQ(Histogram(h).total(), 100000U);

	CHECK(Status::parse("state=stopped\n").finished());
	CHECK(Status::parse("state=aborted\n").finished());
	CHECK(!Status::parse("state=running\n").finished());
	CHECK(!Status::parse("state=idle\n").finished());
	CHECK(!Status::parse("").finished());
	CHECK(Status::parse("lat_hist=1,x,3\n").latHist().empty());
	CHECK(Status::parse("state=done\r\nstate=running\r\n").state() == "running");
	CHECK_EQ(Status::parse(" calls = 5 \n").num("calls").value_or(0), 5U);

	const Report r(st, "start path=ocq-flow");
	CHECK(r.passed());
	CHECK(near(r.callsPerSec(), 5000));
	CHECK(near(r.mbPerSec(), 2.5));
	CHECK(near(r.per1kCompletions("events"), 250));
	CHECK(near(r.per1kCompletions("runs"), 200));
	CHECK(near(r.emptyRunsPct(), 1));
	CHECK(near(r.latencyNs(0.5), 32768 + 32768 * (10000.0 / 58500)));
	CHECK(near(r.latencyNs(0.99), 65536 + 65536 * (500.0 / 1400)));
	CHECK(near(r.latencyNs(0.999), 131072)); // rank 99900: the top of bucket 16

	const std::string table = r.table();
	CHECK(contains(table, "5000.0 calls/s"));
	CHECK(contains(table, "2.50 MB/s"));
	CHECK(contains(table, "250.0 per 1k completions"));
	CHECK(contains(table, "400 (1.00 % of runs)"));
	CHECK(contains(table, "result: PASS"));

	const std::string json = r.json();
	CHECK(json.front() == '{' && json.substr(json.size() - 2) == "}\n");
	CHECK(contains(json, "\"calls_per_sec\": 5000.0,"));
	CHECK(contains(json, "\"passed\": true,"));
	CHECK(contains(json, "\"reorders\": 0,"));
	CHECK(contains(json, "\"future_counter\": 7"));
	CHECK(contains(json, "\"path\": \"ocq-flow\""));
	CHECK(contains(json, "\"command\": \"start path=ocq-flow\""));
	CHECK(contains(json, "\"lat_hist\": [\n    0,\n    0,"));
	CHECK(contains(json, "\"error\": \"\""));

	// a reordering ocq-* path fails verification; a baseline path does not
	std::string bad = kSample;
	bad.replace(bad.find("reorders=0"), 10, "reorders=3");
	const Report rb(Status::parse(bad), "start");
	CHECK(!rb.passed());
	CHECK(contains(rb.verdict(), "reorders=3"));
	CHECK(contains(rb.table(), "result: FAIL"));
	CHECK(contains(rb.json(), "\"passed\": false,"));
	bad.replace(bad.find("path=ocq-flow"), 13, "path=naive");
	const Report rn(Status::parse(bad), "start");
	CHECK(rn.passed());
	CHECK(contains(rn.table(), "result: PASS (run done; naive is a baseline path"));

	// a missing counter cannot be verified
	std::string missing = kSample;
	missing.erase(missing.find("lost=0\n"), 7);
	CHECK(contains(Report(Status::parse(missing), "start").verdict(), "lost missing"));

	// not done: failed, with the module's reason
	const Report ra(Status::parse("state=aborted\npath=ocq-flow\nerror=connect failed\n"), "");
	CHECK(!ra.passed());
	CHECK(contains(ra.verdict(), "aborted: connect failed"));
	CHECK(!Report(Status::parse("state=stopped\npath=naive\n"), "").passed());
	// no counters at all: "-" and null, no division by zero
	const Report empty(Status::parse("state=done\npath=naive\n"), "");
	CHECK(!empty.callsPerSec());
	CHECK(contains(empty.table(), "- calls/s"));
	CHECK(contains(empty.json(), "\"calls_per_sec\": null,"));
	CHECK(contains(empty.json(), "\"counters\": {},"));

	const std::string text = Report::statusText(st);
	CHECK(contains(text, "state"));
	CHECK(contains(text, "future_counter"));
	CHECK(contains(text, "100000 calls, p50"));

	CHECK_EQ(nlohmann::json(std::string("a\"b\\c\n\x01")).dump(), "\"a\\\"b\\\\c\\n\\u0001\"");
	CHECK(contains(Report(Status::parse("error=\xff\n"), "").json(),
		       "\"error\": \"\xef\xbf\xbd\""));
}

void testControlFile()
{
	char name[] = "/tmp/ocq-demo-test-XXXXXX";
	const int fd = mkstemp(name);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	close(fd);
	{
		std::ofstream f(name);
		f << kSample;
	}
	ControlFile cf(name);
	std::string text;
	CHECK(cf.read(text));
	CHECK_EQ(text, kSample);
	CHECK(cf.write("stop"));
	CHECK(cf.read(text));
	CHECK_EQ(text, std::string(kSample) + "stop"); // appended: the fake keeps its contents
	CHECK_EQ(Status::parse(text).state(), "done");
	unlink(name);

	ControlFile gone(name);
	CHECK(!gone.read(text));
	CHECK(gone.unavailable());
	CHECK(contains(gone.lastError(), "module loaded"));
	CHECK(!gone.write("stop"));
	CHECK(gone.unavailable());
}

} // namespace

int main()
{
	testNumbers();
	testMix();
	testOptions();
	testHistogram();
	testStatus();
	testControlFile();
	if (gFailures != 0) {
		std::cerr << "ocq-demo-test: " << gFailures << " of " << gChecks
			  << " checks FAILED\n";
		return 1;
	}
	std::cout << "ocq-demo-test: all " << gChecks << " checks passed\n";
	return 0;
}
