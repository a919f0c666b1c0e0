"""The checks recipes run on their data before a tokenizer or a model is built (training/common/record_checks.py)."""

import pytest
from datasets import Dataset, DatasetDict

from radmetrics.training.common.record_checks import RecordFormatError, check_columns, check_silver_columns


def splits(**columns):
    return DatasetDict({s: Dataset.from_dict(columns) for s in ("train", "validation", "test")})


def test_a_dataset_without_the_columns_a_recipe_reads_is_refused_naming_the_fix():
    with pytest.raises(RecordFormatError, match=r"lacks column\(s\) \['ner_tags', 'spans'\].*--labelers rate_ner"):
        check_silver_columns(splits(tokens=[["a"]]), "rate_ner", "silver/rate_ner/hf")
    check_silver_columns(splits(tokens=[["a"]], ner_tags=[["O"]], spans=[[]]), "rate_ner", "silver/rate_ner/hf")
    with pytest.raises(RecordFormatError, match="the train split holds no records: build it"):
        check_columns(splits(text=[]), ("text",), "corpus/hf", "build it with `radmetrics data pretrain-corpus`")
