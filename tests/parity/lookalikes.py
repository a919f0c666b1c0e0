"""Random-weight look-alikes of every released artefact, in its published format, in one folder ROOT:

- ROOT/hf: a Hugging Face home (HF_HOME) whose hub cache holds, as `models--ORG--NAME/{refs/main, snapshots/<sha>}`,
  the base models the reference packages load by name (bert-base-uncased, the RadGraph transformers, BioLORD-2023-C,
  distilroberta-base and distilbert-base-uncased in `build_full`),
  RaTE-NER-Deberta, GREEN-RadLlama2-7b, and StanfordAIMI/RRG_scorers with chexbert.pth and the three RadGraph tarballs;
- ROOT/xdg/chexbert/chexbert.pth: where f1chexbert 0.0.2 looks for its checkpoint (XDG_CACHE_HOME=ROOT/xdg);
- ROOT/radgraph/<model_type>/: the unpacked tarballs, where radgraph 0.1.18 looks (model_cache_dir=ROOT/radgraph).

Same file names, state-dict keys and prefixes, label vocabularies and tokenizer files as the real artefacts; small
hidden sizes (`build`), or the published ones (`build_full`: bert-base, DeBERTa-v3-base with its 128,100-row
embedding, MPNet-base, distilroberta-base, distilbert-base-uncased, for timing at real cost); weights drawn from a
seeded generator, with biases that keep the outputs sparse enough to be
informative (a few entities and relations per report, every CheXbert class, every RaTE-NER label). `build` is
deterministic for a given torch version: `digest` fingerprints the result, and the parity fixtures record it.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import tarfile
from pathlib import Path

import torch

TOKENIZERS = Path(__file__).resolve().parents[1] / "data" / "released" / "tokenizers"
RRG = "StanfordAIMI/RRG_scorers"
RADGRAPH_BASES = {
    "radgraph": "microsoft/BiomedNLP-PubMedBERT-base-uncased-abstract-fulltext",
    "radgraph-xl": "microsoft/BiomedVLP-CXR-BERT-general",
    "modern-radgraph-xl": "answerdotai/ModernBERT-base",
}
RADGRAPH_LABELS = {
    "radgraph": (["ANAT-DP", "OBS-DP", "OBS-DA", "OBS-U"], ["modify", "located_at", "suggestive_of"]),
    "xl": (
        [
            "Anatomy::definitely present",
            "Observation::definitely present",
            "Observation::definitely absent",
            "Observation::uncertain",
            "Observation::measurement::definitely present",
            "Anatomy::uncertain",
            "Anatomy::definitely absent",
            "Anatomy::measurement::definitely present",
            "Observation::measurement::definitely absent",
            "Observation::measurement::uncertain",
            "Anatomy::measurement::uncertain",
        ],
        ["modify", "located_at", "suggestive_of"],
    ),
}
RATE_LABELS = (
    "B-ABNORMALITY I-ABNORMALITY B-NON-ABNORMALITY I-NON-ABNORMALITY B-DISEASE I-DISEASE B-NON-DISEASE "
    "I-NON-DISEASE B-ANATOMY I-ANATOMY O"
).split()
GREEN_REPOS = (
    "StanfordAIMI/GREEN-RadLlama2-7b",
    "StanfordAIMI/GREEN-radllama2-7b",
)  # RadEval asks for the lower-case id
FEATURE_SIZE, FF_HIDDEN, MAX_SPAN_WIDTH = 20, 150, 8
# Scorer biases that leave about 5% of spans as entities and 2% of kept span pairs as relations on IU reports.
RADGRAPH_BIASES = {"radgraph": (-0.57, -0.2), "radgraph-xl": (-1.35, 2.1), "modern-radgraph-xl": (-1.03, 0.85)}
# Full size: the scorers' weights times 5 (a 768-wide encoder's words differ less at initializer_range), and biases
# that leave about 20 entities and 20 relations per IU report (0.5 entities per word, as the published model finds);
# found by building with a few biases and counting what radmetrics' RadGraph finds (`python
# benchmarks/encoders/lookalike_radgraph_calibration.py --biases -3.6 3.48`: the original RadGraph finds 20.8 entities
# (0.47 per
# word) and 20.5 relations per report).
RADGRAPH_FULL = {"gain": 5.0, "radgraph-xl": (-5.79, 3.48), "radgraph": (-3.6, 3.48)}
# Encoder sizes: the parity look-alikes' ("tiny") and the published base models' ("full": bert-base, CXR-BERT,
# DeBERTa-v3-base and MPNet-base share them). Full-size weights are drawn at the published configs' initializer_range
# (0.02): larger ones make 12 random layers map every token to nearly the same vector, and the predictions uniform.
SIZES = {
    "tiny": {"hidden_size": 32, "intermediate_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2},
    "full": {"hidden_size": 768, "intermediate_size": 3072, "num_attention_heads": 12, "num_hidden_layers": 12},
}
WEIGHT_SCALE = {"tiny": 0.5, "full": 0.02}
DEBERTA_V3_VOCAB = 128_100  # the published embedding's rows; the look-alike tokenizer uses the first 704
ROBERTA_VOCAB = 50_265  # distilroberta-base's embedding rows; the look-alike tokenizer uses the first 1,000
BERTSCORE_BPE_PIECES = 1_000


def snapshot(root: Path, repo_id: str) -> Path:
    repo = root / "hf" / "hub" / f"models--{repo_id.replace('/', '--')}"
    commit = hashlib.sha1(repo_id.encode()).hexdigest()
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    path = repo / "snapshots" / commit
    path.mkdir(parents=True, exist_ok=True)
    return path


def _write_json(path: Path, value: dict) -> None:
    path.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def randomize(state: dict, seed: int, scale: float = 0.5) -> dict:
    """Seeded random values for every floating tensor (norm weights around 1), in sorted key order."""
    generator = torch.Generator().manual_seed(seed)
    out = {}
    for key in sorted(state):
        value = state[key]
        if not value.is_floating_point():
            out[key] = value.clone()
            continue
        noise = torch.randn(value.shape, generator=generator)
        norm = any(part in key for part in ("LayerNorm", "layernorm", "norm.weight", "_norm.weight"))
        out[key] = (
            (1.0 + 0.1 * noise) if norm and key.endswith("weight") else noise * (scale if value.dim() > 1 else 0.1)
        )
    return out


def calibrated_head(
    features: torch.Tensor, weight: torch.Tensor, offsets: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """A random head (weight: classes x hidden) rescaled so that its logits on real reports' features (n x hidden) have
    zero mean and unit spread per class, plus `offsets`, which set how often each class wins. Full-size encoders at
    initializer_range give every report a large shared component; without this one class would win everywhere."""
    logits = features @ weight.T
    mean, spread = logits.mean(0), logits.std(0).clamp_min(1e-6)
    return weight / spread[:, None], offsets - mean / spread


def calibration_reports() -> list[str]:
    from .reports import iu_reports

    return iu_reports(64)


def bert_vocab() -> list[str]:
    from radmetrics.inference.loading.hub import default_encoder

    return (default_encoder() / "vocab.txt").read_text(encoding="utf-8").splitlines()


def bert_config(vocab_size: int, size: str = "tiny") -> dict:
    return {
        "architectures": ["BertForMaskedLM"],
        "attention_probs_dropout_prob": 0.1,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "initializer_range": 0.02,
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": 512,
        "model_type": "bert",
        "pad_token_id": 0,
        "position_embedding_type": "absolute",
        "type_vocab_size": 2,
        "vocab_size": vocab_size,
        **SIZES[size],
    }


def write_bert_base(root: Path, repo_id: str, size: str = "tiny") -> dict:
    """config.json, vocab.txt, tokenizer_config.json of an uncased BERT (no weights: the artefacts carry them)."""
    path, vocab = snapshot(root, repo_id), bert_vocab()
    config = bert_config(len(vocab), size)
    _write_json(path / "config.json", config)
    write_uncased_wordpiece(path, vocab, "BertTokenizer")
    return config


def write_uncased_wordpiece(path: Path, vocab: list[str], tokenizer_class: str) -> None:
    """vocab.txt and tokenizer_config.json of an uncased WordPiece tokenizer (BERT's, DistilBERT's)."""
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    _write_json(
        path / "tokenizer_config.json",
        {"do_lower_case": True, "model_max_length": 512, "tokenizer_class": tokenizer_class},
    )


def write_modernbert_base(root: Path, repo_id: str) -> dict:
    from tokenizers import Tokenizer

    path = snapshot(root, repo_id)
    tokenizer = Tokenizer.from_file(str(TOKENIZERS / "modernbert" / "tokenizer.json"))
    shutil.copy(TOKENIZERS / "modernbert" / "tokenizer.json", path / "tokenizer.json")
    _write_json(
        path / "tokenizer_config.json",
        {
            "tokenizer_class": "PreTrainedTokenizerFast",
            "model_max_length": 8192,
            "cls_token": "[CLS]",
            "sep_token": "[SEP]",
            "pad_token": "[PAD]",
            "unk_token": "[UNK]",
            "mask_token": "[MASK]",
            "clean_up_tokenization_spaces": True,
            "model_input_names": ["input_ids", "attention_mask"],
        },
    )
    _write_json(
        path / "special_tokens_map.json",
        {
            "cls_token": "[CLS]",
            "sep_token": "[SEP]",
            "pad_token": "[PAD]",
            "unk_token": "[UNK]",
            "mask_token": "[MASK]",
        },
    )
    ids = {name: tokenizer.token_to_id(name) for name in ("[PAD]", "[CLS]", "[SEP]")}
    config = {
        "architectures": ["ModernBertForMaskedLM"],
        "model_type": "modernbert",
        "vocab_size": tokenizer.get_vocab_size(),
        "hidden_size": 32,
        "intermediate_size": 48,
        "num_hidden_layers": 4,
        "num_attention_heads": 2,
        "max_position_embeddings": 8192,
        "pad_token_id": ids["[PAD]"],
        "cls_token_id": ids["[CLS]"],
        "sep_token_id": ids["[SEP]"],
        "bos_token_id": ids["[CLS]"],
        "eos_token_id": ids["[SEP]"],
        "global_attn_every_n_layers": 3,
        "local_attention": 128,
    }
    _write_json(path / "config.json", config)
    return config


def encoder_state(config: dict, seed: int, scale: float = 0.5) -> dict:
    """A randomised `AutoModel.from_config` state dict (BertModel with pooler, ModernBertModel)."""
    from transformers import AutoConfig, AutoModel

    values = dict(config)
    model = AutoModel.from_config(AutoConfig.for_model(values.pop("model_type"), **values))
    return randomize({k: v for k, v in model.state_dict().items() if not k.endswith("position_ids")}, seed, scale)


def deterministic_tar_gz(source: Path, target: Path) -> None:
    """A tar.gz of `source`'s files at the archive root, with fixed metadata so that it is reproducible."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in sorted(p for p in source.rglob("*") if p.is_file() and not p.name.startswith(".")):
            info = archive.gettarinfo(str(path), arcname=path.relative_to(source).as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname, info.mode = 0, 0, 0, "", "", 0o644
            with open(path, "rb") as fh:
                archive.addfile(info, fh)
    with open(target, "wb") as fh, gzip.GzipFile(fileobj=fh, mode="wb", mtime=0, filename="") as gz:
        gz.write(buffer.getvalue())


def build_chexbert(root: Path, size: str = "tiny") -> None:
    config = write_bert_base(root, "bert-base-uncased", size)
    state = {f"module.bert.{k}": v for k, v in encoder_state(config, seed=1, scale=WEIGHT_SCALE[size]).items()}
    generator = torch.Generator().manual_seed(2)
    for head in range(14):
        classes = 4 if head < 13 else 2
        state[f"module.linear_heads.{head}.weight"] = torch.randn(
            classes, 32 if size == "tiny" else config["hidden_size"], generator=generator
        )
        state[f"module.linear_heads.{head}.bias"] = torch.randn(classes, generator=generator) * 0.5
    if size == "full":  # CheXbert's heads read the [CLS] vector of the last layer
        cls = _encoder_outputs(
            snapshot(root, "bert-base-uncased"),
            config,
            {k[len("module.bert.") :]: v for k, v in state.items() if k.startswith("module.bert.")},
        )[:, 0]
        for head in range(14):  # blank most often, then positive, negative, uncertain (No Finding: two classes)
            offsets = torch.tensor([1.0, 0.3, 0.0, -0.5] if head < 13 else [0.0, 0.0])
            weight, bias = calibrated_head(cls, state[f"module.linear_heads.{head}.weight"], offsets)
            state[f"module.linear_heads.{head}.weight"], state[f"module.linear_heads.{head}.bias"] = weight, bias
    checkpoint = {"epoch": 7, "model_state_dict": state, "optimizer_state_dict": {}}
    for target in (snapshot(root, RRG) / "chexbert.pth", root / "xdg" / "chexbert" / "chexbert.pth"):
        target.parent.mkdir(parents=True, exist_ok=True)
        torch.save(checkpoint, target)


def _encoder_outputs(tokenizer_dir: Path, config: dict, state: dict, all_tokens: bool = False) -> torch.Tensor:
    """The last hidden states of `calibration_reports()` under an encoder built from `config` and `state`:
    (reports, tokens, hidden) padded, or with `all_tokens` (tokens, hidden) without padding."""
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    values = {k: v for k, v in config.items() if k not in ("id2label", "label2id", "architectures")}
    model = AutoModel.from_config(AutoConfig.for_model(values.pop("model_type"), **values)).eval()
    model.load_state_dict(state, strict=False)
    batch = AutoTokenizer.from_pretrained(str(tokenizer_dir))(
        calibration_reports(), padding=True, truncation=True, max_length=128, return_tensors="pt"
    )
    with torch.inference_mode():
        hidden = model(**batch).last_hidden_state
    return hidden[batch["attention_mask"].bool()] if all_tokens else hidden


def _linear(state: dict, prefix: str, rows: int, columns: int, generator, bias: float = 0.0) -> None:
    state[f"{prefix}weight"] = torch.randn(rows, columns, generator=generator) * columns**-0.5
    state[f"{prefix}bias"] = torch.randn(rows, generator=generator) * 0.1 + bias


def radgraph_weights(
    model_type: str,
    encoder: dict,
    hidden: int,
    entity_labels: int,
    relation_labels: int,
    seed: int,
    size: str = "tiny",
) -> dict:
    """weights.th: every key of the reference's DyGIE module tree (coref and events included), randomised; the
    entity and relation scorers biased negative so that only some spans and pairs come out."""
    generator = torch.Generator().manual_seed(seed)
    span, h = 2 * hidden + FEATURE_SIZE, FF_HIDDEN
    state = dict(encoder)
    state["_endpoint_span_extractor._span_width_embedding.weight"] = torch.randn(
        MAX_SPAN_WIDTH, FEATURE_SIZE, generator=generator
    )
    ner = f"_ner._ner_scorers.{model_type}__ner_labels."
    _linear(state, f"{ner}0._module._linear_layers.0.", h, span, generator)
    _linear(state, f"{ner}0._module._linear_layers.1.", h, h, generator)
    ner_bias, relation_bias = RADGRAPH_BIASES[model_type] if size == "tiny" else RADGRAPH_FULL[model_type]
    gain = 1.0 if size == "tiny" else RADGRAPH_FULL["gain"]
    _linear(state, f"{ner}1._module.", entity_labels - 1, h, generator, bias=ner_bias)
    state[f"{ner}1._module.weight"] *= gain
    relation = f"{model_type}__relation_labels"
    pruner = f"_relation._mention_pruners.{relation}._scorer."
    # the mention pruner scores spans like the entity scorer's mean, so that kept spans tend to be entities and
    # relations between entities come out
    for layer in (0, 1):
        for part in ("weight", "bias"):
            state[f"{pruner}0._module._linear_layers.{layer}.{part}"] = state[
                f"{ner}0._module._linear_layers.{layer}.{part}"
            ].clone()
    state[f"{pruner}1._module.weight"] = state[f"{ner}1._module.weight"].mean(0, keepdim=True)
    state[f"{pruner}1._module.bias"] = state[f"{ner}1._module.bias"].mean(0, keepdim=True)
    _linear(state, f"_relation._relation_feedforwards.{relation}._linear_layers.0.", h, 3 * span, generator)
    _linear(state, f"_relation._relation_feedforwards.{relation}._linear_layers.1.", h, h, generator)
    _linear(state, f"_relation._relation_scorers.{relation}.", relation_labels, h, generator, bias=relation_bias)
    state[f"_relation._relation_scorers.{relation}.weight"] *= gain
    state["_coref._distance_embedding.weight"] = torch.randn(10, FEATURE_SIZE, generator=generator)
    _linear(state, "_coref._antecedent_feedforward._module._linear_layers.0.", h, 3 * span + FEATURE_SIZE, generator)
    _linear(state, "_coref._antecedent_feedforward._module._linear_layers.1.", h, h, generator)
    _linear(state, "_coref._mention_pruner._scorer.0._module._linear_layers.0.", h, span, generator)
    _linear(state, "_coref._mention_pruner._scorer.0._module._linear_layers.1.", h, h, generator)
    _linear(state, "_coref._mention_pruner._scorer.1._module.", 1, h, generator)
    _linear(state, "_coref._antecedent_scorer._module.", 1, h, generator)
    _linear(state, "_coref._f_network._linear_layers.0.", span, 2 * span, generator)
    state["_events._distance_embedding.weight"] = torch.randn(10, FEATURE_SIZE, generator=generator)
    return state


def radgraph_config(model_type: str, base: str) -> dict:
    """config.json in the DyGIE++ training-template schema that radgraph 0.1.18 reads."""
    indexer = {"type": "pretrained_transformer_mismatched", "model_name": base, "max_length": 512}
    return {
        "dataset_reader": {"type": "dygie", "max_span_width": MAX_SPAN_WIDTH, "token_indexers": {"bert": indexer}},
        "model": {
            "type": "dygie",
            "embedder": {"token_embedders": {"bert": indexer}},
            "initializer": {"regexes": [["_span_width_embedding.weight", {"type": "xavier_normal"}]]},
            "module_initializer": {
                "regexes": [[".*weight", {"type": "xavier_normal"}], [".*weight_matrix", {"type": "xavier_normal"}]]
            },
            "loss_weights": {"ner": 0.2, "relation": 1.0, "coref": 0.0, "events": 0.0},
            "feature_size": FEATURE_SIZE,
            "max_span_width": MAX_SPAN_WIDTH,
            "target_task": "relation",
            "feedforward_params": {"num_layers": 2, "hidden_dims": FF_HIDDEN, "dropout": 0.4},
            "modules": {
                "coref": {"spans_per_word": 0.3, "max_antecedents": 100, "coref_prop": 0},
                "ner": {},
                "relation": {"spans_per_word": 0.5},
                "events": {
                    "trigger_spans_per_word": 0.3,
                    "argument_spans_per_word": 0.8,
                    "loss_weights": {"trigger": 1.0, "arguments": 0.5},
                },
            },
        },
        "train_data_path": "train.json",
        "validation_data_path": "dev.json",
        "test_data_path": "test.json",
        "data_loader": {"batch_sampler": {"type": "bucket", "batch_size": 1}},
        "trainer": {"num_epochs": 1, "optimizer": {"type": "adamw", "lr": 0.001}},
    }


def build_radgraph(root: Path, model_type: str, seed: int, size: str = "tiny") -> None:
    base = RADGRAPH_BASES[model_type]
    if model_type == "modern-radgraph-xl":
        assert size == "tiny", "the full-size look-alikes cover the BERT-based RadGraph models"
        config = write_modernbert_base(root, base)
    else:
        config = write_bert_base(root, base, size)
    prefix = "_embedder.token_embedder_bert._matched_embedder.transformer_model."
    encoder = {prefix + k: v for k, v in encoder_state(config, seed, WEIGHT_SCALE[size]).items()}
    entities, relations = RADGRAPH_LABELS["radgraph" if model_type == "radgraph" else "xl"]
    directory = root / "radgraph" / model_type
    (directory / "vocabulary").mkdir(parents=True, exist_ok=True)
    _write_json(directory / "config.json", radgraph_config(model_type, base))
    (directory / "vocabulary" / "non_padded_namespaces.txt").write_text("*tags\n*labels\n", encoding="utf-8")
    (directory / "vocabulary" / f"{model_type}__ner_labels.txt").write_text(
        "\n" + "\n".join(entities) + "\n", encoding="utf-8"
    )
    (directory / "vocabulary" / f"{model_type}__relation_labels.txt").write_text(
        "\n".join(relations) + "\n", encoding="utf-8"
    )
    weights = radgraph_weights(
        model_type, encoder, config["hidden_size"], len(entities) + 1, len(relations), seed + 100, size
    )
    torch.save(weights, directory / "weights.th")
    deterministic_tar_gz(directory, snapshot(root, RRG) / f"{model_type}.tar.gz")


def build_ratescore(root: Path, size: str = "tiny") -> None:
    from safetensors.torch import save_file
    from transformers import AutoConfig, AutoModel, AutoModelForTokenClassification

    ner = snapshot(root, "Angelakeke/RaTE-NER-Deberta")
    shutil.copy(TOKENIZERS / "deberta" / "tokenizer.json", ner / "tokenizer.json")
    special = {
        "bos_token": "[CLS]",
        "cls_token": "[CLS]",
        "eos_token": "[SEP]",
        "mask_token": "[MASK]",
        "pad_token": "[PAD]",
        "sep_token": "[SEP]",
        "unk_token": "[UNK]",
    }
    _write_json(ner / "special_tokens_map.json", special)
    _write_json(
        ner / "tokenizer_config.json",
        {
            **special,
            "tokenizer_class": "DebertaV2Tokenizer",
            "do_lower_case": False,
            "split_by_punct": False,
            "vocab_type": "spm",
            "model_max_length": 512,
        },
    )
    _write_json(
        ner / "added_tokens.json",
        {"[MASK]": json.loads((ner / "tokenizer.json").read_text())["added_tokens"][-1]["id"]},
    )
    config = {
        "architectures": ["DebertaV2ForTokenClassification"],
        "model_type": "deberta-v2",
        **SIZES[size],
        "max_position_embeddings": 512,
        "relative_attention": True,
        "position_buckets": 256,
        "max_relative_positions": -1,
        "norm_rel_ebd": "layer_norm",
        "share_att_key": True,
        "pos_att_type": ["p2c", "c2p"],
        "position_biased_input": False,
        "type_vocab_size": 0,
        "layer_norm_eps": 1e-7,
        "pad_token_id": 0,
        "vocab_size": 704 if size == "tiny" else DEBERTA_V3_VOCAB,
        "hidden_act": "gelu",
        "id2label": dict(enumerate(RATE_LABELS)),
        "label2id": {label: i for i, label in enumerate(RATE_LABELS)},
    }
    _write_json(ner / "config.json", {**config, "id2label": {str(i): label for i, label in enumerate(RATE_LABELS)}})
    values = dict(config)
    model = AutoModelForTokenClassification.from_config(AutoConfig.for_model(values.pop("model_type"), **values))
    state = randomize(model.state_dict(), seed=3, scale=WEIGHT_SCALE[size])
    state["classifier.bias"] = torch.tensor([0.4, 0.6, 0.2, 0.5, 0.3, 0.5, 0.2, 0.4, 0.4, 0.6, 1.6])
    if size == "full":  # about a third of the tokens in an entity, every label found
        tokens = _encoder_outputs(
            ner,
            config,
            {k[len("deberta.") :]: v for k, v in state.items() if k.startswith("deberta.")},
            all_tokens=True,
        )
        offsets = torch.tensor([0.3, 0.0] * 5 + [2.2])
        state["classifier.weight"], state["classifier.bias"] = calibrated_head(
            tokens, state["classifier.weight"], offsets
        )
    save_file({k: v.contiguous() for k, v in state.items()}, str(ner / "model.safetensors"), metadata={"format": "pt"})

    encoder = snapshot(root, "FremyCompany/BioLORD-2023-C")
    words = [w for w in bert_vocab() if w not in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")]
    (encoder / "vocab.txt").write_text(
        "\n".join(["<s>", "<pad>", "</s>", "<unk>", "[UNK]", *words, "<mask>"]) + "\n", encoding="utf-8"
    )
    special = dict(bos_token="<s>", eos_token="</s>", cls_token="<s>", sep_token="</s>", pad_token="<pad>")
    special.update(unk_token="[UNK]", mask_token="<mask>")
    tokenizer_config = {"do_lower_case": True, "tokenizer_class": "MPNetTokenizer", "model_max_length": 512}
    _write_json(encoder / "tokenizer_config.json", {**tokenizer_config, **special})
    _write_json(encoder / "special_tokens_map.json", special)
    config = {
        "architectures": ["MPNetModel"],
        "model_type": "mpnet",
        **SIZES[size],
        "max_position_embeddings": 514,
        "layer_norm_eps": 1e-5,
        "pad_token_id": 1,
        "bos_token_id": 0,
        "eos_token_id": 2,
        "relative_attention_num_buckets": 32,
        "vocab_size": len(words) + 6,
        "hidden_act": "gelu",
    }
    _write_json(encoder / "config.json", config)
    values = dict(config)
    model = AutoModel.from_config(AutoConfig.for_model(values.pop("model_type"), **values))
    save_file(
        {k: v.contiguous() for k, v in randomize(model.state_dict(), seed=4, scale=WEIGHT_SCALE[size]).items()},
        str(encoder / "model.safetensors"),
        metadata={"format": "pt"},
    )


def build_bertscore(root: Path) -> None:
    """distilroberta-base, RadCliQ's BERTScore encoder: RoBERTa, 6 layers, the published 50,265-row embedding; a
    byte-level BPE tokenizer of BERTSCORE_BPE_PIECES pieces trained on the bundled IU reports, which splits them into
    about as many tokens per word as a web-trained BPE does (1.54 here; SmolLM2's GPT-2-style BPE gives 1.57)."""
    from safetensors.torch import save_file
    from tokenizers import ByteLevelBPETokenizer
    from transformers import AutoConfig, AutoModel

    from radmetrics.data_builders.corpus.corpora import iu_xray_corpus

    path = snapshot(root, "distilroberta-base")
    tokenizer = ByteLevelBPETokenizer()
    tokenizer.train_from_iterator(
        [r.text for r in iu_xray_corpus()],
        vocab_size=BERTSCORE_BPE_PIECES,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
        show_progress=False,
    )
    tokenizer.save_model(str(path))  # vocab.json, merges.txt
    special = {
        "bos_token": "<s>",
        "eos_token": "</s>",
        "cls_token": "<s>",
        "sep_token": "</s>",
        "pad_token": "<pad>",
        "unk_token": "<unk>",
        "mask_token": "<mask>",
    }
    _write_json(
        path / "tokenizer_config.json", {**special, "tokenizer_class": "RobertaTokenizer", "model_max_length": 512}
    )
    _write_json(path / "special_tokens_map.json", special)
    config = {
        "architectures": ["RobertaModel"],
        "model_type": "roberta",
        **SIZES["full"],
        "num_hidden_layers": 6,
        "vocab_size": ROBERTA_VOCAB,
        "max_position_embeddings": 514,
        "type_vocab_size": 1,
        "layer_norm_eps": 1e-5,
        "pad_token_id": 1,
        "bos_token_id": 0,
        "eos_token_id": 2,
        "hidden_act": "gelu",
        "initializer_range": 0.02,
    }
    _write_json(path / "config.json", config)
    values = dict(config)
    model = AutoModel.from_config(AutoConfig.for_model(values.pop("model_type"), **values), add_pooling_layer=False)
    state = randomize(
        {k: v for k, v in model.state_dict().items() if not k.endswith("position_ids")},
        seed=5,
        scale=WEIGHT_SCALE["full"],
    )
    save_file(
        {k: v.contiguous() for k, v in state.items()}, str(path / "model.safetensors"), metadata={"format": "pt"}
    )


def build_distilbert(root: Path) -> None:
    """distilbert-base-uncased, the encoder of RadEval 2.2.1's `bertscore` key (layer 5, no idf, rescaled): DistilBERT,
    6 layers, 768 wide, bert-base-uncased's 30,522-piece WordPiece vocabulary (the bundled MiniLM's, the same file).
    Unlike the other artefacts its keys are not the published file's: the bare `DistilBertModel` that bert-score loads
    through AutoModel, without the published checkpoint's `distilbert.` prefix and masked-LM head (which AutoModel
    drops).
    """
    from safetensors.torch import save_file

    path, vocab = snapshot(root, "distilbert-base-uncased"), bert_vocab()
    config = {
        "architectures": ["DistilBertForMaskedLM"],
        "model_type": "distilbert",
        "vocab_size": len(vocab),
        "dim": 768,
        "hidden_dim": 3072,
        "n_layers": 6,
        "n_heads": 12,
        "max_position_embeddings": 512,
        "activation": "gelu",
        "dropout": 0.1,
        "attention_dropout": 0.1,
        "sinusoidal_pos_embds": False,
        "initializer_range": 0.02,
        "pad_token_id": 0,
    }
    _write_json(path / "config.json", config)
    write_uncased_wordpiece(path, vocab, "DistilBertTokenizer")
    state = encoder_state(config, seed=6, scale=WEIGHT_SCALE["full"])
    save_file(
        {k: v.contiguous() for k, v in state.items()}, str(path / "model.safetensors"), metadata={"format": "pt"}
    )


def build_green(root: Path) -> None:
    from safetensors.torch import save_file
    from tokenizers import Tokenizer
    from transformers import AutoConfig, AutoModelForCausalLM

    from radmetrics.inference.metrics.green.released import CHAT_TEMPLATE

    vocab_size = Tokenizer.from_file(str(TOKENIZERS / "llama" / "tokenizer.json")).get_vocab_size()
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": vocab_size,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "max_position_embeddings": 4096,
        "rms_norm_eps": 1e-5,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "tie_word_embeddings": False,
        "use_cache": False,
        "rope_theta": 10000.0,
        "torch_dtype": "bfloat16",
    }
    values = dict(config)
    model = AutoModelForCausalLM.from_config(AutoConfig.for_model(values.pop("model_type"), **values))
    state = {k: v.to(torch.bfloat16).contiguous() for k, v in randomize(model.state_dict(), seed=5, scale=0.2).items()}
    for repo_id in GREEN_REPOS:
        path = snapshot(root, repo_id)
        _write_json(path / "config.json", config)
        _write_json(path / "generation_config.json", {"bos_token_id": 1, "eos_token_id": 2})
        save_file(state, str(path / "model.safetensors"), metadata={"format": "pt"})
        shutil.copy(TOKENIZERS / "llama" / "tokenizer.json", path / "tokenizer.json")
        _write_json(
            path / "tokenizer_config.json",
            {
                "tokenizer_class": "LlamaTokenizer",
                "add_bos_token": True,
                "add_eos_token": False,
                "legacy": False,
                "bos_token": "<s>",
                "eos_token": "</s>",
                "unk_token": "<unk>",
                "pad_token": "<unk>",
                "clean_up_tokenization_spaces": False,
                "model_max_length": 4096,
                "chat_template": CHAT_TEMPLATE,
            },
        )
        _write_json(
            path / "special_tokens_map.json",
            {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "pad_token": "<unk>"},
        )


CRIMSON_REPO = "rajpurkarlab/medgemma-4b-it-crimson"


def build_crimson(root: Path, generation_config: dict | None = None, stop_at_once: bool = False) -> Path:
    """CRIMSON's released model (rajpurkarlab/medgemma-4b-it-crimson) in its published format: MedGemma-4B-it's text
    decoder, fine-tuned and saved alone (its model card's tag: gemma3_text, a Gemma3ForCausalLM with sliding and full
    attention layers), tiny, with the look-alike Gemma tokenizer, Gemma 3's special tokens and chat template.
    `generation_config`: written as generation_config.json (None: none, so the reference generates greedily up to
    8,192 new tokens); `stop_at_once`: an untied output layer whose every argmax is an end-of-turn token, so such a
    generation ends at its first token."""
    from safetensors.torch import save_file
    from tokenizers import Tokenizer
    from transformers import Gemma3ForCausalLM, Gemma3TextConfig

    from radmetrics.training.lookalike import GEMMA3_CHAT_TEMPLATE

    tokenizer = Tokenizer.from_file(str(TOKENIZERS / "gemma" / "tokenizer.json"))
    ids = {name: tokenizer.token_to_id(name) for name in ("<pad>", "<eos>", "<bos>", "<end_of_turn>")}
    config = {
        "architectures": ["Gemma3ForCausalLM"],
        "model_type": "gemma3_text",
        "vocab_size": tokenizer.get_vocab_size(),
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 1,
        "head_dim": 16,
        "query_pre_attn_scalar": 16,
        "sliding_window": 512,
        "layer_types": ["sliding_attention", "full_attention"],
        "max_position_embeddings": 131072,
        "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
        "bos_token_id": ids["<bos>"],
        "eos_token_id": [ids["<eos>"], ids["<end_of_turn>"]],
        "pad_token_id": ids["<pad>"],
        "tie_word_embeddings": not stop_at_once,
        "torch_dtype": "bfloat16",
    }
    values = {k: v for k, v in config.items() if k not in ("architectures", "model_type", "torch_dtype")}
    model = Gemma3ForCausalLM(Gemma3TextConfig(**values))
    state = randomize(model.state_dict(), seed=6, scale=0.2)
    if stop_at_once:  # the last norm keeps one dimension; its sign picks <eos> or <end_of_turn>
        state["model.norm.weight"] = torch.full((config["hidden_size"],), -1.0)
        state["model.norm.weight"][0] = 1.0
        head = torch.zeros(config["vocab_size"], config["hidden_size"])
        head[ids["<eos>"], 0], head[ids["<end_of_turn>"], 0] = 10.0, -10.0
        state["lm_head.weight"] = head
    else:
        state.pop("lm_head.weight", None)  # tied to the embedding
    state = {k: v.to(torch.bfloat16).contiguous() for k, v in state.items()}
    path = snapshot(root, CRIMSON_REPO)
    _write_json(path / "config.json", config)
    if generation_config is not None:
        _write_json(path / "generation_config.json", generation_config)
    save_file(state, str(path / "model.safetensors"), metadata={"format": "pt"})
    shutil.copy(TOKENIZERS / "gemma" / "tokenizer.json", path / "tokenizer.json")
    special = {"bos_token": "<bos>", "eos_token": "<eos>", "unk_token": "<unk>", "pad_token": "<pad>"}
    _write_json(
        path / "tokenizer_config.json",
        {
            **special,
            "tokenizer_class": "GemmaTokenizer",
            "add_bos_token": True,
            "add_eos_token": False,
            "clean_up_tokenization_spaces": False,
            "model_max_length": 1000000000000000019884624838656,
            "padding_side": "left",
            "chat_template": GEMMA3_CHAT_TEMPLATE,
        },
    )
    _write_json(path / "special_tokens_map.json", special)
    return path


def build(root: str | Path) -> Path:
    root = Path(root)
    build_chexbert(root)
    for seed, model_type in enumerate(RADGRAPH_BASES, start=10):
        build_radgraph(root, model_type, seed)
    build_ratescore(root)
    build_green(root)
    return root


FULL_ARTEFACTS = {  # each full-size look-alike by the name the benchmark's marker records, with its builder
    "chexbert": lambda root: build_chexbert(root, "full"),
    "radgraph-xl": lambda root: build_radgraph(root, "radgraph-xl", 11, "full"),
    "radgraph": lambda root: build_radgraph(root, "radgraph", 12, "full"),
    "ratescore": lambda root: build_ratescore(root, "full"),
    "distilroberta-base": build_bertscore,
    "distilbert-base-uncased": build_distilbert,
}


def build_full(root: str | Path, names=tuple(FULL_ARTEFACTS)) -> Path:
    """Published-size look-alikes of the artefacts whose scoring speed is benchmarked (`names`, default all): CheXbert
    (bert-base), RadGraph-XL and the original RadGraph (BERT-base DyGIE models; RadCliQ uses the original), RaTEScore
    (DeBERTa-v3-base NER, MPNet-base BioLORD), RadCliQ's BERTScore encoder (distilroberta-base) and RadEval's
    `bertscore` encoder (distilbert-base-uncased)."""
    root = Path(root)
    for name in names:
        FULL_ARTEFACTS[name](root)
    return root


def digest(root: str | Path) -> str:
    """sha256 over every file's relative path and content."""
    root = Path(root)
    total = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")):
        total.update(path.relative_to(root).as_posix().encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return total.hexdigest()


if __name__ == "__main__":
    import sys

    print(digest(build(sys.argv[1])))
