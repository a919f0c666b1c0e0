"""Word-level clinical entity atoms for the silver RaTE-NER and RadGraph-style labelers (data_builders) and the
semantic GREEN teacher's significance rule.

A sentence is tokenised the way RadGraph tokenises (words, numbers and punctuation apart) and each
lexicon hit becomes an `Atom`: an anatomy term, a location modifier ("left", "lower"), an abnormality
head ("effusion", "opacity"), a disease head ("pneumonia"), a normal descriptor ("clear", "in situ")
or a severity/size modifier ("small", "moderate"). Each atom carries the presence status of its clause
(present / uncertain / absent) from the cue-and-scope matcher the CheXpert-style rule labeler uses (negation.py).
The two taggers compose atoms differently: RaTE-NER merges "small left pleural effusion" into one
ABNORMALITY span, RadGraph keeps "small" (OBS), "left" and "pleural" (ANAT) apart and links them.
The lexicons are silver-quality by design; `radmetrics data silver` measures the RadGraph output
against the radgraph package's own gold examples.
"""

from __future__ import annotations

from dataclasses import dataclass

from .negation import classify_mention

ANATOMY = """
lung lungs pulmonary pleural pleura heart cardiac cardiomediastinal mediastinal mediastinum hilar hilum hila
hemidiaphragm hemidiaphragms diaphragm diaphragms costophrenic costophrenic_angle costophrenic_angles
costophrenic_sulcus thorax thoracic chest spine spinal vertebral vertebrae vertebra rib ribs clavicle clavicles
aorta aortic aortic_arch aortic_knob trachea tracheal bronchi bronchial airway airways lobe lobes base bases
apex apices apical_region zone zones lingula lingular perihilar parenchyma parenchymal interstitial interstitium
vascular vasculature vessels cardiopulmonary heart_size cardiac_silhouette mediastinal_silhouette
cardiomediastinal_silhouette silhouette contour contours soft_tissues soft_tissue osseous bony bones bone
skeletal structures abdomen abdominal upper_abdomen stomach bowel liver gallbladder shoulder shoulders humerus
humeral sternum sternal scapula thoracolumbar cervical lumbar neck axilla axillary subclavian jugular
atrium ventricle ventricular pericardial pericardium esophagus esophageal hiatal svc cavoatrial_junction
carina artery arteries vein veins retrocardiac subsegmental segmental pneumothoraces_region costovertebral \
paratracheal subpulmonic
"""
LOCATION_MODIFIERS = """
left right bilateral bilaterally upper lower middle mid basilar basal apical central peripheral lateral medial
anterior posterior inferior superior distal proximal biapical bibasilar bibasal
"""
ABNORMALITY = """
effusion effusions opacity opacities opacification consolidation consolidations edema atelectasis atelectatic
pneumothorax nodule nodules nodular mass masses infiltrate infiltrates infiltration cardiomegaly enlargement
enlarged scarring scar calcification calcifications calcified granuloma granulomas granulomata fracture
fractures deformity thickening hyperinflation hyperinflated hyperexpansion tortuous tortuosity ectatic
lesion lesions density densities degenerative_changes degenerative_change degenerative spondylosis osteophytes
kyphosis scoliosis collapse blunting elevation elevated widening widened prominence prominent congestion
hernia cyst cysts air_fluid_level emboli embolus thrombus wedge_deformity compression_deformity
abnormality abnormalities process findings finding changes hyperlucency lucency lucencies markings
infiltrative volume_loss low_lung_volumes low_volumes haziness streaky bronchiectasis cavitation cavity
adenopathy lymphadenopathy calcinosis sclerosis osteopenia demineralization
catheter tube tubes line lines pacemaker wires wire clips clip stent sternotomy hardware device devices
"""
DISEASE = """
pneumonia pneumonias emphysema copd tuberculosis tb cancer malignancy metastasis metastases metastatic
sarcoidosis chf congestive_heart_failure heart_failure fibrosis pulmonary_fibrosis bronchitis infection
aspiration asthma histoplasmosis neoplasm carcinoma lymphoma pneumonitis ards vascular_congestion
interstitial_lung_disease chronic_obstructive_pulmonary_disease pulmonary_hypertension hypertension
cardiomyopathy pericarditis sepsis
"""
NORMAL_DESCRIPTORS = """
normal clear unremarkable intact stable unchanged sharp in_situ within_normal_limits expanded well_expanded
well_aerated aerated patent midline maintained preserved appropriate satisfactory negative
"""
SEVERITY_MODIFIERS = """
mild mildly minimal minimally moderate moderately severe severely small tiny large trace slight slightly
acute chronic subtle extensive marked markedly diffuse focal patchy increased decreased new old healed
borderline
"""


