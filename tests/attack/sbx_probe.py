# sbx_probe: a hostile agent for SBX-3, SBX-4 and SP-7, run by
# /usr/bin/python3 as the agent binary (tests/attack/test_sbx4.py).  Its
# one argument is "MODE ARG...": it makes the attempt and prints
# "MODE BLOCKED ENAME", "MODE ESCAPED" or "MODE OK ..." on one line.
# Touches only what its arguments name.
import ctypes
import errno
import os
import socket
import stat
import subprocess
import sys
import time

LIBC = ctypes.CDLL(None, use_errno=True)
SYS_FCHMODAT2 = 452
SYS_RENAMEAT2 = 316
SYS_PIDFD_OPEN = 434
SYS_PIDFD_GETFD = 438
RENAME_EXCHANGE = 2
IPC_CREAT = 0o1000


def say(mode, what, *rest):
    print(" ".join([mode, what] + [str(r) for r in rest]), flush=True)


def blocked(mode, e):
    say(mode, "BLOCKED", errno.errorcode.get(e, "E?"))


def sys_call(*args):
    LIBC.syscall.restype = ctypes.c_long
    r = LIBC.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a
                       for a in args])
    return r, ctypes.get_errno()


def setid_left(path):
    try:
        return bool(os.lstat(path).st_mode & (stat.S_ISUID | stat.S_ISGID))
    except OSError:
        return False


def attempt(mode, args):
    """One call that must fail; ESCAPED when it did its work."""
    p = args[0] if args else ""
    m = int(args[1], 8) if len(args) > 1 else 0
    if mode == "chmod":
        os.chmod(p, m)
    elif mode == "fchmod":
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fchmod(fd, m)
        finally:
            os.close(fd)
    elif mode == "fchmodat":
        os.chmod(p, m, dir_fd=None, follow_symlinks=True)
    elif mode == "fchmodat2":
        r, e = sys_call(SYS_FCHMODAT2, -100, p.encode(), m, 0)
        if r == -1:
            raise OSError(e, os.strerror(e))
    elif mode == "create":  # open(O_CREAT) with the mode
        os.close(os.open(p, os.O_WRONLY | os.O_CREAT, m))
    elif mode == "mkdir":
        os.mkdir(p, m)
    elif mode == "mknod":
        os.mknod(p, stat.S_IFREG | m)
    elif mode == "install":  # install(1) -m MODE /usr/bin/id PATH
        r = subprocess.run(["/usr/bin/install", "-m", args[1],
                            "/usr/bin/id", p], capture_output=True)
        if r.returncode != 0 or not setid_left(p):
            raise OSError(errno.EPERM, "install")
    elif mode == "utime":
        os.utime(p, (0, 0))
    elif mode == "setxattr":
        os.setxattr(p, "user.cordon", b"x")
    elif mode == "chown":
        st = os.lstat(p)
        os.chown(p, st.st_uid, st.st_gid)
    elif mode == "write":
        with open(p, "a") as f:
            f.write("x\n")
    else:
        return False
    # The mode calls may succeed on a path without the set-id bits.
    if mode in ("chmod", "fchmod", "fchmodat", "fchmodat2", "create",
                "mkdir", "mknod") and m & 0o6000 and not setid_left(p):
        raise OSError(errno.EPERM, "bits dropped")
    return True


def init_reach(mode):
    """Reach into pid 1 of the run, cordon-init: take a descriptor it
    holds (its status socket to the spawner) and write a forged wait
    status there, read its memory, see where its descriptors lead.  The agent
    then exits 3, which the run must report."""
    pfd, e = sys_call(SYS_PIDFD_OPEN, 1, 0)
    if pfd < 0:
        blocked(mode, e)
        return
    got, last = [], errno.EBADF
    for fd in range(64):
        r, e = sys_call(SYS_PIDFD_GETFD, pfd, fd, 0)
        if r >= 0:
            got.append(r)
        elif e != errno.EBADF:
            last = e
    for g in got:
        try:
            os.write(g, (0).to_bytes(4, "little"))  # "exited 0"
        except OSError:
            pass
    seen = []
    for what, f in (("mem", lambda: os.pread(
            os.open("/proc/1/mem", os.O_RDONLY), 8, 4096)),
            ("fd", lambda: [os.readlink(f"/proc/1/fd/{n}")
                            for n in os.listdir("/proc/1/fd")])):
        try:
            f()
            seen.append(what)
        except OSError:
            pass
    if got or seen:
        say(mode, "ESCAPED", len(got), *seen)
    else:
        blocked(mode, last)
    sys.exit(3)


