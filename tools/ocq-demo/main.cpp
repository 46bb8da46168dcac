// SPDX-License-Identifier: GPL-2.0
//
// ocq-demo - front end of the ocq_demo kernel module (see ocq-demo --help).

#include "control_file.h"
#include "options.h"
#include "report.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <exception>
#include <fstream>
#include <iostream>
#include <optional>
#include <unistd.h>

namespace ocq_demo {

namespace {

volatile std::sig_atomic_t gInterrupts = 0;

extern "C" void onSignal(int /*sig*/)
{
	gInterrupts = gInterrupts + 1;
}

void installSignalHandlers()
{
	struct sigaction sa = {};
	sa.sa_handler = onSignal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; // no SA_RESTART: a signal ends the sleep at once
	sigaction(SIGINT, &sa, nullptr);
	sigaction(SIGTERM, &sa, nullptr);
}

void sleepMs(unsigned ms)
{
	struct timespec ts = {};
	ts.tv_sec = static_cast<time_t>(ms / 1000);
	ts.tv_nsec = static_cast<long>(ms % 1000) * 1000000L;
	nanosleep(&ts, nullptr); // an interruption is fine: the caller polls
}

void say(const std::string &msg)
{
	std::cerr << "ocq-demo: " << msg << "\n";
}

// The control file could not be used: exit status 3 when it is not there for us.
int controlFailure(const ControlFile &cf)
{
	say(cf.lastError());
	return cf.unavailable() ? kExitNoControl : kExitFailed;
}

// Why the module refused a write: its error= reason, with the errno unless that is
// the EINVAL of a refused command.
std::string refusal(ControlFile &cf)
{
	const int err = cf.lastErrno();
	std::string written = cf.lastError();
	std::string text;
	const std::string why = cf.read(text) ? Status::parse(text).str("error") : "";

	if (why.empty())
		return written;
	return err == EINVAL ? why : written + " (" + why + ")";
}

class ProgressLine {
public:
	ProgressLine() : tty_(isatty(STDERR_FILENO) == 1) {}

	void show(const Status &st, double rate)
	{
		char buf[160];
		std::snprintf(buf, sizeof(buf),
			      "%s %s  %.1f s  %llu calls  %.0f calls/s  %llu errors",
			      st.state().empty() ? "?" : st.state().c_str(),
			      st.str("path").empty() ? "?" : st.str("path").c_str(),
			      static_cast<double>(st.numOr0("elapsed_ms")) / 1000.0,
			      static_cast<unsigned long long>(st.numOr0("calls")), rate,
			      static_cast<unsigned long long>(st.numOr0("errors")));
		if (tty_) {
			std::cerr << "\r" << buf << "\033[K" << std::flush;
			open_ = true;
		} else {
			std::cerr << buf << "\n" << std::flush;
		}
	}

	void end()
	{
		if (open_)
			std::cerr << "\n" << std::flush;
		open_ = false;
	}

private:
	bool tty_;
	bool open_ = false;
};

// How long a run may take before it is stopped: its duration (the module's default
// when not given) plus as much again, at least 30 s more. None for a run that only
// ends after a number of calls.
std::optional<std::chrono::milliseconds> overrunLimit(const Options &opts)
{
	const std::uint64_t ms = opts.durationMs.value_or(20000);
	if (ms == 0)
		return std::nullopt;
	return std::chrono::milliseconds(ms + std::max<std::uint64_t>(30000, ms));
}

class Runner {
public:
	explicit Runner(const Options &opts) : opts_(opts), cf_(opts.control) {}

	int run();

private:
	// Writes "stop"; says why.
	void requestStop(const std::string &why);
	int finish(const Status &last);

