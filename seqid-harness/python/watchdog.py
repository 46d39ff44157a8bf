"""seqid-harness watchdog: runs a database server for the lifetime of its parent.

Usage: python3 -c <this file's text> TEMP_DIR COMMAND [ARGS...]

Starts COMMAND (with TEMP_DIR as its working directory, its output appended to
TEMP_DIR/console.log) and then blocks reading stdin. The parent (a process using
seqid-harness) holds the write end of that pipe open for as long as it lives and
writes only the requests below. End of file therefore means the parent
has exited, however it exited (normally, panic, abort, SIGKILL): the watchdog
then sends SIGTERM to the server, SIGKILL STOP_GRACE_SECONDS later if it is
still running, removes TEMP_DIR and exits. The server's TMPDIR is TEMP_DIR, so
that its own temporary files (SecantusDB's in-memory store makes a directory)
go with it, even when it is killed.

If the server exits on its own, the watchdog writes its exit status to
TEMP_DIR/server-exit (the parent polls for that file while waiting for the
server to come up), and keeps TEMP_DIR until stdin is closed so that the parent
can read the logs. After "ready", an unexpected exit is also reported on stderr.
The server's pid is written to TEMP_DIR/server-pid (the parent compares it with
the pid the server on the port reports, to be sure it talks to its own server).

Requests, one per line on stdin ("kill" and "start" are answered with one line
on stdout):
  ready  the server answers; from now on an unexpected exit is reported on
         stderr;
  kill   SIGKILL the server (its whole process group) at once, like a crash,
         and wait until it is gone; answers "killed";
  start  start COMMAND again (after "kill", or after the server exited), in the
         same TEMP_DIR, so a server that keeps its data there finds it again;
         answers "started PID" or "failed: REASON".
After "kill" and "start", an exit is no longer reported on stderr until the
next "ready"; TEMP_DIR/server-exit is removed before the server is started
again, and TEMP_DIR/server-pid names the new server.
"""

import os
import queue
import shutil
import signal
import subprocess
import sys
import threading

# SecantusDB takes about 4 s to stop: 2 s for its accept thread, up to 5 s for
# its connections to drain, then WiredTiger's close, which writes what a data
# directory kept across runs (seqid-server --data) still needs.
STOP_GRACE_SECONDS = 15.0


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


def reply(text):
    try:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()
    except OSError:
        pass


def remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


def main():
    temp_dir = sys.argv[1]
    command = sys.argv[2:]
    # Ctrl-C is delivered to the whole foreground process group; the parent's
    # exit (stdin EOF) is what stops the server.
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    requests = queue.Queue()

    def read_stdin():
        try:
            for line in sys.stdin.buffer:
                requests.put(line.strip())
        except Exception:
            pass
        requests.put(None)

    console = open(os.path.join(temp_dir, "console.log"), "ab")
    kwargs = {}
    if sys.platform.startswith("linux"):
        kwargs["preexec_fn"] = die_with_parent

    def start():
        """Starts the server; returns it (None on failure) and the answer."""
        remove(os.path.join(temp_dir, "server-exit"))
        try:
            server = subprocess.Popen(
                command,
                cwd=temp_dir,
                env=dict(os.environ, TMPDIR=temp_dir),
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                **kwargs,
            )
        except OSError as e:
            write_exit(temp_dir, f"could not start {command[0]}: {e}")
            return None, f"failed: could not start {command[0]}: {e}"
        tmp = os.path.join(temp_dir, "server-pid.tmp")
        with open(tmp, "w") as f:
            f.write(str(server.pid))
        os.replace(tmp, os.path.join(temp_dir, "server-pid"))
        return server, f"started {server.pid}"

    def kill(server):
        if server is None or server.poll() is not None:
            return
        try:
            # start_new_session made the server a process group leader.
            os.killpg(server.pid, signal.SIGKILL)
        except OSError:
            server.kill()
        server.wait()

    server, _ = start()
    threading.Thread(target=read_stdin, daemon=True).start()

    ready = False
    reported = server is None
    while not stop.is_set():
        try:
            request = requests.get(timeout=0.1)
        except queue.Empty:
            request = b""
        if request is None:
            break
        if request == b"ready":
            ready = True
        elif request == b"kill":
            ready = False
            kill(server)
            reported = True
            remove(os.path.join(temp_dir, "server-exit"))
            reply("killed")
        elif request == b"start":
            ready = False
            if server is not None and server.poll() is None:
                reply("failed: the server is still running")
            else:
                server, answer = start()
                reported = server is None
                reply(answer)
        if not reported and server.poll() is not None:
            reported = True
            write_exit(temp_dir, f"exit status {server.returncode}")
            if ready:
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
            kill(server)
        except OSError:
            pass
    shutil.rmtree(temp_dir, ignore_errors=True)


main()
