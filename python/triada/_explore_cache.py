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
        return (self.dir / f"{key}.json").is_file()

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


def write_atomically(path: pathlib.Path, text: str) -> None:
    """PATH holds TEXT or what it held before, never a part (temp file, then rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


class Runner:
    """Runs points as subprocesses; interrupt() ends the ones under way."""

    def __init__(self, spec: Spec, cache: Cache) -> None:
        self.spec, self.cache = spec, cache
        self.running: set[subprocess.Popen[bytes]] = set()
        self.lock = threading.Lock()
        self.stopping = False

    def command(self, point: Point, session: pathlib.Path) -> list[str]:
        argv = [a.replace(SESSION, str(session)) for a in point.argv]
        if point.ranks is None:
            return argv
        return [a.replace("{ranks}", str(point.ranks)) for a in self.spec.launcher] + argv

    def run(self, point: Point) -> dict[str, Any]:
        """Runs POINT in a fresh session folder and caches its result."""
        session = self.cache.out / "runs" / point.key[:16]
        shutil.rmtree(session, ignore_errors=True)  # a killed earlier try's leftovers
        session.mkdir(parents=True)
        self.cache.log(f"start {point.key[:16]} {point.workload} {json.dumps(point.axes)}")
        start = time.monotonic()
        code = self.prepare(point, session)
        if code == 0:
            code = self.execute(self.command(point, session), session)
        entry = self.entry(point, session, code, time.monotonic() - start)
        if not self.stopping:
            self.cache.store(entry)
            self.cache.log(f"{entry['status']} {point.key[:16]}")
        return entry

    @staticmethod
    def prepare(point: Point, session: pathlib.Path) -> int:
        """Writes the point's ONNX layers as SESSION/network.csv (a failure: its row's error)."""
        if point.network is None:
            return 0
        from .onnx_net import to_network
        try:
            to_network(point.network, session / "network.csv")
        except OSError as e:
            (session / "stderr.txt").write_text(f"{session / 'network.csv'}: cannot write the "
                                                f"ONNX model's network: {e.strerror}\n")
            return 1
        return 0

    def execute(self, argv: list[str], session: pathlib.Path) -> int:
        with open(session / "stdout.txt", "wb") as out, open(session / "stderr.txt", "wb") as err:
            try:
                p = subprocess.Popen(argv, cwd=session, stdout=out, stderr=err, env=run_env())
            except OSError as e:
                err.write(f"{argv[0]}: cannot start: {e.strerror}\n".encode())
                return 127
            with self.lock:
                self.running.add(p)
            try:
                return p.wait()
            finally:
                with self.lock:
                    self.running.discard(p)

    def entry(self, point: Point, session: pathlib.Path, code: int,
              wall: float) -> dict[str, Any]:
        report, error = None, ""
        if code == 0:
            try:
                report = json.loads((session / "report.json").read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                error = f"exit code 0 but no readable report.json ({e})"
        else:
            error = error_line(session / "stderr.txt", code)
        # The program by its name, the session by its folder under OUT: the same row wherever
        # the programs and OUT are.
        shown = [a.replace(str(self.cache.out) + "/", "") for a in self.command(point, session)]
        shown[shown.index(point.argv[0])] = point.program
        return {"key": point.key, "workload": point.workload, "axes": point.axes,
                "status": "ok" if report is not None else "failed", "error": error,
                "exit_code": code, "report": report, "command": shown,
                "wall_s": round(wall, 3), "host": socket.gethostname(),
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}

    def interrupt(self) -> None:
        self.stopping = True
        with self.lock:
            for p in self.running:
                p.send_signal(signal.SIGTERM)


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
