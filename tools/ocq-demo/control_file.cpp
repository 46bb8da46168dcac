// SPDX-License-Identifier: GPL-2.0
//
// control_file.cpp - the ocq_demo debugfs control file.

#include "control_file.h"

#include "options.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <unistd.h>

namespace ocq_demo {

namespace {

// A control file read is a few hundred bytes.
constexpr std::size_t kMaxRead = 1 << 20;

// Closes a file descriptor on scope exit.
class Fd {
public:
	explicit Fd(int fd) : fd_(fd) {}
	Fd(const Fd &) = delete;
	Fd &operator=(const Fd &) = delete;
	~Fd()
	{
		if (fd_ >= 0)
			::close(fd_);
	}
	int get() const { return fd_; }

private:
	int fd_;
};

std::string trim(const std::string &s)
{
	const auto b = s.find_first_not_of(" \t\r");
	if (b == std::string::npos)
		return "";
	const auto e = s.find_last_not_of(" \t\r");
	return s.substr(b, e - b + 1);
}

} // namespace

Status Status::parse(const std::string &text)
{
	Status st;
	std::istringstream in(text);
	std::string line;

	while (std::getline(in, line)) {
		const auto eq = line.find('=');
		if (eq == std::string::npos)
			continue;
		const std::string key = trim(line.substr(0, eq));
		if (key.empty() || key.find_first_of(" \t") != std::string::npos)
			continue;
		const std::string value = trim(line.substr(eq + 1));
		if (st.values_.count(key) == 0)
			st.ordered_.emplace_back(key, value);
		else
			for (auto &kv : st.ordered_)
				if (kv.first == key)
					kv.second = value;
		st.values_[key] = value;
	}
	st.state_ = st.str("state");
	return st;
}

std::string Status::str(const std::string &key) const
{
	const auto it = values_.find(key);
	return it == values_.end() ? std::string() : it->second;
}

std::optional<std::uint64_t> Status::num(const std::string &key) const
{
	const auto it = values_.find(key);
	if (it == values_.end())
		return std::nullopt;
	return parseUint(it->second, 0, UINT64_MAX);
}

std::vector<std::uint64_t> Status::latHist() const
{
	std::vector<std::uint64_t> h;
	const auto it = values_.find("lat_hist");
	if (it == values_.end() || it->second.empty())
		return h;
	std::istringstream in(it->second);
	std::string item;
	while (std::getline(in, item, ',')) {
		const auto v = parseUint(trim(item), 0, UINT64_MAX);
		if (!v)
			return {};
		h.push_back(*v);
	}
	return h;
}

bool Status::finished() const
{
	return state_ == "done" || state_ == "stopped" || state_ == "aborted";
}

bool ControlFile::read(std::string &out)
{
	op_ = "open";
	const Fd fd(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
	if (fd.get() < 0) {
		errno_ = errno;
		return false;
	}
	op_ = "read";
	out.clear();
	char buf[4096];
	for (;;) {
		const ssize_t n = ::read(fd.get(), buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			errno_ = errno;
			return false;
		}
		if (n == 0)
			break;
		out.append(buf, static_cast<std::size_t>(n));
		if (out.size() > kMaxRead) { // not a control file (/dev/zero?)
			errno_ = EFBIG;
			return false;
		}
	}
	errno_ = 0;
	return true;
}

bool ControlFile::write(const std::string &command)
{
	// O_APPEND changes nothing for the debugfs file (its handler ignores the file
	// position) and lets a regular file stand in for it in tests without losing
	// its contents.
	op_ = "open";
	const Fd fd(::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
	if (fd.get() < 0) {
		errno_ = errno;
		return false;
	}
	op_ = "write";
	ssize_t n;
	do {
		n = ::write(fd.get(), command.data(), command.size());
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		errno_ = errno;
		return false;
	}
	if (static_cast<std::size_t>(n) != command.size()) {
		errno_ = EIO;
		return false;
	}
	errno_ = 0;
	return true;
}

std::string ControlFile::lastError() const
{
	std::string msg = op_ + " " + path_ + ": " + std::strerror(errno_);
	if (unavailable())
		msg += " (is the ocq_demo module loaded and debugfs mounted at "
		       "/sys/kernel/debug? the control file is for root only)";
	return msg;
}

bool ControlFile::unavailable() const
{
	if (op_ == "write") // the module refuses writers without CAP_SYS_ADMIN
		return errno_ == EPERM || errno_ == EACCES;
	return op_ == "open" && (errno_ == ENOENT || errno_ == EACCES || errno_ == EPERM ||
				 errno_ == ENOTDIR || errno_ == ENODEV || errno_ == ENXIO);
}

} // namespace ocq_demo
