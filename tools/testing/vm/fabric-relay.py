#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fabric-relay.py - the host's end of a two-node run's control channel.

Usage: fabric-relay.py --dir RUNDIR --log FILE

Each guest of a two-node boot (fabric-boot.sh) has a second serial port (ttyS1) whose
QEMU chardev is a unix socket server in RUNDIR (ctl-a.sock, ctl-b.sock), and an HMP
monitor there (mon-a.sock, mon-b.sock).  The relay connects to all four and carries
lines (the protocol is the guests', see fabric-guest):

  from node A "H <id> <command...>"   a host command, answered by the relay itself
                                      with "O <id> <line>"... and "E <id> <status>"
  any other line from node A          to node B, as it is
  any line from node B                to node A, as it is

Host commands: "ping"; "link on|off" (set_link on both nodes' wire netdev: the cable
taken out or put back); "reset b" (system_reset of node B, a power cycle);
"sysrq NODE KEY" (Alt-SysRq-KEY on NODE's keyboard).  The wire itself never carries
the channel: a fault on it cannot cut the way to recover from it.

SIGUSR1: Alt-SysRq-W on both nodes (the blocked tasks' stacks into both consoles), for
the runner when a test hangs.  The relay ends when node A's channel closes (its QEMU
exited) or on SIGTERM.
"""
import argparse
import os
import selectors
import signal
import socket
import sys
import time


def log(f, msg):
    f.write("%.3f %s\n" % (time.monotonic(), msg))
    f.flush()


def connect(path, deadline):
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(path)
            return s
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


class Monitor:
    """An HMP monitor: one command at a time, its output up to the next prompt."""

    def __init__(self, path, deadline):
        self.sock = connect(path, deadline)
        self.sock.settimeout(20)
        self.read_prompt()

    def read_prompt(self):
        buf = b""
        while not buf.endswith(b"(qemu) "):
            chunk = self.sock.recv(4096)
            if not chunk:
                raise OSError("monitor closed")
            buf += chunk
        return buf.decode(errors="replace")

    def cmd(self, line):
        self.sock.sendall(line.encode() + b"\n")
        out = self.read_prompt()
        # the echo of the command, then its output, then the prompt
        lines = [x.strip() for x in out.replace("\r", "").split("\n")]
        return [x for x in lines[1:] if x and not x.startswith("(qemu)")]


class Relay:
    def __init__(self, rundir, logf):
        deadline = time.monotonic() + 60
        self.logf = logf
        self.ctl = {n: connect(os.path.join(rundir, "ctl-%s.sock" % n), deadline)
                    for n in "ab"}
        self.mon = {n: Monitor(os.path.join(rundir, "mon-%s.sock" % n), deadline)
                    for n in "ab"}
        self.buf = {n: b"" for n in "ab"}
        self.sysrq_all = False

    def send(self, node, line):
        self.ctl[node].sendall(line + b"\n")

    def sysrq(self, node, key):
        return self.mon[node].cmd("sendkey alt-sysrq-%s" % key)

    def host_cmd(self, words):
        """(status, output lines) of a host command."""
        if words == ["ping"]:
            return 0, ["pong"]
        if len(words) == 2 and words[0] == "link" and words[1] in ("on", "off"):
            out = []
            for n in "ab":
                out += self.mon[n].cmd("set_link wire %s" % words[1])
            return (1 if out else 0), out
        if words == ["reset", "b"]:
            return 0, self.mon["b"].cmd("system_reset")
        if len(words) == 3 and words[0] == "sysrq" and words[1] in "ab":
            return 0, self.sysrq(words[1], words[2])
        return 2, ["unknown host command: %s" % " ".join(words)]

    def from_a(self, line):
        parts = line.split(b" ")
        if parts[0] != b"H" or len(parts) < 3:
            self.send("b", line)
            return
        rid = parts[1]
        words = [w.decode(errors="replace") for w in parts[2:]]
        try:
            rc, out = self.host_cmd(words)
        except OSError as e:
            rc, out = 1, ["monitor: %s" % e]
        log(self.logf, "host %s -> %d %s" % (" ".join(words), rc, out))
        for o in out:
            self.send("a", b"O " + rid + b" " + o.encode())
        self.send("a", b"E " + rid + b" " + str(rc).encode())

    def run(self):
        sel = selectors.DefaultSelector()
        for n in "ab":
            sel.register(self.ctl[n], selectors.EVENT_READ, n)
        while True:
            if self.sysrq_all:
                self.sysrq_all = False
                for n in "ab":
                    log(self.logf, "sysrq-w on %s: %s" % (n, self.sysrq(n, "w")))
            for key, _ in sel.select(timeout=0.5):
                n = key.data
                data = key.fileobj.recv(65536)
                if not data:
                    log(self.logf, "node %s's channel closed" % n)
                    return 0
                self.buf[n] += data
                while b"\n" in self.buf[n]:
                    line, self.buf[n] = self.buf[n].split(b"\n", 1)
                    line = line.rstrip(b"\r")
                    log(self.logf, "%s> %s" % (n, line[:200].decode(errors="replace")))
                    if n == "a":
                        self.from_a(line)
                    else:
                        self.send("a", line)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    with open(args.log, "a") as logf:
        try:
            relay = Relay(args.dir, logf)
        except OSError as e:
            log(logf, "cannot connect: %s" % e)
            return 1

        def on_usr1(signum, frame):
            relay.sysrq_all = True

        signal.signal(signal.SIGUSR1, on_usr1)
        signal.signal(signal.SIGTERM, lambda s, f: sys.exit(0))
        log(logf, "connected")
        try:
            return relay.run()
        except OSError as e:
            log(logf, "error: %s" % e)
            return 1


if __name__ == "__main__":
    sys.exit(main())
