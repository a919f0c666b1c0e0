"""slurm/launch.sbatch with stand-in srun / scontrol / accelerate: per-node machine rank, rendezvous on the first
node, the recipe module and its arguments, and a requeue on USR1."""

import os
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "slurm" / "launch.sbatch"


def stub(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def run_launcher(tmp_path, *args, extra_env=None):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "calls.log"
    # srun: run the task once per node, as SLURM would, with that node's SLURM_NODEID.
    stub(bin_dir, "srun", 'shift; for node in $(seq 0 $((SLURM_NNODES - 1))); do SLURM_NODEID=$node "$@"; done\n')
    # a long host list after the first two: the launcher must take the first without a SIGPIPE'd pipeline
    stub(bin_dir, "scontrol", f'if [ "$1" = show ]; then printf "gpu-node-07\\ngpu-node-08\\n"; seq -f "gpu-node-%g" 9 200000; '
                              f'else echo "scontrol $*" >> {log}; fi\n')
    stub(bin_dir, "accelerate", f'echo "accelerate $*" >> {log}\n')
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURM_NNODES": "2", "SLURM_JOB_ID": "4242",
           "SLURM_JOB_NODELIST": "gpu-node-[07-08]", "GPUS_PER_NODE": "8", **(extra_env or {})}
    result = subprocess.run(["bash", str(SCRIPT), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    return result, (log.read_text().splitlines() if log.exists() else [])


def test_launcher_gives_each_node_its_rank_and_one_rendezvous(tmp_path):
    result, calls = run_launcher(tmp_path, "green/sft", "configs/green/sft/tiny.yaml", "configs/accelerate/zero3.yaml",
                                 "--", "--num_train_epochs", "1")
    assert result.returncode == 0, result.stderr
    assert len(calls) == 2
    for rank, call in enumerate(calls):
        assert f"--machine_rank {rank} " in call
        assert "--num_machines 2 --num_processes 16" in call
        assert "--main_process_ip gpu-node-07 --main_process_port 29500 --rdzv_backend c10d" in call
        assert "--config_file configs/accelerate/zero3.yaml" in call
        assert call.endswith("-m radmetrics.training.green.sft --config configs/green/sft/tiny.yaml --num_train_epochs 1")


def test_launcher_refuses_missing_files_and_arguments(tmp_path):
    result, calls = run_launcher(tmp_path, "green/sft", "configs/green/sft/nope.yaml")
    assert result.returncode == 2 and "nope.yaml not found" in result.stderr and not calls
    result, _ = run_launcher(tmp_path, "green/sft")
    assert result.returncode == 2 and "usage" in result.stderr


def test_launcher_requeues_on_the_time_limit_signal(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "requeue.log"
    stub(bin_dir, "srun", 'shift; SLURM_NODEID=0 "$@"\n')
    stub(bin_dir, "scontrol", f'if [ "$1" = show ]; then echo gpu-node-07; else echo "scontrol $*" >> {log}; fi\n')
    # the training step signals the batch shell with USR1, as SLURM does 300 s before the time limit
    stub(bin_dir, "accelerate", "kill -USR1 $LAUNCHER_PID; sleep 1\n")
    wrapper = tmp_path / "wrapper.sh"
    wrapper.write_text(f'export LAUNCHER_PID=$$; exec bash {SCRIPT} "$@"\n')
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SLURM_NNODES": "1", "SLURM_JOB_ID": "4242",
           "SLURM_JOB_NODELIST": "gpu-node-07"}
    result = subprocess.run(["bash", str(wrapper), "rate_ner/span", "configs/rate_ner/span/tiny.yaml", "configs/accelerate/ddp.yaml"],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert "requeueing job 4242" in result.stdout
    assert log.read_text().strip() == "scontrol requeue 4242"


def test_every_slurm_example_names_existing_files():
    for example in sorted((ROOT / "slurm" / "examples").glob("*.sh")):
        words = example.read_text().split()
        assert "slurm/launch.sbatch" in words
        recipe_config_accel = words[words.index("slurm/launch.sbatch") + 1: words.index("slurm/launch.sbatch") + 4]
        for path in recipe_config_accel[1:]:
            assert (ROOT / path).is_file(), f"{example.name}: {path} does not exist"
