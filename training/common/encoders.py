"""The encoder recipes' model side and data: silver labels (built from the bundled corpus once), a tokenizer and an
encoder (a tiny random one, or pretrained weights resolved local-path first), a wrapped model built so that ZeRO-3
can partition it, and batched logits for evaluation."""

from __future__ import annotations

from pathlib import Path

from radmetrics.data_builders.labels.recipe_data import check_recipe_data, import_provenance

from .arguments import TINY_MODELS, DataArguments, ModelArguments
from .distributed import build_once
from .encoder_data_checks import check_entity_positions, check_silver_folder


def load_silver(data_args: DataArguments, labeler: str, output_dir: str | None, max_span_width: int | None = None):
    """The labeler's silver DatasetDict, building it from the bundled corpus into OUTPUT_DIR/silver on the main process
    when `--silver_dir` is unset; checked before any tokenizer or model (its rows and labels: recipe_data.py; the
    folder and the recipe's span width and sequence length: encoder_data_checks.py)."""
    from datasets import load_from_disk

    root = Path(data_args.silver_dir) if data_args.silver_dir else Path(output_dir) / "silver"
    hf_dir = root / labeler / "hf"
    if data_args.silver_dir:
        check_silver_folder(root, labeler)
    else:

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
    label_set = check_recipe_data(data, labeler, hf_dir)
    check_entity_positions(data, labeler, str(hf_dir), data_args.max_seq_length, max_span_width)
    if data_args.max_train_samples:
        data["train"] = data["train"].select(range(min(data_args.max_train_samples, len(data["train"]))))
    if data_args.max_eval_samples:
        for split in ("validation", "test"):
            data[split] = data[split].select(range(min(data_args.max_eval_samples, len(data[split]))))
    counts = {f"{s}_examples": len(d) for s, d in data.items()}
    provenance = {"silver_dir": str(root), "labeler": labeler, "label_set": label_set, **import_provenance(root)}
    return data, {**provenance, **counts}


def check_user_silver(config: str, overrides: list[str], labeler: str, span_type=None) -> str | None:
    """An encoder recipe's `check_data`: the user's `--silver_dir` read and checked as the run will read it (from the
    config and overrides alone; `span_type`: the recipe's SpanArguments, whose max_span_width applies), before
    `radmetrics rehearse` launches anything. The folder checked, or None when the run builds bundled silver labels."""
    from ..config import data_arguments

    data_args = data_arguments(DataArguments, config, overrides)
    if not data_args.silver_dir:
        return None
    width = data_arguments(span_type, config, overrides).max_span_width if span_type else None
    load_silver(data_args, labeler, None, width)
    return data_args.silver_dir


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
