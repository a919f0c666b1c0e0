"""Agreement of the silver labelers with real gold.

- CheXpert-style rule labeler vs NegBio's manual labels on IU X-ray (per-label P/R/F1 on the shared labels),
  on all reports, with uncertain counted as positive, and on NegBio's 770-report test subset;
- RadGraph-style silver extractor vs the radgraph package's gold annotations (entities, relations). In-sample:
  the extractor's lexicon and rules were developed on these 10 gold reports, so the figure is optimistic and
  not a held-out estimate.

    python benchmarks/encoders/silver_labelers_vs_gold.py     (writes benchmarks/results/silver_labelers_vs_gold.json)
"""

import json
import platform
from pathlib import Path

from radmetrics.data_builders.agreement.labeler import f1_against_negbio
from radmetrics.data_builders.agreement.radgraph import agreement_with_gold
from radmetrics.data_builders.corpus.corpora import bundled_path

if __name__ == "__main__":
    test_ids = {
        line.strip().removeprefix("CXR")
        for line in bundled_path("iu_xray", "negbio_openi_testset_ids.txt").read_text().splitlines()
        if line.strip()
    }
    results = {
        "machine": f"{platform.machine()} {platform.processor() or ''} ({platform.system()})".strip(),
        "chexpert_rule_labeler_vs_negbio": {
            "all_reports": f1_against_negbio(),
            "all_reports_uncertain_as_positive": f1_against_negbio(uncertain_as_positive=True),
            "negbio_test_subset": f1_against_negbio(test_ids),
        },
        "radgraph_silver_vs_radgraph_gold_in_sample": agreement_with_gold(),
    }
    out = Path(__file__).resolve().parents[1] / "results" / "silver_labelers_vs_gold.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    for name in ("all_reports", "negbio_test_subset"):
        r = results["chexpert_rule_labeler_vs_negbio"][name]
        print(f"\nCheXpert rule labeler, {name}: {r['reports']} reports, macro F1 {r['macro_f1']:.3f}")
        for label, v in r["per_label"].items():
            print(f"  {label:18s} P {v['precision']:.3f} R {v['recall']:.3f} F1 {v['f1']:.3f} (n={v['support']})")
    rg = results["radgraph_silver_vs_radgraph_gold_in_sample"]
    print(f"\nRadGraph silver extractor vs gold, in-sample ({rg['documents']} reports):")
    for name in ("entities", "entity_spans", "relations"):
        print(
            f"  {name:13s} P {rg[name]['precision']:.3f} R {rg[name]['recall']:.3f} F1 {rg[name]['f1']:.3f} (gold"
            f" {rg[name]['gold']})"
        )
    print(f"  {rg['note']}")
