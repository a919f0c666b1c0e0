"""How long `radmetrics demo` takes, and how much memory, as a new user sees it: a fresh clone of this checkout's HEAD,
empty caches (XDG_CACHE_HOME: pip, the Hub cache and radmetrics' cache start empty), the environment built by
`bash .ci/env`, then the demo. Run it alone on the machine; the README's figures come from it.

    python benchmarks/demo/demo_time.py --results benchmarks/results/demo_time.json

Writes the setup time, each stage's seconds (the demo's own table), their sum, the whole demo's wall time and its
peak resident memory (GNU time's maximum RSS of the demo process), with the commit, date and machine.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import REPO, machine  # noqa: E402

GNU_TIME = "/usr/bin/time"
STATUS = r"(?P<status>ok|FAILED|skipped|not built)"
STAGE_ROW = re.compile(rf"^\| (?P<stage>[^|]+) \| {STATUS} \| .* \| (?P<secs>[\d.]+) \|$")


def timed(command: list[str], cwd: Path, env: dict, log: Path) -> tuple[float, int, int]:
    """(wall seconds, peak RSS in kB, exit status) of `command`, its output in `log`."""
    start = time.perf_counter()
    with open(log, "w", encoding="utf-8") as fh:
        done = subprocess.run([GNU_TIME, "-f", "PEAK_RSS_KB %M", *command], cwd=cwd, env=env, stdout=fh, stderr=fh)
    wall = time.perf_counter() - start
    peak = [int(m) for m in re.findall(r"^PEAK_RSS_KB (\d+)$", log.read_text(encoding="utf-8"), re.M)]
    return wall, peak[-1] if peak else -1, done.returncode


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", required=True, help="JSON file for the figures")
    parser.add_argument("--keep", action="store_true", help="keep the clone, caches and demo output")
    args = parser.parse_args(argv)
    if not Path(GNU_TIME).exists():
        raise SystemExit(f"demo_time.py: needs GNU time at {GNU_TIME} (Debian: apt install time)")
    commit = subprocess.check_output(["git", "-C", str(REPO), "rev-parse", "--short=7", "HEAD"], text=True).strip()
    work = Path(tempfile.mkdtemp(prefix="radmetrics_demo_time_"))
    clone = work / "radmetrics"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "RADMETRICS_", "VIRTUAL_ENV"))}
    env["XDG_CACHE_HOME"] = str(work / "cache")
    try:
        setup_s, setup_peak, status = timed(["bash", ".ci/env", "true"], clone, env, work / "setup.log")
        if status:
            raise SystemExit(f"demo_time.py: setup failed, see {work / 'setup.log'}")
        demo_s, demo_peak, status = timed(
            ["bash", ".ci/env", "radmetrics", "demo", "--out", str(work / "demo")], clone, env, work / "demo.log"
        )
        lines = (work / "demo.log").read_text(encoding="utf-8").splitlines()
        stages = {m["stage"]: float(m["secs"]) for m in map(STAGE_ROW.match, lines) if m and m["status"] == "ok"}
        failed = [m["stage"] for m in map(STAGE_ROW.match, lines) if m and m["status"] == "FAILED"]
        results = {
            "what": "radmetrics demo from a fresh clone with empty caches, alone on the machine",
            "command": "python benchmarks/demo/demo_time.py --results " + args.results,
            "commit": commit,
            "date": datetime.date.today().isoformat(),
            "machine": machine(),
            "demo_exit_status": status,
            "failed_stages": failed,
            "setup_seconds": round(setup_s, 1),
            "stage_seconds": stages,
            "stages_total_seconds": round(sum(stages.values()), 1),
            "demo_wall_seconds": round(demo_s, 1),
            "demo_peak_rss_gib": round(demo_peak / 2**20, 2),
            "demo_peak_rss_kb": demo_peak,
        }
        Path(args.results).parent.mkdir(parents=True, exist_ok=True)
        Path(args.results).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        print(json.dumps(results, indent=2))
        return 1 if status or failed else 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
