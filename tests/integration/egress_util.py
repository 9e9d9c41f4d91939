# The upstream of the egress tests (EG-1, EG-2, EG-4): a threaded HTTP
# server on 127.0.0.2, reached by `network: proxy` agents through
# egressd's test-only keys.  GET /big answers BIG bytes of "x", /drop
# sends a partial answer and resets, /half answers, ends its sending
# side and counts what it still hears until the agent's end (in the
# server's .heard), /flood sends until its peer is gone (then "flood"
# in .heard), /rst sends a partial answer and resets (SO_LINGER 0),
# anything else a short body.
import socket
import socketserver
import struct
import threading
import time

UP_ADDR = "127.0.0.2"
BIG = 3 * 1024 * 1024


class Upstream(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        data = b""
        while b"\r\n\r\n" not in data:
            c = self.request.recv(4096)
            if not c:
                return
            data += c
        path = data.split(b" ")[1]
        if path == b"/big":
            body = b"x" * BIG
        elif path == b"/drop":
            self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: "
                                 b"100000\r\n\r\npartial")
            time.sleep(0.2)
            self.request.shutdown(socket.SHUT_RDWR)
            return
        elif path == b"/flood":
            chunk = b"f" * 65536
            try:
                while True:
                    self.request.sendall(chunk)
            except OSError:
                self.server.heard.append("flood")
                return
        elif path == b"/rst":
            self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: "
                                 b"100000\r\n\r\n" + b"r" * 50000)
            time.sleep(0.3)
            self.request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                    struct.pack("ii", 1, 0))
            self.request.close()
            return
        elif path == b"/half":
            self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: "
                                 b"7\r\n\r\nhalf-ok")
            self.request.shutdown(socket.SHUT_WR)
            n = len(data) - data.index(b"\r\n\r\n") - 4
            while True:
                c = self.request.recv(65536)
                if not c:
                    break
                n += len(c)
            self.server.heard.append(n)
            return
        else:
            body = b"hello-upstream"
        self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: " +
                             str(len(body)).encode() + b"\r\n\r\n" + body)


def start_upstream():
    """The upstream, serving in a thread; .shutdown() and .server_close()
    when done."""
    srv = Upstream((UP_ADDR, 0), Handler)
    srv.heard = []
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv
