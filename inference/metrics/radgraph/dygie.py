"""The released RadGraph extractors (StanfordAIMI/RRG_scorers `radgraph`, `radgraph-xl`, `modern-radgraph-xl`),
run as radgraph==0.1.18 runs them: DyGIE++ (Wadden et al. 2019) inference for entities and relations.

What the reference does, and this module reproduces (radgraph 0.1.18 `RadGraph`, its vendored allennlp/dygie):
- words: one "sentence" per report. `radgraph` splits punctuation off with its regex; the XL models use
  `radgraph_xl_preprocess_report` (escaped-character clean-up, whitespace collapsed, `\\w+|[^\\w\\s]+` tokens,
  five punctuation fix-ups). Nothing is lower-cased. A blank report gets an empty annotation (F1RadGraph scores a
  pair with an empty report 0 without running the model; on a whitespace-only report radgraph 0.1.18 fails).
- wordpieces: each word tokenised alone; the sequence is cut into chunks of `segment_length - 2` wordpieces and each
  chunk framed by the tokenizer's special tokens (a generic `PreTrainedTokenizerFast`, the ModernBERT case, adds
  none, while word offsets still assume a leading [CLS]: each word then reads the next position, as in the
  reference). Sequences longer than `segment_length` (the config's `max_length`) are folded into segments and
  unfolded after the transformer.
- word vectors: the mean of the last layer over each word's wordpieces (zero for a word with none).
- spans: every span of up to `max_span_width` words, represented as [first word; last word; width embedding].
- entities: feed-forward scores per label, a zero null score prepended, argmax; every non-null span is kept
  (overlapping and nested ones too).
- relations: spans pruned to ceil(words x spans_per_word) by a mention score (kept in text order), every ordered
  pair (a span with itself too) scored as [a; b; a*b] plus both mention scores, a zero null score prepended.
- annotation dict: entities numbered in span order; a relation whose object span is not an entity is dropped.

Weights are read with `torch.load(weights_only=True)`. The coreference and event modules present in the published
weights are unused by these models (their loss weights are 0) and are not loaded.
`DyGIEModel` is registered with the Auto classes (`model_type = "radmetrics_dygie"`), so a converted artefact
(`radmetrics weights convert`) loads with `AutoModel.from_pretrained`.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import torch
from torch import nn
from transformers import AutoConfig, AutoModel, PreTrainedModel

from ...files import atomic
from ...loading.cache import radmetrics_cache
from ...loading.checkpoint import load_manifest
from ...loading.hub import inference_device, load_tokenizer
from ...loading.released import fetch, identify, resolve_model_dir, sha256_of
from ...models.batching import equal_length_batches
from ...models.wrapped_encoder import WrappedEncoderConfig

XL_MODEL_TYPES = ("radgraph-xl", "modern-radgraph-xl")
_RADGRAPH_PUNCTUATION = re.compile(r"(?<! )(?=[/,:.!?()])|(?<=[/,:.!?()])(?! )")  # the reference's [/,-,:,.,!?()]
_WORD_PUNCT = re.compile(r"\w+|[^\w\s]+")  # nltk.wordpunct_tokenize
_UNUSED_MODULES = ("_coref.", "_events.")
_PUBLISHED_PREFIX = {
    "_endpoint_span_extractor._span_width_embedding.": "width_embedding.",
    "_embedder.token_embedder_bert._matched_embedder.transformer_model.": "encoder.",
}


class DyGIEError(RuntimeError):
    pass


def radgraph_words(report: str, model_type: str) -> list[str]:
    """The words radgraph 0.1.18 feeds its model (utils.preprocess_reports)."""
    if model_type == "radgraph":
        return _RADGRAPH_PUNCTUATION.sub(" ", report).split()
    text = (
        report.replace("\\n", "  ")
        .replace("\\f", "  ")
        .replace("\\u2122", "      ")
        .replace("\n", " ")
        .replace('\\"', "``")
    )
    text = " ".join(_WORD_PUNCT.findall(re.sub(r"\s+", " ", text)))
    for old, new in ((").", ") ."), ("%.", "% ."), (".'", ". '"), ("%,", "% ,"), ("%)", "% )")):
        text = text.replace(old, new)
    return text.split()


class DyGIEConfig(WrappedEncoderConfig):
    model_type = "radmetrics_dygie"

    def __init__(
        self,
        encoder: dict | None = None,
        dataset: str = "radgraph-xl",
        entity_labels: list[str] | None = None,
        relation_labels: list[str] | None = None,
        max_span_width: int = 8,
        feature_size: int = 20,
        feedforward_layers: int = 2,
        feedforward_hidden: int = 150,
        relation_spans_per_word: float = 0.5,
        segment_length: int = 512,
        chunk_special_tokens: bool = True,
        base_model: str | None = None,
        **kwargs,
    ):
        super().__init__(encoder=encoder, **kwargs)
        self.dataset = dataset  # the reference's model_type, which also picks the word preprocessing
        self.entity_labels = list(entity_labels or [""])  # index 0 is the null label ""
        self.relation_labels = list(relation_labels or [])  # no null entry: the scorer prepends one
        self.max_span_width = max_span_width
        self.feature_size = feature_size
        self.feedforward_layers = feedforward_layers
        self.feedforward_hidden = feedforward_hidden
        self.relation_spans_per_word = relation_spans_per_word
        self.segment_length = segment_length  # allennlp's max_length (a name PretrainedConfig keeps for generation)
        self.chunk_special_tokens = chunk_special_tokens  # False for a generic PreTrainedTokenizerFast (ModernBERT)
        self.base_model = base_model


def _feed_forward(inputs: int, hidden: int, layers: int) -> nn.Sequential:
    """allennlp FeedForward: Linear + ReLU per layer (dropout is inactive at inference)."""
    modules: list[nn.Module] = []
    for n in range(layers):
        modules += [nn.Linear(inputs if n == 0 else hidden, hidden), nn.ReLU()]
    return nn.Sequential(*modules)


class DyGIEModel(PreTrainedModel):
    config_class = DyGIEConfig
    base_model_prefix = "encoder"

    def __init__(self, config: DyGIEConfig):
        super().__init__(config)
        self.encoder = AutoModel.from_config(config.encoder_config())
        hidden = self.encoder.config.hidden_size
        span = 2 * hidden + config.feature_size
        ff, layers = config.feedforward_hidden, config.feedforward_layers
        self.width_embedding = nn.Embedding(config.max_span_width, config.feature_size)
        self.ner_feedforward = _feed_forward(span, ff, layers)
        self.ner_scorer = nn.Linear(ff, len(config.entity_labels) - 1)
        self.mention_feedforward = _feed_forward(span, ff, layers)
        self.mention_scorer = nn.Linear(ff, 1)
        self.relation_feedforward = _feed_forward(3 * span, ff, layers)
        self.relation_scorer = nn.Linear(ff, len(config.relation_labels))
        self.post_init()

    def span_embeddings(self, words: torch.Tensor, spans: torch.Tensor) -> torch.Tensor:
        """words (n, H), spans (N, 2) inclusive -> (N, 2H + feature_size)."""
        width = self.width_embedding(spans[:, 1] - spans[:, 0])
        return torch.cat([words[spans[:, 0]], words[spans[:, 1]], width], dim=-1)

    def entity_labels(self, span_embeddings: torch.Tensor) -> torch.Tensor:
        scores = self.ner_scorer(self.ner_feedforward(span_embeddings))
        scores = torch.cat([scores.new_zeros(scores.size(0), 1), scores], dim=-1)
        return scores.max(dim=-1).indices

    def relations(self, span_embeddings: torch.Tensor, n_words: int) -> tuple[torch.Tensor, torch.Tensor]:
        """(indices of the kept spans in text order, (K, K) relation label index, -1 = none)."""
        mention = self.mention_scorer(self.mention_feedforward(span_embeddings)).unsqueeze(0)  # (1, N, 1)
        keep = int(torch.ceil(torch.tensor(n_words, dtype=torch.float32) * self.config.relation_spans_per_word).item())
        top = mention.topk(max(keep, 1), dim=1).indices.squeeze(-1)  # the reference's Pruner, same call and shape
        top = torch.sort(top, dim=1).values[0]
        kept, scores = span_embeddings[top], mention[0, top]  # (K, S), (K, 1)
        k = kept.size(0)
        first, second = kept.unsqueeze(1).repeat(1, k, 1), kept.unsqueeze(0).repeat(k, 1, 1)
        pairs = torch.cat([first, second, kept.unsqueeze(1) * kept.unsqueeze(0)], dim=-1)
        relation = self.relation_scorer(self.relation_feedforward(pairs.view(k * k, -1))).view(k, k, -1)
        relation = relation + (scores.unsqueeze(1) + scores.unsqueeze(0))
        relation = torch.cat([relation.new_zeros(k, k, 1), relation], dim=-1)
        labels = relation.max(dim=-1).indices - 1
        if keep < k:  # the reference's keep mask (only when a sentence has no words)
            labels[:, keep:] = -1
        return top, labels


def published_to_state_dict(state: dict, dataset: str, layers: int) -> dict:
    """weights.th keys (DyGIE module names) -> `DyGIEModel` keys; unused coref/event weights dropped."""
    feed_forwards = {
        f"_ner._ner_scorers.{dataset}__ner_labels.0._module.": "ner_feedforward.",
        f"_relation._mention_pruners.{dataset}__relation_labels._scorer.0._module.": "mention_feedforward.",
        f"_relation._relation_feedforwards.{dataset}__relation_labels.": "relation_feedforward.",
    }
    linears = {
        f"_ner._ner_scorers.{dataset}__ner_labels.1._module.": "ner_scorer.",
        f"_relation._mention_pruners.{dataset}__relation_labels._scorer.1._module.": "mention_scorer.",
        f"_relation._relation_scorers.{dataset}__relation_labels.": "relation_scorer.",
    }
    renamed, unknown = {}, []
    for key, value in state.items():
        if key.startswith(_UNUSED_MODULES) or key.endswith("position_ids"):
            continue
        for old, new in (*_PUBLISHED_PREFIX.items(), *linears.items()):
            if key.startswith(old):
                renamed[new + key[len(old) :]] = value
                break
        else:
            for old, new in feed_forwards.items():
                match = re.fullmatch(re.escape(old) + r"_linear_layers\.(\d+)\.(weight|bias)", key)
                if match and int(match.group(1)) < layers:
                    renamed[f"{new}{2 * int(match.group(1))}.{match.group(2)}"] = value
                    break
            else:
                unknown.append(key)
    if unknown:
        raise DyGIEError(f"weights.th has weights this DyGIE model does not know: {unknown[:5]}")
    return renamed


def _read_labels(vocabulary: Path, dataset: str) -> tuple[list[str], list[str]]:
    """allennlp Vocabulary files: one label per line; the NER file starts with the null label "" (an empty line)."""

    def lines(name: str) -> list[str]:
        path = vocabulary / f"{dataset}__{name}.txt"
        if not path.is_file():
            raise DyGIEError(
                f"{path} not found (vocabulary/ of a RadGraph model has {dataset}__ner_labels.txt "
                f"and {dataset}__relation_labels.txt)"
            )
        text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
        return (text[:-1] if text.endswith("\n") else text).split("\n")

    entities, relations = lines("ner_labels"), lines("relation_labels")
    if entities[0] != "":
        raise DyGIEError(f"{vocabulary}/{dataset}__ner_labels.txt must start with the null label (an empty line)")
    return entities, relations


def _chunk_special_tokens(base: Path) -> bool:
    """Whether `build_inputs_with_special_tokens` adds specials to a chunk: every model-specific tokenizer class
    does; the generic PreTrainedTokenizerFast (what ModernBERT declares) does not."""
    tokenizer_config = base / "tokenizer_config.json"
    declared = (
        json.loads(tokenizer_config.read_text(encoding="utf-8")).get("tokenizer_class")
        if tokenizer_config.is_file()
        else None
    )
    if declared:
        return declared != "PreTrainedTokenizerFast"
    return json.loads((base / "config.json").read_text(encoding="utf-8")).get("model_type") != "modernbert"


def unpack(path: str | Path) -> Path:
    """A RadGraph tarball is unpacked once into radmetrics' cache; a directory is used as it is."""
    import tarfile

    path = Path(path)
    if path.is_dir():
        return path
    target = radmetrics_cache() / "radgraph" / f"{path.name.removesuffix('.tar.gz')}-{sha256_of(path)[:16]}"

    def extract(staging: Path) -> None:
        with tarfile.open(path, "r:gz") as archive:
            archive.extractall(staging, filter="data")

    return atomic.built_once(target, extract, lambda folder: (folder / "weights.th").is_file())


