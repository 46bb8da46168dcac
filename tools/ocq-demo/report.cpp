// SPDX-License-Identifier: GPL-2.0
//
// report.cpp - the results of a run.

#include "report.h"

#include "histogram.h"
#include "options.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>

namespace ocq_demo {

namespace {

// Keys stay in the order they are set, as the JSON always had them.
using Json = nlohmann::ordered_json;

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

// A derived value (never negative) rounded to `decimals` places, or null when there
// is none; with no decimals an integer.
Json number(const std::optional<double> &v, int decimals)
{
	if (!v || !std::isfinite(*v) || *v < 0)
		return nullptr;
	if (decimals == 0 && *v < 0x1p63)
		return static_cast<std::uint64_t>(std::llround(*v));
	const double scale = std::pow(10.0, decimals);
	return std::round(*v * scale) / scale;
}

// The parts of a control file read that the run and the status JSON share: every
// numeric value, the latency histogram and every value as the string it was.
void addReadout(Json &j, const Status &st)
{
	Json counters = Json::object();
	for (const auto &kv : st.entries())
		if (const auto v = st.num(kv.first))
			counters[kv.first] = *v;
	j["counters"] = std::move(counters);
	j["lat_hist"] = st.latHist();
	Json raw = Json::object();
	for (const auto &kv : st.entries())
		raw[kv.first] = kv.second;
	j["raw"] = std::move(raw);
}

Json strOrNull(const Status &st, const char *key)
{
	return st.has(key) ? Json(st.str(key)) : Json(nullptr);
}

Json numOrNull(const Status &st, const char *key)
{
	const auto v = st.num(key);
	return v ? Json(*v) : Json(nullptr);
}

// Two-space indented; bytes that are not UTF-8 (the module's strings are not
// checked) become U+FFFD instead of an exception.
std::string dump(const Json &j)
{
	return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
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

	const bool open = st_.numOr0("rate") != 0;

	o << "ocq-demo results: path " << (st_.has("path") ? st_.str("path") : "?") << ", "
	  << count("conns") << " connections, "
	  << (open ? "open loop at " + count("rate") + " messages/s" :
		     count("credits") + " credits")
	  << ", state " << (st_.state().empty() ? "?" : st_.state()) << ", "
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
	if (open) {
		row("dropped", count("dropped") + " (due, send queue full: not sent)");
		row("backlog", count("backlog") + " (due, not yet posted at the stop)");
	}
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
	Json j;

	j["ocq_demo_version"] = kVersion;
	j["command"] = command_;
	j["state"] = strOrNull(st_, "state");
	j["path"] = strOrNull(st_, "path");
	j["passed"] = passed();
	j["verdict"] = passed() ? "pass" : verdict_;
	j["error"] = strOrNull(st_, "error");
	for (const char *key : {"conns", "credits", "rate", "elapsed_ms", "calls", "bytes"})
		j[key] = numOrNull(st_, key);
	j["calls_per_sec"] = number(callsPerSec(), 1);
	j["mb_per_sec"] = number(mbPerSec(), 3);
	j["latency_p50_ns"] = number(latencyNs(0.5), 0);
	j["latency_p99_ns"] = number(latencyNs(0.99), 0);
	j["latency_p999_ns"] = number(latencyNs(0.999), 0);
	j["completions"] = numOrNull(st_, "completions");
	j["events_per_1k_completions"] = number(per1kCompletions("events"), 2);
	j["runs_per_1k_completions"] = number(per1kCompletions("runs"), 2);
	j["empty_runs"] = numOrNull(st_, "empty_runs");
	j["empty_runs_pct"] = number(emptyRunsPct(), 3);
	for (const char *key : {"repolls", "credit_stalls", "reorders", "lost", "duplicated",
				"dropped", "backlog", "errors"})
		j[key] = numOrNull(st_, key);
	addReadout(j, st_);
	return dump(j);
}

std::string Report::statusJson(const Status &st)
{
	const Histogram hist(st.latHist());
	Json j;

	j["ocq_demo_version"] = kVersion;
	j["state"] = strOrNull(st, "state");
	j["path"] = strOrNull(st, "path");
	j["error"] = strOrNull(st, "error");
	j["finished"] = st.finished();
	j["latency_p50_ns"] = number(hist.percentile(0.5), 0);
	j["latency_p99_ns"] = number(hist.percentile(0.99), 0);
	j["latency_p999_ns"] = number(hist.percentile(0.999), 0);
	addReadout(j, st);
	return dump(j);
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
