"""seqid-harness watchdog: runs a database server for the lifetime of its parent.

Usage: python3 -c <this file's text> TEMP_DIR COMMAND [ARGS...]

Starts COMMAND (with TEMP_DIR as its working directory, its output appended to
TEMP_DIR/console.log) and then blocks reading stdin. The parent (a process using
seqid-harness) holds the write end of that pipe open for as long as it lives and
never writes more than the line "ready". End of file therefore means the parent
has exited, however it exited (normally, panic, abort, SIGKILL): the watchdog
then sends SIGTERM to the server, SIGKILL a few seconds later if it is still
running, removes TEMP_DIR and exits.

If the server exits on its own, the watchdog writes its exit status to
TEMP_DIR/server-exit (the parent polls for that file while waiting for the
server to come up), and keeps TEMP_DIR until stdin is closed so that the parent
can read the logs. After "ready", an unexpected exit is also reported on stderr.
The server's pid is written to TEMP_DIR/server-pid (the parent compares it with
the pid the server on the port reports, to be sure it talks to its own server).
"""

import os
import shutil
import signal
import subprocess
import sys
import threading

STOP_GRACE_SECONDS = 5.0


def die_with_parent():
    """Linux: make the kernel SIGKILL the server should the watchdog itself die."""
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except Exception:
        pass


def tail(path, limit=3000):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return ""
    return data[-limit:].decode("utf-8", "replace")


def write_exit(temp_dir, text):
    tmp = os.path.join(temp_dir, "server-exit.tmp")
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, os.path.join(temp_dir, "server-exit"))


def main():
    temp_dir = sys.argv[1]
    command = sys.argv[2:]
    # Ctrl-C is delivered to the whole foreground process group; the parent's
    # exit (stdin EOF) is what stops the server.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    stop = threading.Event()
    ready = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())

    def read_stdin():
        try:
            for line in sys.stdin.buffer:
                if line.strip() == b"ready":
                    ready.set()
        except Exception:
            pass
        stop.set()

    console = open(os.path.join(temp_dir, "console.log"), "ab")
    kwargs = {}
    if sys.platform.startswith("linux"):
        kwargs["preexec_fn"] = die_with_parent
    try:
        server = subprocess.Popen(
            command,
            cwd=temp_dir,
            stdin=subprocess.DEVNULL,
            stdout=console,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            **kwargs,
        )
    except OSError as e:
        write_exit(temp_dir, f"could not start {command[0]}: {e}")
        server = None
    else:
        with open(os.path.join(temp_dir, "server-pid"), "w") as f:
            f.write(str(server.pid))

    threading.Thread(target=read_stdin, daemon=True).start()

    reported = server is None
    while not stop.wait(0.1):
        if not reported and server.poll() is not None:
            reported = True
            write_exit(temp_dir, f"exit status {server.returncode}")
            if ready.is_set():
                sys.stderr.write(
                    f"seqid-harness: the test database server (pid {server.pid}) "
                    f"exited unexpectedly with status {server.returncode}; "
                    f"end of its output:\n{tail(os.path.join(temp_dir, 'console.log'))}\n"
                )
                sys.stderr.flush()

    if server is not None and server.poll() is None:
        try:
            server.terminate()
            server.wait(STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        except OSError:
            pass
    shutil.rmtree(temp_dir, ignore_errors=True)


main()