def load_released_radgraph(path: str | Path, base_model: str | None = None) -> tuple[DyGIEModel, object]:
    """(DyGIEModel, the transformer's tokenizer) from a RadGraph tarball or its unpacked folder
    (config.json, weights.th, vocabulary/). The transformer's config and tokenizer come from the Hub id named
    in config.json (through the local cache) unless `base_model` gives a directory."""
    directory = unpack(path)
    try:
        config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        model, reader = config["model"], config["dataset_reader"]
        embedder = model["embedder"]["token_embedders"]["bert"]
        spans_per_word = model["modules"]["relation"]["spans_per_word"]
    except (OSError, KeyError, json.JSONDecodeError) as exc:
        raise DyGIEError(f"{directory}/config.json is not a RadGraph (DyGIE) config: {exc!r}") from exc
    vocabulary = directory / "vocabulary"
    datasets = sorted(p.name[: -len("__ner_labels.txt")] for p in vocabulary.glob("*__ner_labels.txt"))
    if len(datasets) != 1:
        raise DyGIEError(f"{vocabulary}: expected one <model_type>__ner_labels.txt, found {datasets}")
    dataset = datasets[0]
    entities, relations = _read_labels(vocabulary, dataset)
    base = resolve_model_dir(base_model or embedder["model_name"], f"the released RadGraph model {directory.name}")
    feed_forward = model["feedforward_params"]
    dygie_config = DyGIEConfig(
        encoder=AutoConfig.from_pretrained(base).to_dict(),
        dataset=dataset,
        entity_labels=entities,
        relation_labels=relations,
        max_span_width=reader["max_span_width"],
        feature_size=model["feature_size"],
        feedforward_layers=feed_forward["num_layers"],
        feedforward_hidden=feed_forward["hidden_dims"],
        relation_spans_per_word=spans_per_word,
        segment_length=embedder["max_length"],
        chunk_special_tokens=_chunk_special_tokens(base),
        base_model=embedder["model_name"],
    )
    network = DyGIEModel(dygie_config)
    state = torch.load(directory / "weights.th", map_location="cpu", weights_only=True)
    missing, unexpected = network.load_state_dict(
        published_to_state_dict(state, dataset, feed_forward["num_layers"]), strict=False
    )
    missing = [k for k in missing if not k.startswith("encoder.pooler.")]  # BERT's pooler is unused
    if missing or unexpected:
        raise DyGIEError(
            f"{directory}/weights.th does not fit its config (missing {missing[:5]}, unexpected {unexpected[:5]})"
        )
    return network.eval(), load_tokenizer(base, min_vocab=50)


