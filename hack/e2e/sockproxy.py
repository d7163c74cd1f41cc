"""A unix-socket proxy to a Dagger engine for hack/e2e/hosts.sh: an engine that dies.

usage: python3 sockproxy.py LISTEN TARGET

Listens on the unix socket LISTEN and forwards each connection to the unix socket TARGET
(the engine's). Killing it drops every connection at once, as an engine that dies would,
while the engine itself (which other checks share) runs on.
"""

import os
import socket
import sys
import threading


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def main():
    listen, target = sys.argv[1], sys.argv[2]
    if os.path.exists(listen):
        os.unlink(listen)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(listen)
    server.listen(64)
    while True:
        conn, _ = server.accept()
        up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            up.connect(target)
        except OSError:
            conn.close()
            continue
        for a, b in ((conn, up), (up, conn)):
            threading.Thread(target=pump, args=(a, b), daemon=True).start()


if __name__ == "__main__":
    main()
