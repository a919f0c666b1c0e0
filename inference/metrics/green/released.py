"""GREEN with the authors' released models (StanfordAIMI/GREEN-RadLlama2-7b and the others), generated as
radeval==2.2.1 `GREEN` does (its copy of Stanford-AIMI/GREEN, the version a user can install today):

- prompt: `green_prompt` (Stanford-AIMI/GREEN `make_prompt`, reports cut to 300 words) in a chat of a human turn
  and an empty gpt turn (`{"from", "value"}` keys), rendered with GREEN's own chat template, which replaces the
  tokenizer's, with the generation prompt;
- tokenizer: `add_eos_token=True`, pad token = EOS, left padding, special tokens added by the tokenizer, inputs
  truncated to 2,048 tokens;
- model: float16 on a GPU, float32 on CPU, eval mode; batches of 8 in input order; greedy `generate` with
  `max_length=2048` (prompt and answer together), EOS as the stop and pad token;
- response: the whole sequence decoded with special tokens skipped and tokenization spaces cleaned up, then the
  reference's `clean_responses` (the text after the last `<|assistant|>` and after `[Explanation]:`).

Where the reference stops: a prompt that fills the 2,048 tokens makes transformers 5 raise inside `generate`
and RadEval's whole call fails; here that pair gets no response (not scored, with the reason) and the others go on.
The released GREEN-RadLlama2-7b tokenizer is code in its repository (tokenization_chexagent.py), which RadEval runs
unconditionally; radmetrics runs repository code only with `trust_remote_code=True`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...loading.hub import inference_device
from .format import green_prompt
from .generation import truncate_words

CHAT_TEMPLATE = (
    "{% for message in messages %}\n"
    "{% if message['from'] == 'human' %}\n"
    "{{ '<|user|>\\n' + message['value'] + eos_token }}\n"
    "{% elif message['from'] == 'system' %}\n"
    "{{ '<|system|>\\n' + message['value'] + eos_token }}\n"
    "{% elif message['from'] == 'gpt' %}\n"
    "{{ '<|assistant|>\\n'  + message['value'] + eos_token }}\n"
    "{% endif %}\n"
    "{% if loop.last and add_generation_prompt %}\n"
    "{{ '<|assistant|>' }}\n"
    "{% endif %}\n"
    "{% endfor %}"
)
MAX_LENGTH = 2048
BATCH_SIZE = 8


def clean_response(text: str) -> str:
    """Stanford-AIMI/GREEN `clean_responses` (its `("a" or "b") in text` tests only the first string)."""
    if "[Explanation]:" in text:
        if "<|assistant|>" in text:
            text = text.split("<|assistant|>")[-1]
        if "[Explanation]:\n    <Explanation>\n" in text:
            text = text.split("[Explanation]:")[1]
        else:
            text = text.split("[Explanation]:")[-1]
    if "<|assistant|>" in text:
        text = text.split("<|assistant|>")[-1]
    return text.replace("</s>", "").replace("<unk>", "")


class RemoteCodeRequired(RuntimeError):
    pass


def tokenizer_is_code(path: str) -> bool:
    """Whether the model folder's tokenizer_config.json maps AutoTokenizer to code shipped in the repository."""
    import json
    from pathlib import Path

    config = Path(path) / "tokenizer_config.json"
    return config.is_file() and "AutoTokenizer" in json.loads(config.read_text(encoding="utf-8")).get("auto_map", {})


class ReleasedGreen:
    def __init__(self, path: str, name: str = "", trust_remote_code: bool = False, batch_size: int = BATCH_SIZE):
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if tokenizer_is_code(path) and not trust_remote_code:
            raise RemoteCodeRequired(
                f"the tokenizer of {name or path} is code in the model repository (RadEval runs it without asking; "
                "a tokenizer loaded without it could give other token ids); read it, then pass trust_remote_code "
                "(radmetrics score --trust-remote-code)"
            )
        tokenizer = AutoTokenizer.from_pretrained(
            path, add_eos_token=True, use_fast=True, padding_side="left", trust_remote_code=trust_remote_code
        )
        tokenizer.chat_template = CHAT_TEMPLATE
        tokenizer.pad_token = tokenizer.eos_token
        tokenizer.clean_up_tokenization_spaces = True
        self.device = inference_device()
        dtype = torch.float16 if self.device.startswith("cuda") else torch.float32
        # RadEval: trust_remote_code=False if "Phi" in the model id else True
        model_code = trust_remote_code and "Phi" not in (name or str(path))
        self.model = (
            AutoModelForCausalLM.from_pretrained(path, dtype=dtype, trust_remote_code=model_code)
            .eval()
            .to(self.device)
        )
        self.tokenizer, self.batch_size, self._torch = tokenizer, batch_size, torch

    def texts(self, references: Sequence[str], candidates: Sequence[str]) -> list[str]:
        chats = [
            [
                {"from": "human", "value": green_prompt(truncate_words(r), truncate_words(c))},
                {"from": "gpt", "value": ""},
            ]
            for r, c in zip(references, candidates)
        ]
        return [self.tokenizer.apply_chat_template(chat, tokenize=False, add_generation_prompt=True) for chat in chats]

    def prompt_ids(self, references: Sequence[str], candidates: Sequence[str]) -> list[list[int]]:
        """Each pair's prompt token ids as the reference feeds them to the model (before padding)."""
        return [
            self.tokenizer(text, truncation=True, max_length=MAX_LENGTH)["input_ids"]
            for text in self.texts(references, candidates)
        ]

    def responses(
        self, references: Sequence[str], candidates: Sequence[str], progress: bool = True
    ) -> tuple[list[str | None], list[str | None]]:
        """(cleaned responses, errors): None and a reason where a prompt leaves no room to answer."""
        from tqdm.auto import tqdm

        torch, texts = self._torch, self.texts(references, candidates)
        too_long = [len(self.tokenizer(t)["input_ids"]) >= MAX_LENGTH for t in texts]
        order = [i for i, long in enumerate(too_long) if not long]
        responses: list[str | None] = [None] * len(texts)
        bar = tqdm(total=len(order), desc="GREEN", unit="pair", disable=not progress)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            encoded = self.tokenizer(
                [texts[i] for i in batch], return_tensors="pt", padding=True, truncation=True, max_length=MAX_LENGTH
            ).to(self.device)
            with torch.no_grad():
                output = self.model.generate(
                    input_ids=encoded["input_ids"],
                    attention_mask=encoded["attention_mask"],
                    eos_token_id=self.tokenizer.eos_token_id,
                    pad_token_id=self.tokenizer.pad_token_id,
                    max_length=MAX_LENGTH,
                    do_sample=False,
                )
            for i, text in zip(batch, self.tokenizer.batch_decode(output, skip_special_tokens=True)):
                responses[i] = clean_response(text)
            bar.update(len(batch))
        bar.close()
        errors = [
            f"the prompt fills the reference's {MAX_LENGTH}-token limit (RadEval fails on it)" if long else None
            for long in too_long
        ]
        return responses, errors
