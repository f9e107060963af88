"""triada-explore's points run and cached: each in its own process and session folder
(OUT/runs/KEY16), its report kept under OUT/cache/KEY.json (written atomically: a killed
sweep leaves whole entries or none), a failure under OUT/cache/KEY.failed.json."""

from __future__ import annotations

import datetime
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import threading
import time
from typing import Any

from ._explore_spec import SESSION, Point, Spec
from ._files import write_atomically


class Cache:
    def __init__(self, out: pathlib.Path) -> None:
        self.out = out
        self.dir = out / "cache"
        self.log_lock = threading.Lock()

    def entry(self, key: str) -> dict[str, Any] | None:
        """The point's cached result: its report if it ran, else its last failure."""
        for name in (f"{key}.json", f"{key}.failed.json"):
            try:
                return json.loads((self.dir / name).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
        return None

    def done(self, key: str) -> bool:
        """The point ran and its entry reads back whole: a damaged entry (a truncated
        file, a crash or a full disk under another writer) is rerun, not cached forever."""
        try:
            entry = json.loads((self.dir / f"{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return isinstance(entry, dict) and entry.get("key") == key and entry.get("status") == "ok"


    def store(self, entry: dict[str, Any]) -> None:
        name = entry["key"] + (".json" if entry["status"] == "ok" else ".failed.json")
        write_atomically(self.dir / name, json.dumps(entry, indent=1, sort_keys=True) + "\n")
        if entry["status"] == "ok":
            (self.dir / f"{entry['key']}.failed.json").unlink(missing_ok=True)

    def log(self, line: str) -> None:
        """OUT/explore.log: one line per point started and ended (a run's history)."""
        stamp = datetime.datetime.now().isoformat(timespec="seconds")
        with self.log_lock, open(self.out / "explore.log", "a", encoding="utf-8") as f:
            f.write(f"{stamp} {line}\n")


class Slots:
    """The sweep's `jobs` processor slots: a point takes one per rank (at most all), an
    `alone` point all of them, so that nothing else runs beside it."""

    def __init__(self, total: int) -> None:
        self.total, self.free = total, total
        self.cond = threading.Condition()

    def need(self, point: Point) -> int:
        return self.total if point.alone else min(point.ranks or 1, self.total)

    def acquire(self, count: int) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.free >= count)
            self.free -= count

    def release(self, count: int) -> None:
        with self.cond:
            self.free += count
            self.cond.notify_all()


class Runner:
    """Runs points as subprocesses; interrupt() ends the ones under way."""

    def __init__(self, spec: Spec, cache: Cache) -> None:
        self.spec, self.cache = spec, cache
        self.running: set[subprocess.Popen[bytes]] = set()
        self.lock = threading.Lock()
        self.stopping = False
        self.slots = Slots(spec.jobs)

    def command(self, point: Point, session: pathlib.Path,
                argv: list[str] | None = None) -> list[str]:
        """ARGV (default: the point's program) in SESSION, under the launcher for ranks."""
        argv = [a.replace(SESSION, str(session)) for a in argv or point.argv]
        if point.ranks is None:
            return argv
        return [a.replace("{ranks}", str(point.ranks)) for a in self.spec.launcher] + argv

    def run(self, point: Point) -> dict[str, Any]:
        """Runs POINT in a fresh session folder, once it has its slots, and caches its
        result."""
        need = self.slots.need(point)
        self.slots.acquire(need)
        try:
            if self.stopping:  # nobody waits for it any more
                return {"workload": point.workload, "axes": point.axes, "status": "pending"}
            return self.run_now(point)
        finally:
            self.slots.release(need)

    def run_now(self, point: Point) -> dict[str, Any]:
        session = self.cache.out / "runs" / point.key[:16]
        shutil.rmtree(session, ignore_errors=True)  # a killed earlier try's leftovers
        session.mkdir(parents=True)
        self.cache.log(f"start {point.key[:16]} {point.workload} {json.dumps(point.axes)}")
        start = time.monotonic()
        code, stderr = self.prepare(point, session)
        if code == 0 and not self.stopping:
            code = self.execute(self.command(point, session), session)
        entry = self.entry(point, session, code, stderr, time.monotonic() - start)
        if not self.stopping:
            self.cache.store(entry)
            self.cache.log(f"{entry['status']} {point.key[:16]}")
        if not self.spec.keep_hdf5:  # the tensors: the report, logs and traces stay
            for tensor in session.glob("*.h5"):
                tensor.unlink(missing_ok=True)
        return entry

    def prepare(self, point: Point, session: pathlib.Path) -> tuple[int, str]:
        """Writes the point's ONNX layers as SESSION/network.csv, or generates its input with
        triada-gen: (exit code, the stderr file whose last error line a failure shows)."""
        if point.generate is not None:
            argv = self.command(point, session, point.generate)
            return self.execute(argv, session, "generate."), "generate.stderr.txt"
        if point.network is None:
            return 0, "stderr.txt"
        from .onnx_net import to_network
        try:
            to_network(point.network, session / "network.csv")
        except OSError as e:
            (session / "stderr.txt").write_text(f"{session / 'network.csv'}: cannot write the "
                                                f"ONNX model's network: {e.strerror}\n")
            return 1, "stderr.txt"
        return 0, "stderr.txt"

    def execute(self, argv: list[str], session: pathlib.Path, prefix: str = "") -> int:
        """Runs ARGV in SESSION, its output in SESSION/PREFIXstdout.txt and PREFIXstderr.txt."""
        with open(session / f"{prefix}stdout.txt", "wb") as out, \
                open(session / f"{prefix}stderr.txt", "wb") as err:
            try:
                # Its own process group: a stopped sweep ends the whole run (mpirun and its
                # ranks), not only the process it started.
                p = subprocess.Popen(argv, cwd=session, stdout=out, stderr=err, env=run_env(),
                                     start_new_session=True)
            except OSError as e:
                err.write(f"{argv[0]}: cannot start: {e.strerror}\n".encode())
                return 127
            with self.lock:
                self.running.add(p)
                if self.stopping:  # started as the sweep was being interrupted
                    signal_group(p, signal.SIGTERM)
            try:
                return p.wait()
            finally:
                with self.lock:
                    self.running.discard(p)

    def entry(self, point: Point, session: pathlib.Path, code: int, stderr: str,
              wall: float) -> dict[str, Any]:
        report, error, generated = None, "", None
        if code == 0:
            try:
                report = json.loads((session / "report.json").read_text(encoding="utf-8"))
                if point.generate is not None:
                    generated = json.loads((session / "generate.json").read_text("utf-8"))
            except (OSError, ValueError) as e:
                report, error = None, f"exit code 0 but no readable report ({e})"
        else:
            error = error_line(session / stderr, code)
        # The program by its name, the session by its folder under OUT: the same row wherever
        # the programs and OUT are.
        shown = [a.replace(str(self.cache.out) + "/", "") for a in self.command(point, session)]
        shown[shown.index(point.argv[0])] = point.program
        return {"key": point.key, "workload": point.workload, "axes": point.axes,
                "status": "ok" if report is not None else "failed", "error": error,
                "exit_code": code, "report": report, "generate": generated, "command": shown,
                "wall_s": round(wall, 3), "host": socket.gethostname(),
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}

    def interrupt(self, grace_s: float = 10) -> None:
        """Ends the runs under way, each run's process group, and waits for them (SIGKILL
        after grace_s): none writes into a session folder once the sweep has stopped."""
        self.stopping = True
        with self.lock:
            running = list(self.running)
        for p in running:
            signal_group(p, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        for p in running:
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                signal_group(p, signal.SIGKILL)
                p.wait()


def signal_group(p: subprocess.Popen[bytes], sig: int) -> None:
    try:
        os.killpg(p.pid, sig)
    except ProcessLookupError:  # already gone
        pass


def error_line(stderr: pathlib.Path, code: int) -> str:
    """The program's one-line error (its last 'error:' line, else its last line)."""
    try:
        lines = [ln.strip() for ln in stderr.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        lines = []
    errors = [ln for ln in lines if ": error: " in ln]
    if errors or lines:
        return (errors or lines)[-1]
    return f"exit code {code}, no error line" if code >= 0 else f"killed by signal {-code}"


def run_env() -> dict[str, str]:
    env = dict(os.environ)
    if os.geteuid() == 0:  # Open MPI's mpirun refuses root without these
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env