def _entries(block: str) -> dict[tuple[str, ...], int]:
    return {tuple(entry.split("_")): len(entry.split("_")) for entry in block.split()}


KINDS = {  # kind -> entries; a longer entry wins over a shorter one at the same position
    "anatomy": _entries(ANATOMY),
    "location": _entries(LOCATION_MODIFIERS),
    "abnormality": _entries(ABNORMALITY),
    "disease": _entries(DISEASE),
    "normal": _entries(NORMAL_DESCRIPTORS),
    "severity": _entries(SEVERITY_MODIFIERS),
}
OBSERVATION_KINDS = ("abnormality", "disease", "normal", "severity")
_MAX_ENTRY = max(len(e) for entries in KINDS.values() for e in entries)


@dataclass(frozen=True)
class Atom:
    start: int  # first token, inclusive
    end: int  # last token, inclusive
    kind: str  # anatomy | location | abnormality | disease | normal | severity
    status: str  # present | uncertain | absent

    @property
    def is_observation(self) -> bool:
        return self.kind in OBSERVATION_KINDS


def _status(tokens: list[str], start: int, end: int) -> str:
    """Clause status of tokens[start:end+1] by the rule labeler's cue/scope matcher."""
    lowered = [t.lower() for t in tokens]
    prefix = " " + " ".join(lowered[:start])
    mention = " ".join(lowered[start : end + 1])
    text = prefix + (" " if start else "") + mention + " " + " ".join(lowered[end + 1 :]) + " "
    begin = len(prefix) + (1 if start else 0)
    code = classify_mention(text, begin, begin + len(mention))
    return {1: "present", 0: "absent", -1: "uncertain"}[code]


def find_atoms(tokens: list[str]) -> list[Atom]:
    """Greedy longest-match lexicon lookup, left to right; one atom per token at most."""
    lowered = [t.lower() for t in tokens]
    atoms: list[Atom] = []
    i = 0
    while i < len(tokens):
        best = None
        for width in range(min(_MAX_ENTRY, len(tokens) - i), 0, -1):
            key = tuple(lowered[i : i + width])
            kind = next((k for k, entries in KINDS.items() if key in entries), None)
            if kind:
                best = (width, kind)
                break
        if best is None:
            i += 1
            continue
        width, kind = best
        status = "present" if kind in ("anatomy", "location", "normal") else _status(tokens, i, i + width - 1)
        atoms.append(Atom(i, i + width - 1, kind, status))
        i += width
    return _drop_orphan_modifiers(atoms)


def _drop_orphan_modifiers(atoms: list[Atom]) -> list[Atom]:
    """A location modifier must precede anatomy or an observation within two tokens, and a severity
    modifier an observation head; otherwise ("left" in "left the room", "new" alone) it is not an entity."""
    kept = []
    for n, atom in enumerate(atoms):
        following = atoms[n + 1] if n + 1 < len(atoms) else None
        near = following is not None and following.start - atom.end <= 2
        if atom.kind == "location" and not (near and following.kind in ("anatomy", "location", *OBSERVATION_KINDS)):
            continue
        if atom.kind == "severity" and not (
            near and following.kind in ("abnormality", "disease", "severity", "anatomy", "location")
        ):
            continue
        kept.append(atom)
    return kept
