"""`--components` entries to the components the metrics load: exports, directories of exports, Hub ids of exports,
`KIND=PATH` or `KIND=NAME` for the authors' released weights, or `released` for each kind's default release. A training
run directory is refused with the command that exports it."""

from __future__ import annotations

from pathlib import Path

from .checkpoint import MANIFEST_NAME, component_key, component_kind, manifest_component, resolve_checkpoint
from .released import ARTEFACTS, DEFAULT_ARTEFACT, KINDS, fetch, identify


class ComponentError(ValueError):
    """A --components entry that names nothing loadable, or the wrong kind of thing."""


def discover_components(entries: list[str]) -> dict[str, str]:
    """--components entries -> {component key: path or catalogue name}. An entry is an export, a directory of exports,
    a Hub id of an export, KIND=PATH / KIND=NAME (a released artefact, or an export of that kind), or `released`."""
    found: dict[str, str] = {}
    for entry in entries:
        if entry == "released":
            found.update(DEFAULT_ARTEFACT)
            continue
        if "=" in entry:
            kind, value = entry.split("=", 1)
            if kind not in KINDS:
                raise ComponentError(
                    f"unknown component kind {kind!r} in {entry!r}; expected one of {', '.join(KINDS)}"
                )
            if value in ARTEFACTS:
                if ARTEFACTS[value].kind != kind:
                    raise ComponentError(f"{value} is a {ARTEFACTS[value].kind} release, not {kind}")
                found[kind] = value
                continue
            local = fetch(value)
            refuse_run_directory(local, entry)
            if identify(kind, local) == "released":
                found[kind] = str(local)
                continue
            component = manifest_component(local)
            if component_kind(component) != kind:
                raise ComponentError(f"{value} holds a {component} export, not a {kind} component")
            found[component_key(component)] = str(local)
            continue
        refuse_run_directory(Path(entry), entry)
        root = resolve_checkpoint(entry)
        candidates = (
            [root]
            if (root / MANIFEST_NAME).is_file()
            else sorted(p for p in root.iterdir() if (p / MANIFEST_NAME).is_file())
        )
        if not candidates:
            raise ComponentError(
                f"{entry} holds no exported checkpoint ({MANIFEST_NAME} not found); "
                "for released weights write KIND=PATH (see radmetrics weights list)"
            )
        for directory in candidates:
            component = manifest_component(directory)
            if not component:
                raise ComponentError(f"{directory}/{MANIFEST_NAME} names no component: it is not a radmetrics export")
            found[component_key(component)] = str(directory)
    return found


RUN_MANIFEST = "radmetrics_run.json"  # training.run_dir's manifest: inference reads the name, not the training package


def refuse_run_directory(path: Path, entry: str) -> None:
    """A training run directory, or a checkpoint inside one (final/, checkpoint-N/), is not an export: it has no
    manifest saying how to prompt or read it, and a GREEN run's final/ prompted as a released model answers nothing
    usable."""
    path = path.expanduser()
    if (path / MANIFEST_NAME).is_file():  # an export, wherever it was written
        return
    for run in (path, path.parent):
        if (run / RUN_MANIFEST).is_file():
            raise ComponentError(
                f"{entry} is a training run's {'directory' if run == path else 'checkpoint'}, not an"
                f" export; export it first: radmetrics export {run} --out EXPORT_DIR, then --components EXPORT_DIR"
            )
