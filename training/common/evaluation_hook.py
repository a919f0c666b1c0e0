"""Trainer evaluations that also compute the metric a component serves, not only the loss."""

from __future__ import annotations


class ComponentMetricEvaluation:
    """Trainer mixin: every evaluation adds `eval_<key>` for each number `component_eval(model)` returns (RadGraph's
    end-to-end entity and relation F1, GREEN's parse rate and MAE), logged next to the loss and available to
    `metric_for_best_model`. Single process only (each rank would redo the whole validation set, and ZeRO-3 holds
    a shard of the weights); the final evaluation reports the same numbers in every setting."""

    def __init__(self, *args, component_eval=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.component_eval = component_eval

    def evaluate(self, *args, **kwargs):
        metrics = super().evaluate(*args, **kwargs)
        if self.component_eval is not None and self.accelerator.num_processes == 1 and not self.is_deepspeed_enabled:
            extra = {
                f"eval_{k}": v
                for k, v in self.component_eval(self.model).items()
                if isinstance(v, (int, float)) and not isinstance(v, bool)
            }
            self.log(extra)
            metrics.update(extra)
        return metrics
