import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parent.parent
TEST_DATA = Path(__file__).resolve().parent / "data"  # public fixtures copied into the repo (see data/ATTRIBUTION.md)


def pytest_collection_modifyitems(config, items):
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:
        has_cuda = False
    if not has_cuda:
        skip = pytest.mark.skip(reason="needs a CUDA GPU")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def test_data():
    return TEST_DATA


@pytest.fixture(scope="session")
def iu_reports():
    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus

    return iu_xray_corpus()


@pytest.fixture(scope="session")
def wordpiece_dir(tmp_path_factory, iu_reports):
    from radmetrics.training.tiny import train_wordpiece_tokenizer

    out = tmp_path_factory.mktemp("wordpiece")
    train_wordpiece_tokenizer([r.text for r in iu_reports[:600]], out, vocab_size=800)
    return out
