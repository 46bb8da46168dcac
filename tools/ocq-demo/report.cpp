// SPDX-License-Identifier: GPL-2.0
//
// report.cpp - the results of a run.

#include "report.h"

#include "histogram.h"
#include "options.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace ocq_demo {

namespace {

std::string fixed(double v, int decimals)
{
	char buf[64];
	std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return buf;
}

std::string orDash(const std::optional<double> &v, int decimals)
{
	return v ? fixed(*v, decimals) : std::string("-");
}

// a latency in ns, shown in us, ms or s, with 3 or 4 significant digits
std::string usec(const std::optional<double> &ns)
{
	if (!ns)
		return "-";
	auto show = [](double v, const char *unit) {
		return fixed(v, v < 10 ? 2 : v < 100 ? 1 : 0) + " " + unit;
	};
	if (*ns < 1e6)
		return show(*ns / 1e3, "us");
	if (*ns < 1e9)
		return show(*ns / 1e6, "ms");
	return show(*ns / 1e9, "s");
}

std::string jsonNumber(const std::optional<double> &v, int decimals)
{
	if (!v || !std::isfinite(*v))
		return "null";
	return fixed(*v, decimals);
}

std::string bucketRange(std::size_t i)
{
	auto human = [](double ns) {
		if (ns >= 1e9)
			return fixed(ns / 1e9, ns >= 1e10 ? 0 : 1) + " s";
		if (ns >= 1e6)
			return fixed(ns / 1e6, ns >= 1e7 ? 0 : 1) + " ms";
		if (ns >= 1e3)
			return fixed(ns / 1e3, ns >= 1e4 ? 0 : 1) + " us";
		return fixed(ns, 0) + " ns";
	};
	const double lo = Histogram::bucketLow(i);
	return "[" + human(lo) + ", " + human(2 * lo) + ")";
}

} // namespace

std::string jsonQuote(const std::string &s)
{
	std::string out = "\"";
	for (const char ch : s) {
		const auto c = static_cast<unsigned char>(ch);
		switch (c) {
		case '"':
			out += "\\\"";
			break;
		case '\\':
			out += "\\\\";
			break;
		case '\n':
			out += "\\n";
			break;
		case '\r':
			out += "\\r";
			break;
		case '\t':
			out += "\\t";
			break;
		default:
			if (c < 0x20) {
				char buf[8];
				std::snprintf(buf, sizeof(buf), "\\u%04x", c);
				out += buf;
			} else {
				out += ch;
			}
		}
	}
	return out + "\"";
}

Report::Report(Status status, std::string command)
    : st_(std::move(status)), command_(std::move(command))
{
	const std::string &state = st_.state();
	const std::string err = st_.str("error");

	if (state != "done") {
		if (state == "aborted")
			verdict_ = "the run was aborted";
		else if (state == "stopped")
			verdict_ = "the run was stopped before its end";
		else
			verdict_ = "the run did not end (state " +
				   (state.empty() ? "unknown" : state) + ")";
		if (!err.empty())
			verdict_ += ": " + err;
		return;
	}
	if (!isOcqPath(st_.str("path")))
		return;
	std::string bad;
	for (const char *key : {"reorders", "lost", "duplicated", "errors"}) {
		const auto v = st_.num(key);
		if (!v)
			bad += std::string(bad.empty() ? "" : ", ") + key + " missing";
		else if (*v != 0)
			bad += std::string(bad.empty() ? "" : ", ") + key + "=" +
			       std::to_string(*v);
	}
	if (!bad.empty())
		verdict_ = "verification failed for " + st_.str("path") + ": " + bad;
}

std::optional<double> Report::callsPerSec() const
{
	const auto ms = st_.num("elapsed_ms");
	const auto calls = st_.num("calls");
	if (!ms || !calls || *ms == 0)
		return std::nullopt;
	return static_cast<double>(*calls) * 1000.0 / static_cast<double>(*ms);
}