def unix_peer(mode, args):
    """unix TYPE HOW PATH: reach a host unix socket by path."""
    types = {"stream": socket.SOCK_STREAM, "dgram": socket.SOCK_DGRAM,
             "raw": socket.SOCK_RAW, "seqpacket": socket.SOCK_SEQPACKET,
             "dgram-cloexec": socket.SOCK_DGRAM | socket.SOCK_CLOEXEC}
    t, how, path = args
    if t == "pair":  # a datagram pair, then sendto a path
        a, _ = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        a.sendto(b"ESCAPE", path)
        return
    s = socket.socket(socket.AF_UNIX, types[t])
    if how == "connect":
        s.connect(path)
        s.send(b"ESCAPE")
    elif how == "sendto":
        s.sendto(b"ESCAPE", path)
    elif how == "sendmsg":
        s.sendmsg([b"ESCAPE"], [], 0, path)


def main():
    words = sys.argv[1].split(" ")
    mode, args = words[0], words[1:]
    try:
        if mode == "unix":
            unix_peer(mode, args)
            say(mode, "ESCAPED")
        elif mode == "init-reach":
            init_reach(mode)
        elif mode == "sysv":  # sysv HOSTKEY OWNKEY: a host segment? make
            hk, ok = int(args[0]), int(args[1])
            seen = LIBC.shmget(hk, 0, 0) != -1
            made = [LIBC.shmget(ok, 4096, IPC_CREAT | 0o644) != -1,
                    LIBC.msgget(ok, IPC_CREAT | 0o644) != -1,
                    LIBC.semget(ok, 1, IPC_CREAT | 0o644) != -1]
            say(mode, "SEEN" if seen else "OK", *[int(m) for m in made])
        elif mode == "proc-argv":  # another run's prompt (given reversed)?
            mark = args[0][::-1].encode()  # never in its own argv
            for pid in os.listdir("/proc"):
                if not pid.isdigit():
                    continue
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        if mark in f.read():
                            say(mode, "ESCAPED", pid)
                            return
                except OSError:
                    pass
            say(mode, "BLOCKED", "ENOENT")
        elif mode == "sleep":  # holds its prompt in argv for a while
            time.sleep(float(args[0]))
            say(mode, "OK")
        elif mode == "mem":  # touch MiB of memory
            b = bytearray(int(args[0]) << 20)
            for i in range(0, len(b), 4096):
                b[i] = 1
            say(mode, "ESCAPED")
        elif mode == "fill":  # fill DIR with 8 MiB files, up to MiB
            chunk = b"\0" * (8 << 20)
            for i in range(int(args[1]) // 8):
                with open(os.path.join(args[0], f"fill.{i}"), "wb") as f:
                    f.write(chunk)
            say(mode, "ESCAPED")
        elif mode == "tcp":  # tcp HOST PORT: a connection (network: allow)
            socket.create_connection((args[0], int(args[1])), 5).close()
            say(mode, "OK")
        elif mode == "resolve":  # resolve NAME: its IPv4 address (DNS)
            ai = socket.getaddrinfo(args[0], 443, socket.AF_INET,
                                    socket.SOCK_STREAM)
            say(mode, "OK", ai[0][4][0])
        elif mode == "tmpsize":
            st = os.statvfs("/tmp")
            say(mode, "OK", (st.f_blocks * st.f_frsize) >> 20)
        elif mode == "swap":  # swap A and B for SEC seconds
            a, b, end = args[0].encode(), args[1].encode(), \
                time.monotonic() + float(args[2])
            n = 0
            while time.monotonic() < end:
                r, e = sys_call(SYS_RENAMEAT2, -100, a, -100, b,
                                RENAME_EXCHANGE)
                n += r == 0
            say(mode, "OK", n)
        elif mode == "cat":  # what PATH...s hold, or -
            out = []
            for p in args:
                try:
                    with open(p) as f:
                        out.append(f.read().strip() or "-")
                except OSError as e:
                    out.append(errno.errorcode.get(e.errno, "E?"))
            say(mode, "OK", *out)
        elif attempt(mode, args):
            say(mode, "ESCAPED")
        else:
            say(mode, "UNKNOWN")
    except MemoryError:
        blocked(mode, errno.ENOMEM)
    except OSError as e:
        blocked(mode, e.errno)


main()
