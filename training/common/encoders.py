"""The encoder recipes' model side and data: silver labels (built from the bundled corpus once), a tokenizer and an
encoder (a tiny random one, or pretrained weights resolved local-path first), a wrapped model built so that ZeRO-3
can partition it, and batched logits for evaluation."""

from __future__ import annotations

from pathlib import Path

from .arguments import TINY_MODELS, DataArguments, ModelArguments
from .distributed import build_once
from .record_checks import RecordFormatError, check_silver_columns


def load_silver(data_args: DataArguments, labeler: str, training_args):
    """The labeler's silver DatasetDict, building it from the bundled corpus on the main process if needed."""
    from datasets import load_from_disk

    root = Path(data_args.silver_dir) if data_args.silver_dir else Path(training_args.output_dir) / "silver"
    hf_dir = root / labeler / "hf"
    if data_args.silver_dir and not hf_dir.is_dir():
        raise FileNotFoundError(f"{hf_dir} not found: run `radmetrics data silver --out {root}` first")
    if not data_args.silver_dir:

        def build():
            from radmetrics.data_builders.corpus.corpora import iu_xray_corpus
            from radmetrics.data_builders.corpus.corpus_io import assign_splits
            from radmetrics.data_builders.silver.dataset import write_silver

            reports = [r for r in iu_xray_corpus() if r.text]
            write_silver(
                reports,
                assign_splits(reports),
                root,
                labelers=[labeler],
                provenance={"corpus": "iu_xray", "path": "bundled", "split_by": "text"},
            )

        build_once(root / labeler, build)
    data = load_from_disk(str(hf_dir))
    for split in ("train", "validation", "test"):
        if split not in data:
            raise RecordFormatError(f"{hf_dir}: the silver dataset has no {split!r} split (found {list(data)})")
    check_silver_columns(data, labeler, str(hf_dir))  # before the tokenizer and the model
    if data_args.max_train_samples:
        data["train"] = data["train"].select(range(min(data_args.max_train_samples, len(data["train"]))))
    if data_args.max_eval_samples:
        for split in ("validation", "test"):
            data[split] = data[split].select(range(min(data_args.max_eval_samples, len(data[split]))))
    return data, {"silver_dir": str(root), "labeler": labeler, **{f"{s}_examples": len(d) for s, d in data.items()}}


def build_tokenizer(model_args: ModelArguments, texts, training_args):
    """A tokenizer trained on `texts` (tiny models, reused on resume) or loaded from the model path."""
    from radmetrics.inference.loading.hub import load_tokenizer

    if model_args.model_name_or_path not in TINY_MODELS:
        return load_tokenizer(model_args.model_name_or_path)
    from ..tiny import train_wordpiece_tokenizer

    directory = Path(training_args.output_dir) / "tokenizer"
    build_once(directory, lambda: train_wordpiece_tokenizer(texts, directory, vocab_size=model_args.tiny_vocab_size))
    return load_tokenizer(directory, min_vocab=50)


def encoder_config(model_args: ModelArguments, tokenizer, **overrides):
    """The encoder's config: a tiny random one, or the pretrained model's with `overrides`."""
    from transformers import AutoConfig

    from radmetrics.inference.loading.hub import resolve_model_path

    from ..tiny import tiny_bert_config, tiny_deberta_v2_config

    if model_args.model_name_or_path == "tiny-bert":
        return tiny_bert_config(len(tokenizer), hidden_size=model_args.tiny_hidden_size, **overrides)
    if model_args.model_name_or_path == "tiny-deberta":
        return tiny_deberta_v2_config(len(tokenizer), hidden_size=model_args.tiny_hidden_size, **overrides)
    return AutoConfig.from_pretrained(resolve_model_path(model_args.model_name_or_path), **overrides)


def build_wrapped_model(model_cls, model_args: ModelArguments, tokenizer, **config_kwargs):
    """A model that wraps an encoder (CheXbert-style labeler, span extractor): built with `_from_config`,
    which honours a ZeRO-3 zero.Init context (calling the class does not), then given the pretrained
    encoder's weights unless the encoder is a tiny random one."""
    config = model_cls.config_class.from_encoder(encoder_config(model_args, tokenizer), **config_kwargs)
    model = model_cls._from_config(config)
    weights = pretrained_weights(model_args)
    if weights:
        from transformers import AutoModel

        model.encoder = AutoModel.from_pretrained(weights)
    return model


def pretrained_weights(model_args: ModelArguments) -> str | None:
    """Path of pretrained weights to start from, or None for a random tiny encoder."""
    from radmetrics.inference.loading.hub import resolve_model_path

    return None if model_args.model_name_or_path in TINY_MODELS else resolve_model_path(model_args.model_name_or_path)


def predict_logits(model, dataset, collator, batch_size: int = 64):
    """Logits of `model` over a tokenized dataset (columns the collator accepts; `labels` are dropped),
    padded to a common length for token-level outputs."""
    import numpy as np
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = model.eval().to(device)
    outputs = []
    features = [{k: v for k, v in row.items() if k != "labels"} for row in dataset]
    with torch.no_grad():
        for start in range(0, len(features), batch_size):
            batch = collator(features[start : start + batch_size])
            logits = model(**{k: v.to(device) for k, v in batch.items()})["logits"]
            outputs.append(logits.float().cpu().numpy())
    if outputs and outputs[0].ndim == 3:  # token classification: pad the sequence axis
        width = max(o.shape[1] for o in outputs)
        outputs = [np.pad(o, ((0, 0), (0, width - o.shape[1]), (0, 0))) for o in outputs]
    return np.concatenate(outputs)


def map_on_main_first(data, function, training_args, data_args, desc: str):
    """`function` mapped in batches over every split of `data`, replacing its columns: on global rank 0 first, so
    that the other ranks (every node) read its cache instead of computing it again."""
    with training_args.main_process_first(local=False, desc=desc):
        return data.map(
            function,
            batched=True,
            remove_columns=data["train"].column_names,
            num_proc=data_args.preprocessing_num_workers,
        )
