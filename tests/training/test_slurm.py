"""slurm/launch.sbatch with stand-in srun / scontrol / accelerate: per-node machine rank, rendezvous on the first
node, the recipe module and its arguments, and a requeue on USR1."""

import os
import stat
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "slurm" / "launch.sbatch"


SRUN_OPTIONS = 'while [ "${{1#--}}" != "$1" ]; do echo "srun $1" >> {log}; shift; done\n'


def stub(directory: Path, name: str, body: str) -> None:
    path = directory / name
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def run_launcher(tmp_path, *args, extra_env=None):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "calls.log"
    # srun: record its options, then run the task once per node, as SLURM would, with that node's SLURM_NODEID.
    stub(
        bin_dir,
        "srun",
        SRUN_OPTIONS.format(log=log)
        + 'for node in $(seq 0 $((SLURM_NNODES - 1))); do SLURM_NODEID=$node "$@"; done\n',
    )
    # a long host list after the first two: the launcher must take the first without a SIGPIPE'd pipeline
    stub(
        bin_dir,
        "scontrol",
        'if [ "$1" = show ]; then printf "gpu-node-07\\ngpu-node-08\\n"; seq -f "gpu-node-%g" 9 200000; '
        f'else echo "scontrol $*" >> {log}; fi\n',
    )
    stub(bin_dir, "accelerate", f'echo "accelerate $*" >> {log}\n')
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "SLURM_NNODES": "2",
        "SLURM_JOB_ID": "4242",
        "SLURM_JOB_NODELIST": "gpu-node-[07-08]",
        "GPUS_PER_NODE": "8",
        "SLURM_CPUS_PER_TASK": "64",
        **(extra_env or {}),
    }
    result = subprocess.run(
        ["bash", str(SCRIPT), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    return result, (log.read_text().splitlines() if log.exists() else [])


def test_launcher_gives_each_node_its_rank_and_one_rendezvous(tmp_path):
    result, calls = run_launcher(
        tmp_path,
        *("green/sft configs/green/sft/tiny.yaml configs/accelerate/zero3.yaml -- --num_train_epochs 1").split(),
    )
    assert result.returncode == 0, result.stderr
    srun_options = [call for call in calls if call.startswith("srun ")]
    # Slurm >= 22.05: srun does not inherit sbatch's --cpus-per-task; the launcher passes it on
    assert srun_options == ["srun --kill-on-bad-exit=1", "srun --cpus-per-task=64"]
    calls = [call for call in calls if not call.startswith("srun ")]
    assert len(calls) == 2
    for rank, call in enumerate(calls):
        assert f"--machine_rank {rank} " in call
        assert "--num_machines 2 --num_processes 16" in call
        assert "--main_process_ip gpu-node-07 --main_process_port 29500 --rdzv_backend c10d" in call
        assert "--config_file configs/accelerate/zero3.yaml" in call
        assert call.endswith(
            "-m radmetrics.training.green.sft --config configs/green/sft/tiny.yaml --num_train_epochs 1"
        )


def test_launcher_refuses_missing_files_and_arguments(tmp_path):
    result, calls = run_launcher(tmp_path, "green/sft", "configs/green/sft/nope.yaml")
    assert result.returncode == 2 and "nope.yaml not found" in result.stderr and not calls
    result, _ = run_launcher(tmp_path, "green/sft")
    assert result.returncode == 2 and "usage" in result.stderr


def test_launcher_asks_the_run_to_save_then_requeues_on_the_time_limit_signal(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "events.log"
    marker = tmp_path / "requeue-marker"
    marker.write_text("left by the previous attempt")
    stub(bin_dir, "srun", SRUN_OPTIONS.format(log=tmp_path / "srun.log") + 'SLURM_NODEID=0 "$@"\n')
    stub(bin_dir, "scontrol", f'if [ "$1" = show ]; then echo gpu-node-07; else echo "scontrol $*" >> {log}; fi\n')
    # The training step: a stale marker must be gone when it starts; it signals the batch shell with USR1 (as SLURM
    # does 300 s before the time limit), then, like the recipes' SaveAndStopOnRequest, saves once the marker appears.
    stub(
        bin_dir,
        "accelerate",
        f'[ -e {marker} ] && echo "stale marker" >> {log}\n'
        "kill -USR1 $LAUNCHER_PID\n"
        f"for _ in $(seq 100); do [ -e {marker} ] && break; sleep 0.05; done\n"
        f'[ -e {marker} ] && sleep 0.5 && echo "checkpoint saved" >> {log}\n',
    )
    wrapper = tmp_path / "wrapper.sh"
    wrapper.write_text(f'export LAUNCHER_PID=$$; exec bash {SCRIPT} "$@"\n')
    env = {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "SLURM_NNODES": "1",
        "SLURM_JOB_ID": "4242",
        "SLURM_JOB_NODELIST": "gpu-node-07",
        "RADMETRICS_REQUEUE_MARKER": str(marker),
    }
    result = subprocess.run(
        ["bash", str(wrapper), "rate_ner/span", "configs/rate_ner/span/tiny.yaml", "configs/accelerate/ddp.yaml"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "requeueing job 4242" in result.stdout
    # saved before the requeue, never requeued without saving
    assert log.read_text().splitlines() == ["checkpoint saved", "scontrol requeue 4242"]


def test_the_log_directory_exists_before_slurm_opens_the_output_file():
    output = next(
        line.split("=", 1)[1] for line in SCRIPT.read_text().splitlines() if line.startswith("#SBATCH --output=")
    )
    directory = ROOT / Path(output).parent
    tracked = subprocess.run(["git", "ls-files", str(directory)], cwd=ROOT, capture_output=True, text=True).stdout
    assert tracked.strip(), f"{directory} is not in the repository: SLURM cannot open {output}"


def test_every_slurm_example_names_existing_files():
    for example in sorted((ROOT / "slurm" / "examples").glob("*.sh")):
        words = example.read_text().split()
        assert "slurm/launch.sbatch" in words
        recipe_config_accel = words[words.index("slurm/launch.sbatch") + 1 : words.index("slurm/launch.sbatch") + 4]
        for path in recipe_config_accel[1:]:
            assert (ROOT / path).is_file(), f"{example.name}: {path} does not exist"


def test_the_stage_two_example_reads_what_stage_one_writes():
    pretrain = yaml.safe_load((ROOT / "configs/green/pretrain/mistral-7b.yaml").read_text())
    sft = yaml.safe_load((ROOT / "configs/green/sft/mistral-7b.yaml").read_text())
    written = f"{pretrain['output_dir']}/final"  # train_and_finish exports the final model there
    example = (ROOT / "slurm/examples/green_sft_mistral7b_2nodes.sh").read_text().split()
    assert example[example.index("--model_name_or_path") + 1] == written
    assert sft["model_name_or_path"] == written


def submit_under_rehearsal(tmp_path, command: list[str], extra_env=None):
    """COMMAND (sbatch or slurm/submit.sh) with the repository's rehearsal stand-ins (slurm/rehearsal: sbatch, srun,
    scontrol) and a stand-in accelerate: (result, the job's options as the stand-in sbatch granted them, the
    accelerate calls)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    calls = tmp_path / "accelerate.log"
    stub(bin_dir, "accelerate", f'echo "accelerate $*" >> {calls}\n')
    granted = tmp_path / "sbatch.log"
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SLURM_", "SBATCH_", "RADMETRICS_SLURM_")) and key != "GPUS_PER_NODE"
    }
    env.update(
        PATH=os.pathsep.join([str(bin_dir), str(ROOT / "slurm" / "rehearsal"), os.environ["PATH"]]),
        RADMETRICS_REHEARSAL_SBATCH_LOG=str(granted),
        RADMETRICS_REQUEUE_MARKER=str(tmp_path / "marker"),
        **(extra_env or {}),
    )
    result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    options = dict(line.split("=", 1) for line in granted.read_text().splitlines()) if granted.exists() else {}
    return result, options, (calls.read_text().splitlines() if calls.exists() else [])


def test_sbatch_flags_override_the_launchers_defaults_and_nothing_is_exclusive(tmp_path):
    command = "sbatch --partition=gpu-a100 --account=radiology-lab --gpus-per-node=4 slurm/launch.sbatch"
    result, options, calls = submit_under_rehearsal(
        tmp_path, [*command.split(), "green/sft", "configs/green/sft/tiny.yaml", "--", "--max_steps", "2"]
    )
    assert result.returncode == 0, result.stderr
    assert options["partition"] == "gpu-a100" and options["account"] == "radiology-lab"
    assert options["gpus-per-node"] == "4" and options["cpus-per-task"] == "64"  # the launcher's default CPUs
    assert "exclusive" not in options
    assert "partition gpu-a100, account radiology-lab, 64 CPU(s)" in result.stdout
    assert len(calls) == 1 and "--num_machines 1 --num_processes 4 " in calls[0]  # 4 GPUs: 4 processes
    assert calls[0].endswith("-m radmetrics.training.green.sft --config configs/green/sft/tiny.yaml --max_steps 2")


def test_submit_takes_resources_from_flags_or_the_environment(tmp_path):
    environment = {
        "RADMETRICS_SLURM_PARTITION": "gpu",
        "RADMETRICS_SLURM_ACCOUNT": "lab",
        "RADMETRICS_SLURM_GPUS_PER_NODE": "2",
        "RADMETRICS_SLURM_CPUS_PER_TASK": "16",
        "RADMETRICS_SLURM_TIME": "12:00:00",
    }
    result, options, calls = submit_under_rehearsal(
        tmp_path,
        ["bash", "slurm/submit.sh", "--gpus-per-node", "4", "--partition=gpu-h100", "--exclusive"]
        + ["crimson/sft", "configs/crimson/sft/tiny.yaml", "configs/accelerate/ddp.yaml"],
        environment,
    )
    assert result.returncode == 0, result.stderr
    assert options["partition"] == "gpu-h100" and options["account"] == "lab" and options["time"] == "12:00:00"
    assert options["gpus-per-node"] == "4" and options["cpus-per-task"] == "16" and options["exclusive"] == "1"
    assert "--num_processes 4 " in calls[0] and "--config_file configs/accelerate/ddp.yaml" in calls[0]
    for folder in ("defaults", "bad"):
        (tmp_path / folder).mkdir()
    result, options, _ = submit_under_rehearsal(
        tmp_path / "defaults",
        ["bash", "slurm/submit.sh", "green/sft", "configs/green/sft/tiny.yaml"],
    )
    assert result.returncode == 0, result.stderr
    assert options["gpus-per-node"] == "8" and "partition" not in options and "exclusive" not in options
    result, _, calls = submit_under_rehearsal(
        tmp_path / "bad",
        ["bash", "slurm/submit.sh", "--gpus-per-node", "four", "green/sft", "configs/green/sft/tiny.yaml"],
    )
    assert result.returncode == 2 and "'four' is not a positive count" in result.stderr and not calls