std::optional<double> Report::mbPerSec() const
{
	const auto ms = st_.num("elapsed_ms");
	const auto bytes = st_.num("bytes");
	if (!ms || !bytes || *ms == 0)
		return std::nullopt;
	return static_cast<double>(*bytes) / 1e6 * 1000.0 / static_cast<double>(*ms);
}

std::optional<double> Report::latencyNs(double q) const
{
	return Histogram(st_.latHist()).percentile(q);
}

std::optional<double> Report::per1kCompletions(const std::string &key) const
{
	const auto v = st_.num(key);
	const auto c = st_.num("completions");
	if (!v || !c || *c == 0)
		return std::nullopt;
	return static_cast<double>(*v) * 1000.0 / static_cast<double>(*c);
}

std::optional<double> Report::emptyRunsPct() const
{
	const auto e = st_.num("empty_runs");
	const auto r = st_.num("runs");
	if (!e || !r || *r == 0)
		return std::nullopt;
	return static_cast<double>(*e) * 100.0 / static_cast<double>(*r);
}

std::string Report::table() const
{
	std::ostringstream o;
	auto row = [&o](const std::string &name, const std::string &value) {
		o << "  " << name << std::string(name.size() < 26 ? 26 - name.size() : 1, ' ')
		  << value << "\n";
	};
	auto count = [this](const char *key) {
		const auto v = st_.num(key);
		return v ? std::to_string(*v) : std::string("-");
	};

	o << "ocq-demo results: path " << (st_.has("path") ? st_.str("path") : "?") << ", "
	  << count("conns") << " connections, " << count("credits") << " credits, state "
	  << (st_.state().empty() ? "?" : st_.state()) << ", "
	  << orDash(st_.num("elapsed_ms") ?
			    std::optional<double>(static_cast<double>(st_.numOr0("elapsed_ms")) /
						  1000.0) :
			    std::nullopt,
		    2)
	  << " s\n";
	row("calls", count("calls") + " (" + orDash(callsPerSec(), 1) + " calls/s)");
	row("payload", count("bytes") + " bytes (" + orDash(mbPerSec(), 2) + " MB/s)");
	row("latency p50", usec(latencyNs(0.5)));
	row("latency p99", usec(latencyNs(0.99)));
	row("latency p99.9", usec(latencyNs(0.999)));
	row("completions", count("completions"));
	row("completion events", orDash(per1kCompletions("events"), 1) + " per 1k completions (" +
					 count("events") + ")");
	row("processing runs",
	    orDash(per1kCompletions("runs"), 1) + " per 1k completions (" + count("runs") + ")");
	row("empty runs", count("empty_runs") + " (" + orDash(emptyRunsPct(), 2) + " % of runs)");
	row("re-polls", count("repolls"));
	row("credit stalls", count("credit_stalls"));
	row("reorders", count("reorders"));
	row("lost", count("lost"));
	row("duplicated", count("duplicated"));
	row("errors", count("errors"));
	if (!st_.str("error").empty())
		row("module error", st_.str("error"));
	o << "  (latency percentiles interpolated within log2 buckets)\n";
	if (passed() && isOcqPath(st_.str("path")))
		o << "result: PASS (no reorder, loss, duplicate or failed call)\n";
	else if (passed())
		o << "result: PASS (run done; " << st_.str("path")
		  << " is a baseline path: its reorders, losses, duplicates and errors are"
		     " shown, not checked)\n";
	else
		o << "result: FAIL: " << verdict_ << "\n";
	return o.str();
}

