"""The arguments every encoder recipe parses beside its own and HF `TrainingArguments` (alignment-handbook style):
the encoder to start from, and the silver data to train on."""

from __future__ import annotations

from dataclasses import dataclass, field

TINY_MODELS = ("tiny-bert", "tiny-deberta")


@dataclass
class ModelArguments:
    model_name_or_path: str = field(
        default="tiny-bert",
        metadata={
            "help": (
                "a local path or Hub id (local first), 'default' for the bundled MiniLM, or tiny-bert / tiny-deberta "
                "for a random tiny encoder with a WordPiece tokenizer trained on the training text"
            )
        },
    )
    tiny_vocab_size: int = field(default=2000, metadata={"help": "vocabulary of the tiny tokenizer"})
    tiny_hidden_size: int = field(default=64, metadata={"help": "hidden size of the tiny encoder"})


@dataclass
class DataArguments:
    silver_dir: str | None = field(
        default=None,
        metadata={
            "help": (
                "output of `radmetrics data import` (your own labels) or `radmetrics data silver`; when unset, silver "
                "labels of the bundled IU corpus are built into OUTPUT_DIR/silver"
            )
        },
    )
    max_train_samples: int | None = field(
        default=None, metadata={"help": "truncate the training split (unset or 0: all of it)"}
    )
    max_eval_samples: int | None = field(default=None, metadata={"help": "truncate the validation and test splits"})
    max_seq_length: int = field(default=128, metadata={"help": "tokens per example after tokenisation"})
    preprocessing_num_workers: int | None = field(
        default=None,
        metadata={
            "help": (
                "processes for tokenisation (datasets.map; run on global rank 0 first, the others then read its cache)"
            )
        },
    )