class RadGraphDyGIE:
    """A released RadGraph model over report text -> the radgraph package's annotation dicts."""

    def __init__(self, model: DyGIEModel, tokenizer, batch_size: int = 32):
        self.model, self.tokenizer = model.eval().to(inference_device()), tokenizer
        self.batch_size = batch_size  # reports of equal wordpiece length per encoder call
        ids = tokenizer("a")["input_ids"]
        bare = tokenizer("a", add_special_tokens=False)["input_ids"]
        at = ids.index(bare[0])
        self.start_ids, self.end_ids = ids[:at], ids[at + len(bare) :]

    @classmethod
    def from_component(cls, path: str, base_model: str | None = None) -> RadGraphDyGIE:
        path = fetch(path)
        if identify("radgraph", path) == "released":
            return cls(*load_released_radgraph(path, base_model))
        directory, _ = load_manifest(path, "radgraph_dygie")
        return cls(DyGIEModel.from_pretrained(directory), load_tokenizer(directory, min_vocab=50))

    def _piece_table(self, reports: list[list[str]]) -> dict[str, list[int]]:
        """Each distinct word's wordpieces, from one batched tokenizer call: the reference tokenizes word by word, and
        reports share most of their words (74,049 words of 1,475 IU reports took 6 of RadGraph's 17 s on an H200)."""
        distinct = list(dict.fromkeys(word for words in reports for word in words))
        normalized = [
            word[1:] if word in ("/.", "/?") else word for word in distinct
        ]  # the DyGIE reader's _normalize_word
        return (
            dict(zip(distinct, self.tokenizer(normalized, add_special_tokens=False)["input_ids"])) if distinct else {}
        )

    def _wordpieces(self, words: list[str], table: dict[str, list[int]]) -> tuple[list[int], list[tuple[int, int]]]:
        """The indexer: token ids (chunked and framed) and each word's inclusive wordpiece offsets (`table`: each
        word's pieces, from `_piece_table`)."""
        config = self.model.config
        ids, offsets = [], []
        for word in words:
            pieces = table[word]
            start = len(self.start_ids) + len(ids)
            offsets.append((start, start + len(pieces) - 1) if pieces else (-1, -1))
            ids.extend(pieces)
        width = config.segment_length - len(self.start_ids) - len(self.end_ids)
        if not config.chunk_special_tokens:
            return ids, offsets
        framed = [self.start_ids + ids[i : i + width] + self.end_ids for i in range(0, len(ids), width)]
        return [i for chunk in framed for i in chunk], offsets

    def _wordpiece_embeddings(self, ids: list[int]) -> torch.Tensor:
        """The embedder: the last layer, folded into `segment_length` segments when longer (allennlp's unfold)."""
        length, segment = len(ids), self.model.config.segment_length
        tensor = torch.tensor([ids], device=self.model.device)
        if length <= segment:
            return self.model.encoder(
                input_ids=tensor, attention_mask=torch.ones_like(tensor).float()
            ).last_hidden_state[0]
        n_start, n_end = len(self.start_ids), len(self.end_ids)
        segments = math.ceil(length / segment)
        padded = nn.functional.pad(tensor, [0, segments * segment - length]).view(segments, segment)
        mask = nn.functional.pad(torch.ones_like(tensor), [0, segments * segment - length]).view(segments, segment)
        states = self.model.encoder(input_ids=padded, attention_mask=mask.float()).last_hidden_state
        flat = states.reshape(1, segments * segment, -1)
        end_index = torch.tensor([[length - 1 - i for i in range(n_end)]], device=flat.device)
        start_states, end_states = flat[:, :n_start], flat[0, end_index[0]].unsqueeze(0)
        body = states.unsqueeze(0)[:, :, n_start : segment - n_end].reshape(1, -1, flat.size(-1))
        end_index = end_index - (segments * (n_start + n_end) - n_end)
        body = torch.cat([body, torch.zeros_like(end_states)], 1)
        body.scatter_(1, end_index.unsqueeze(-1).expand_as(end_states), end_states)
        return torch.cat([start_states, body], 1)[0, : length - (segments - 1) * (n_start + n_end)]

    def _word_vectors(self, pieces: torch.Tensor, offsets: list[tuple[int, int]]) -> torch.Tensor:
        """Mean over each word's wordpieces (allennlp batched_span_select), zero where a word has none."""
        spans = torch.tensor(offsets, device=pieces.device)
        widths = spans[:, 1] - spans[:, 0]
        positions = torch.arange(int(widths.max()) + 1, device=pieces.device).view(1, -1)
        raw = spans[:, :1] + positions
        mask = (positions <= widths.unsqueeze(-1)) & (raw < pieces.size(0)) & (raw >= 0)
        selected = pieces[raw * mask] * mask.unsqueeze(-1)
        counts = mask.sum(1, keepdim=True)
        vectors = selected.sum(1) / torch.clamp_min(counts, 1)
        vectors[(counts == 0).expand(vectors.shape)] = 0
        return vectors

    def _encode(self, indexed: list[list[int]]) -> list[torch.Tensor]:
        """Each report's wordpiece states. Reports of one length share an encoder call with no padding, so every
        report's states are those of a call on it alone, as the reference runs it; longer than a segment, one by one.
        """
        if not indexed[0]:
            return [torch.zeros(0, self.model.encoder.config.hidden_size, device=self.model.device) for _ in indexed]
        if len(indexed[0]) > self.model.config.segment_length:
            return [self._wordpiece_embeddings(ids) for ids in indexed]
        tensor = torch.tensor(indexed, device=self.model.device)
        return list(
            self.model.encoder(input_ids=tensor, attention_mask=torch.ones_like(tensor).float()).last_hidden_state
        )

    def predict(
        self, words: list[str], pieces: torch.Tensor, offsets: list[tuple[int, int]]
    ) -> tuple[list[list], list[list]]:
        """(entities [start, end, label], relations [s1, e1, s2, e2, label]) of one report's words, from its
        wordpiece states."""
        config = self.model.config
        vectors = (
            self._word_vectors(pieces, offsets)
            if len(pieces)
            else torch.zeros(len(words), pieces.size(-1), device=pieces.device)
        )
        spans = torch.tensor(
            [(s, e) for s in range(len(words)) for e in range(s, min(s + config.max_span_width, len(words)))],
            device=self.model.device,
        )
        embedded = self.model.span_embeddings(vectors, spans)
        labels = self.model.entity_labels(embedded).tolist()
        entities = [[*spans[i].tolist(), config.entity_labels[label]] for i, label in enumerate(labels) if label != 0]
        top, relation = self.model.relations(embedded, len(words))
        kept = spans[top].tolist()
        relations = [
            [*kept[i], *kept[j], config.relation_labels[int(relation[i, j])]]
            for i, j in (relation >= 0).nonzero().tolist()
        ]
        return entities, relations

    def annotations(self, reports: list[str], progress: bool = False) -> list[dict]:
        """One annotation per report; each distinct report text is run once (repeated reports share the dict)."""
        from tqdm.auto import tqdm

        distinct = list(dict.fromkeys(reports))
        words = [radgraph_words(report, self.model.config.dataset) for report in distinct]
        found = {report: annotation_dict([], [], []) for report, w in zip(distinct, words) if not w}
        todo = [i for i, w in enumerate(words) if w]
        table = self._piece_table([words[i] for i in todo])
        indexed = [self._wordpieces(words[i], table) for i in todo]
        with (
            torch.inference_mode(),
            tqdm(total=len(distinct), desc="radgraph", unit="report", disable=not progress) as bar,
        ):
            bar.update(len(found))
            for batch in equal_length_batches([len(ids) for ids, _ in indexed], self.batch_size):
                for n, pieces in zip(batch, self._encode([indexed[n][0] for n in batch])):
                    report_words = words[todo[n]]
                    found[distinct[todo[n]]] = annotation_dict(
                        report_words, *self.predict(report_words, pieces, indexed[n][1])
                    )
                bar.update(len(batch))
        return [found[r] for r in reports]


def annotation_dict(words: list[str], entities: list[list], relations: list[list]) -> dict:
    """radgraph 0.1.18 `postprocess_reports`/`get_entity`: entities numbered in order, relations by object span."""
    spans = [e[:2] for e in entities]
    found = {}
    for n, (start, end, label) in enumerate(entities):
        linked = []
        for s1, e1, s2, e2, relation in relations:
            if [s1, e1] == [start, end] and [s2, e2] in spans:
                linked.append([relation, str(spans.index([s2, e2]) + 1)])
        found[str(n + 1)] = {
            "tokens": " ".join(words[start : end + 1]),
            "label": label,
            "start_ix": start,
            "end_ix": end,
            "relations": linked,
        }
    return {"text": " ".join(words), "entities": found, "data_source": None, "data_split": "inference"}


AutoConfig.register(DyGIEConfig.model_type, DyGIEConfig)
AutoModel.register(DyGIEConfig, DyGIEModel)