std::string Report::json() const
{
	std::ostringstream o;
	auto num = [this](const char *key) {
		const auto v = st_.num(key);
		return v ? std::to_string(*v) : std::string("null");
	};
	auto str = [this](const char *key) {
		return st_.has(key) ? jsonQuote(st_.str(key)) : std::string("null");
	};

	o << "{\n";
	o << "  \"ocq_demo_version\": " << jsonQuote(kVersion) << ",\n";
	o << "  \"command\": " << jsonQuote(command_) << ",\n";
	o << "  \"state\": " << str("state") << ",\n";
	o << "  \"path\": " << str("path") << ",\n";
	o << "  \"passed\": " << (passed() ? "true" : "false") << ",\n";
	o << "  \"verdict\": " << jsonQuote(passed() ? "pass" : verdict_) << ",\n";
	o << "  \"error\": " << str("error") << ",\n";
	o << "  \"conns\": " << num("conns") << ",\n";
	o << "  \"credits\": " << num("credits") << ",\n";
	o << "  \"elapsed_ms\": " << num("elapsed_ms") << ",\n";
	o << "  \"calls\": " << num("calls") << ",\n";
	o << "  \"bytes\": " << num("bytes") << ",\n";
	o << "  \"calls_per_sec\": " << jsonNumber(callsPerSec(), 1) << ",\n";
	o << "  \"mb_per_sec\": " << jsonNumber(mbPerSec(), 3) << ",\n";
	o << "  \"latency_p50_ns\": " << jsonNumber(latencyNs(0.5), 0) << ",\n";
	o << "  \"latency_p99_ns\": " << jsonNumber(latencyNs(0.99), 0) << ",\n";
	o << "  \"latency_p999_ns\": " << jsonNumber(latencyNs(0.999), 0) << ",\n";
	o << "  \"completions\": " << num("completions") << ",\n";
	o << "  \"events_per_1k_completions\": " << jsonNumber(per1kCompletions("events"), 2)
	  << ",\n";
	o << "  \"runs_per_1k_completions\": " << jsonNumber(per1kCompletions("runs"), 2) << ",\n";
	o << "  \"empty_runs\": " << num("empty_runs") << ",\n";
	o << "  \"empty_runs_pct\": " << jsonNumber(emptyRunsPct(), 3) << ",\n";
	o << "  \"repolls\": " << num("repolls") << ",\n";
	o << "  \"credit_stalls\": " << num("credit_stalls") << ",\n";
	o << "  \"reorders\": " << num("reorders") << ",\n";
	o << "  \"lost\": " << num("lost") << ",\n";
	o << "  \"duplicated\": " << num("duplicated") << ",\n";
	o << "  \"errors\": " << num("errors") << ",\n";

	// every numeric value of the control file, known or not
	o << "  \"counters\": {";
	bool first = true;
	for (const auto &kv : st_.entries()) {
		const auto v = st_.num(kv.first);
		if (!v)
			continue;
		o << (first ? "\n" : ",\n") << "    " << jsonQuote(kv.first) << ": " << *v;
		first = false;
	}
	o << (first ? "},\n" : "\n  },\n");

	o << "  \"lat_hist\": [";
	const auto h = st_.latHist();
	for (std::size_t i = 0; i < h.size(); i++)
		o << (i ? ", " : "") << h[i];
	o << "],\n";

	// the control file read as it was, every value a string
	o << "  \"raw\": {";
	first = true;
	for (const auto &kv : st_.entries()) {
		o << (first ? "\n" : ",\n") << "    " << jsonQuote(kv.first) << ": "
		  << jsonQuote(kv.second);
		first = false;
	}
	o << (first ? "}\n" : "\n  }\n");
	o << "}\n";
	return o.str();
}

std::string Report::statusText(const Status &st)
{
	std::ostringstream o;
	std::size_t width = 0;

	for (const auto &kv : st.entries())
		width = std::max(width, kv.first.size());
	for (const auto &kv : st.entries()) {
		o << kv.first << std::string(width + 2 - kv.first.size(), ' ');
		if (kv.first != "lat_hist") {
			o << (kv.second.empty() ? "-" : kv.second) << "\n";
			continue;
		}
		const auto h = st.latHist();
		const Histogram hist(h);
		o << hist.total() << " calls";
		if (hist.total() != 0)
			o << ", p50 " << usec(hist.percentile(0.5)) << ", p99 "
			  << usec(hist.percentile(0.99)) << ", p99.9 "
			  << usec(hist.percentile(0.999));
		o << "\n";
		for (std::size_t i = 0; i < h.size(); i++)
			if (h[i] != 0)
				o << std::string(width + 4, ' ') << bucketRange(i) << "  " << h[i]
				  << "\n";
	}
	return o.str();
}

} // namespace ocq_demo
