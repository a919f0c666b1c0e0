"""The labeler's training loss, shared by both stages: per head, -log P(allowed classes), averaged over the batch and
summed over the 14 heads. With one allowed class per head (stage 1's silver labels) it is CheXbert's summed
cross-entropy (Smit et al. 2020; stanfordmlgroup/CheXbert src/run_bert.py); stage 2's expert labels can allow several
classes (gold.py).

`class_weight_power` (0 = CheXbert's unweighted loss) weights each example's term on a head by how rare its target
classes are in training: class c of a head with n training examples and K classes seen gets (n / (K * count_c)) ** p
(p = 1: sklearn's "balanced" weights), an example the mean weight of its allowed classes, and the batch mean becomes
the weighted mean sum(w * loss) / sum(w), as `torch.nn.functional.cross_entropy(weight=...)` takes it. CheXbert has
190k silver reports; on IU X-ray's 1.9k a finding such as Pleural Effusion has a few dozen positives, and unweighted
training predicts it for no report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from transformers import Trainer

IGNORED_HEAD = -100  # a class id that trains nothing on its head: every class is allowed, so its loss term is 0


@dataclass
class ClassWeightArguments:
    class_weight_power: float = field(
        default=0.0,
        metadata={
            "help": (
                "weight examples by (n / (K * count))^p of their target classes per head; 0 = unweighted, as CheXbert"
            )
        },
    )


def one_hot_heads(labels, classes_per_head: list[int]):
    """reports x heads class ids -> reports x sum(classes) 0/1 masks: one allowed class per head, all for
    IGNORED_HEAD."""
    import torch

    masks = []
    for i, n in enumerate(classes_per_head):
        ignored = labels[:, i] == IGNORED_HEAD
        one_hot = torch.nn.functional.one_hot(labels[:, i].masked_fill(ignored, 0), n)
        masks.append(one_hot.masked_fill(ignored[:, None], 1))
    return torch.cat(masks, dim=-1)


def class_weights(allowed, classes_per_head: list[int], power: float):
    """Per-class weights (concatenated over heads) from the training set's allowed-class masks (module docstring)."""
    import numpy as np

    allowed = np.asarray(allowed, dtype=float)
    weights = []
    for head in np.split(allowed, np.cumsum(classes_per_head)[:-1], axis=1):
        head = head[head.sum(1) < head.shape[1]]  # an example that allows every class has no loss term on this head
        counts = head.sum(0)
        seen = counts > 0
        balanced = np.ones_like(counts)
        balanced[seen] = (len(head) / (seen.sum() * counts[seen])) ** power
        weights.append(balanced)
    return np.concatenate(weights)


def allowed_class_loss(logits, allowed, classes_per_head: list[int], weights=None):
    """Sum over heads of the (weighted) batch mean of -log P(allowed classes); one allowed class: cross-entropy. A head
    on which an example allows every class (IGNORED_HEAD) leaves that example out of the head's mean."""
    import torch

    loss = logits.new_zeros(())
    splits = (
        torch.split(logits, classes_per_head, -1),
        torch.split(allowed, classes_per_head, -1),
        torch.split(weights, classes_per_head, -1) if weights is not None else [None] * len(classes_per_head),
    )
    for head_logits, head_allowed, head_weights in zip(*splits):
        kept = head_logits.masked_fill(head_allowed == 0, float("-inf"))
        nll = torch.logsumexp(head_logits, -1) - torch.logsumexp(kept, -1)
        if head_weights is None:
            example = torch.ones_like(nll)
        else:
            example = (head_allowed * head_weights).sum(-1) / head_allowed.sum(-1)
        example = example * (head_allowed.sum(-1) < head_allowed.shape[-1])  # all classes allowed: not a term
        loss = loss + (example * nll).sum() / example.sum().clamp_min(1e-12)
    return loss


class AllowedClassTrainer(Trainer):
    """Trainer for the labeler's loss. `labels` are allowed-class masks, or class ids per head when
    `labels_are_classes`; with `class_weight_power` the loss is weighted by class_weights() of the training set. The
    loss is a batch mean, so the Trainer scales it for gradient accumulation (model_accepts_loss_kwargs off)."""

    def __init__(self, *args, class_weight_power: float = 0.0, labels_are_classes: bool = False, **kwargs):
        import torch

        super().__init__(*args, **kwargs)
        self.model_accepts_loss_kwargs = False
        self.labels_are_classes = labels_are_classes
        self.class_weights = None
        if class_weight_power:
            classes_per_head = list(self.model.config.classes_per_head)
            labels = torch.as_tensor(self.train_dataset["labels"])
            allowed = one_hot_heads(labels, classes_per_head) if labels_are_classes else labels
            self.class_weights = torch.as_tensor(class_weights(allowed, classes_per_head, class_weight_power))

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        classes_per_head = list(self.model.config.classes_per_head)
        allowed = one_hot_heads(labels, classes_per_head) if self.labels_are_classes else labels
        weights = self.class_weights.to(outputs["logits"]) if self.class_weights is not None else None
        loss = allowed_class_loss(outputs["logits"], allowed, classes_per_head, weights)
        return (loss, outputs) if return_outputs else loss