	const Options &opts_;
	ControlFile cf_;
	ProgressLine progress_;
	bool stopSent_ = false;
};

void Runner::requestStop(const std::string &why)
{
	progress_.end();
	say(why + ": writing 'stop'");
	if (!cf_.write("stop"))
		say("stop refused: " + cf_.lastError());
	stopSent_ = true;
}

int Runner::run()
{
	using Clock = std::chrono::steady_clock;
	const std::string command = opts_.startCommand();

	if (opts_.dryRun) {
		std::cout << command << "\n";
		return kExitOk;
	}
	std::string text;
	if (!cf_.read(text))
		return controlFailure(cf_);
	installSignalHandlers();
	if (!cf_.write(command)) {
		if (cf_.unavailable())
			return controlFailure(cf_);
		say("the module refused '" + command + "': " + refusal(cf_));
		return kExitFailed;
	}
	std::cerr << "ocq-demo: " << command << "\n";

	// Give up on a run that overruns its duration by far, or in which no call ends
	// for a minute.
	const auto t0 = Clock::now();
	const std::optional<std::chrono::milliseconds> limit = overrunLimit(opts_);
	const std::chrono::seconds stall(60);
	const unsigned pollMs = std::min(opts_.intervalMs, 100U);
	auto lastShow = t0;
	auto lastProgress = t0;
	auto stopTime = Clock::time_point::max();
	std::uint64_t lastCalls = 0, shownCalls = 0, shownMs = 0;
	double rate = 0;
	int seenInterrupts = 0;
	Status st;

	for (;;) {
		if (!cf_.read(text)) {
			progress_.end();
			say("lost the control file during the run: " + cf_.lastError());
			return kExitFailed;
		}
		st = Status::parse(text);
		if (st.finished())
			break;
		const auto now = Clock::now();
		const std::uint64_t calls = st.numOr0("calls");
		if (calls != lastCalls) {
			lastCalls = calls;
			lastProgress = now;
		}
		if (now - lastShow >= std::chrono::milliseconds(opts_.intervalMs)) {
			// the rate since the last line, on the module's clock
			const std::uint64_t ms = st.numOr0("elapsed_ms");
			if (ms > shownMs && calls >= shownCalls)
				rate = static_cast<double>(calls - shownCalls) * 1000.0 /
				       static_cast<double>(ms - shownMs);
			progress_.show(st, rate);
			shownCalls = calls;
			shownMs = ms;
			lastShow = now;
		}
		const int interrupts = gInterrupts;
		if (interrupts > seenInterrupts) {
			seenInterrupts = interrupts;
			if (stopSent_) {
				progress_.end();
				say("interrupted again: not waiting for the module any more");
				return kExitFailed;
			}
			requestStop("interrupted");
			stopTime = now;
		} else if (!stopSent_ && limit && now - t0 > *limit) {
			requestStop("the run overran its duration");
			stopTime = now;
		} else if (!stopSent_ && now - lastProgress > stall) {
			requestStop("no call ended for " + std::to_string(stall.count()) + " s");
			stopTime = now;
		} else if (stopSent_ && now - stopTime > std::chrono::seconds(15)) {
			progress_.end();
			say("the run did not end within 15 s of 'stop' (state " + st.state() + ")");
			return finish(st);
		}
		sleepMs(pollMs);
	}
	return finish(st);
}

int Runner::finish(const Status &last)
{
	const Report report(last, opts_.startCommand());

	progress_.end();
	// --json -: stdout is for the JSON alone, the table goes to stderr
	const bool jsonOut = opts_.jsonFile == "-";
	(jsonOut ? std::cerr : std::cout) << report.table() << std::flush;
	int rc = report.passed() ? kExitOk : kExitFailed;
	if (jsonOut) {
		std::cout << report.json() << std::flush;
		if (!std::cout) {
			say("cannot write the JSON to stdout");
			rc = kExitFailed;
		}
	} else if (!opts_.jsonFile.empty()) {
		std::ofstream out(opts_.jsonFile, std::ios::trunc);
		out << report.json();
		out.close();
		if (!out) {
			say("cannot write " + opts_.jsonFile);
			rc = kExitFailed;
		}
	}
	return rc;
}

int status(const Options &opts)
{
	ControlFile cf(opts.control);
	std::string text;

	if (!cf.read(text))
		return controlFailure(cf);
	const Status st = Status::parse(text);
	std::cout << (opts.statusJson ? Report::statusJson(st) : Report::statusText(st))
		  << std::flush;
	return std::cout ? kExitOk : kExitFailed;
}

int stop(const Options &opts)
{
	ControlFile cf(opts.control);

	if (cf.write("stop"))
		return kExitOk;
	if (cf.unavailable())
		return controlFailure(cf);
	say("the module refused 'stop': " + refusal(cf));
	return kExitFailed;
}

int realMain(int argc, char **argv)
{
	Options opts;

	if (parseCommandLine(std::vector<std::string>(argv + 1, argv + argc), opts, std::cerr) !=
	    kExitOk)
		return kExitUsage;
	switch (opts.command()) {
	case Command::kHelp:
		std::cout << usageText();
		return kExitOk;
	case Command::kVersion:
		std::cout << "ocq-demo " << kVersion << "\n";
		return kExitOk;
	case Command::kRun:
		return Runner(opts).run();
	case Command::kStop:
		return stop(opts);
	case Command::kStatus:
		return status(opts);
	case Command::kNone:
		break;
	}
	return kExitUsage;
}

} // namespace

} // namespace ocq_demo

int main(int argc, char **argv)
{
	try {
		return ocq_demo::realMain(argc, argv);
	} catch (const std::exception &e) {
		std::cerr << "ocq-demo: internal error: " << e.what() << "\n";
	} catch (...) {
		std::cerr << "ocq-demo: internal error\n";
	}
	return ocq_demo::kExitFailed;
}
