#!/usr/bin/env python3
"""A TCP proxy for fault tests: a dropped connection between two real processes.

    tcp_proxy.py --to HOST:PORT --port-file FILE [--log FILE]

Listens on a free loopback port (written to FILE once it accepts) and forwards
every connection to HOST:PORT. On SIGUSR1 it resets every open connection on
both sides (SO_LINGER 0, so the peers see a reset, not a clean close) and
logs how many it dropped; new connections are forwarded as before, so a
client that reconnects gets through. SIGSTOP/SIGCONT on the proxy stand in
for a network partition (the connection stays up; nothing moves).
"""
import argparse
import asyncio
import os
import signal
import socket
import struct
import sys

CHUNK = 1 << 16


class Proxy:
    def __init__(self, target_host, target_port, log):
        self.target = (target_host, target_port)
        self.log = log
        self.open = set()  # the writers of every live connection, both sides
        self.connections = 0

    def say(self, text):
        print(text, file=self.log, flush=True)

    async def handle(self, client_reader, client_writer):
        try:
            server_reader, server_writer = await asyncio.open_connection(*self.target)
        except OSError as error:
            self.say(f"cannot reach {self.target[0]}:{self.target[1]}: {error}")
            reset(client_writer)
            return
        self.connections += 1
        pair = (client_writer, server_writer)
        self.open.add(pair)
        try:
            await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))
        finally:
            self.open.discard(pair)
            for writer in pair:
                reset(writer)

    def drop_all(self):
        dropped = len(self.open)
        for pair in list(self.open):
            for writer in pair:
                reset(writer)
        self.open.clear()
        self.say(f"dropped {dropped} connections")


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(CHUNK)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        reset(writer)


def reset(writer):
    """Closes with a TCP reset, as a crashed peer or a broken link would."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    writer.transport.abort()


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--to", required=True, help="HOST:PORT to forward to")
    parser.add_argument("--port-file", required=True, help="where the listening port is written")
    parser.add_argument("--log", help="log file (default stderr)")
    args = parser.parse_args()
    host, _, port = args.to.rpartition(":")
    log = open(args.log, "a") if args.log else sys.stderr
    proxy = Proxy(host or "127.0.0.1", int(port), log)
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", 0)
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, proxy.drop_all)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    listening = server.sockets[0].getsockname()[1]
    with open(args.port_file + ".tmp", "w") as out:
        out.write(f"{listening}\n")
    os.replace(args.port_file + ".tmp", args.port_file)
    proxy.say(f"forwarding 127.0.0.1:{listening} to {args.to}")
    async with server:
        await stop.wait()
    proxy.say(f"stopped after {proxy.connections} connections")


if __name__ == "__main__":
    asyncio.run(main())
