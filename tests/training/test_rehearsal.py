"""Every GPU config rehearsed end to end on CPU (slow; `radmetrics rehearse`): the YAML as it is with a tiny model of
the same family, through slurm/launch.sbatch as 2 nodes x 1 process on gloo, SIGUSR1 as the ranks start,
save at the next step end, requeue, resume from that checkpoint, final evaluation, export and reload with transformers'
Auto classes.
The offload DeepSpeed config is rehearsed on a 7B SFT config too."""

import json
from pathlib import Path

import pytest

from radmetrics.training.rehearsal import REPO, gpu_configs, rehearse

CASES = [(str(p.relative_to(REPO)), None) for p in gpu_configs()] + [
    ("configs/green/sft/llama-2-7b.yaml", "configs/deepspeed/zero3_offload.json")
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return tmp_path_factory.mktemp("rehearsal")  # look-alike models and data are built once for all configs


@pytest.mark.slow
@pytest.mark.parametrize("config,deepspeed", CASES, ids=[f"{c}{'+offload' if d else ''}" for c, d in CASES])
def test_gpu_config_rehearses_to_the_end(config, deepspeed, workdir):
    result = rehearse(config, workdir, deepspeed, timeout_s=1200)  # raises RehearsalError naming the failed step
    assert result.saved_on_signal is not None and result.resumed_from == result.saved_on_signal
    assert result.final_step == 8 and result.eval_results
    manifest = json.loads((Path(result.export) / "radmetrics.json").read_text())
    assert manifest["eval_results"] == result.eval_results
