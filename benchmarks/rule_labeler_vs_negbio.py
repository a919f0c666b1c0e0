"""Per-label F1 of the CheXpert-style rule labeler against NegBio's manual gold on IU X-ray.

    python benchmarks/rule_labeler_vs_negbio.py     (writes benchmarks/results/rule_labeler_vs_negbio.json)
"""

import json
import platform
from pathlib import Path

from radmetrics.data_builders.corpora import bundled_path
from radmetrics.data_builders.labeler_eval import f1_against_negbio

if __name__ == "__main__":
    test_ids = {line.strip().removeprefix("CXR") for line in bundled_path("iu_xray", "negbio_openi_testset_ids.txt").read_text().splitlines() if line.strip()}
    results = {
        "machine": f"{platform.machine()} {platform.processor() or ''} ({platform.system()})".strip(),
        "all_reports": f1_against_negbio(),
        "all_reports_uncertain_as_positive": f1_against_negbio(uncertain_as_positive=True),
        "negbio_test_subset": f1_against_negbio(test_ids),
    }
    out = Path(__file__).resolve().parent / "results" / "rule_labeler_vs_negbio.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    for name in ("all_reports", "negbio_test_subset"):
        r = results[name]
        print(f"\n{name}: {r['reports']} reports, macro F1 {r['macro_f1']:.3f}")
        for label, v in r["per_label"].items():
            print(f"  {label:18s} P {v['precision']:.3f} R {v['recall']:.3f} F1 {v['f1']:.3f} (n={v['support']})")
