# SU-3: the broker's configuration row is fatal when refused.  cordon-broker
# is driven directly, as cordond starts it (fd 3 socketpair, the frames of
# common/ipc.h): a MSG_BROKER_CONFIG that does not fit its declared shape
# ends the broker (cordond then restarts it and configures it again), a
# broker that fits stays up.  Touches only the processes it starts.
import os
import socket
import subprocess

from audit_util import (MSG_STATUS, MSG_STATUS_OK, Channel, wait_until)
from conftest import BUILD, child_env

MSG_BROKER_CONFIG = 20  # common/msg.h


def start_broker(tmp_path):
    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    argv = [os.path.join(BUILD, "cordon-broker")]
    if os.getuid() == 0:
        argv += ["--user", "nobody"]
    err = open(tmp_path / "broker.stderr", "ab")
    fd3 = theirs.fileno()

    def to_fd3():
        os.dup2(fd3, 3)
        os.set_inheritable(3, True)

    proc = subprocess.Popen(argv, preexec_fn=to_fd3,
                            stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=err,
                            env=child_env(), close_fds=False)
    theirs.close()
    err.close()
    ch = Channel(mine)
    assert ch.ask(MSG_STATUS, {})[0] == MSG_STATUS_OK
    return proc, ch


def send_config(ch, payload):
    lsn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsn.bind(("127.0.0.1", 0))
    lsn.listen(8)
    if payload is not None and "port" in payload:
        payload["port"] = lsn.getsockname()[1]
    ch.send_fd(MSG_BROKER_CONFIG, payload, lsn.fileno())
    lsn.close()


def good_config():
    return {"token": "a" * 64, "port": 1, "listen": "127.0.0.1"}


def stop(proc, ch):
    if proc.poll() is None:
        proc.kill()
    proc.wait(10)
    ch.sock.close()


def test_su3_broker_config_refused_is_fatal(tmp_path):
    for bad in ({"token": "a" * 64, "port": 1, "listen": "127.0.0.1",
                 "extra": 1},
                {"token": "short", "port": 1, "listen": "127.0.0.1"},
                {"port": 1, "listen": "127.0.0.1"}):
        proc, ch = start_broker(tmp_path)
        try:
            send_config(ch, bad)
            wait_until(lambda: proc.poll() is not None)  # not left up
            assert proc.returncode == 1
        finally:
            stop(proc, ch)
    err = (tmp_path / "broker.stderr").read_text(errors="replace")
    assert "cannot run without it" in err
    assert "short" not in err  # refused, never echoed


def test_su3_broker_config_fits_stays_up(tmp_path):
    proc, ch = start_broker(tmp_path)
    try:
        send_config(ch, good_config())
        # A second configuration is refused and changes nothing.
        send_config(ch, {"port": 1, "listen": "x"})
        assert ch.ask(MSG_STATUS, {})[0] == MSG_STATUS_OK
        assert proc.poll() is None
    finally:
        stop(proc, ch)
