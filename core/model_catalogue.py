"""The model catalogue: the published ``config.json`` files in ``model_configs/``.

``model_configs/<id>.json`` is a model's config as published; ``index.json``
gives its display name, the URL it came from, how it was obtained, and the
official parameter counts (with sources) that the tests check against.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from .config_reader import from_hf_config
from .models import ModelSpec

CATALOGUE_DIR = Path(__file__).with_name("model_configs")


@cache
def load_models(folder: Path = CATALOGUE_DIR) -> dict[str, ModelSpec]:
    """All catalogue models keyed by id, in ``index.json`` order."""
    index = json.loads((folder / "index.json").read_text())
    models = {}
    for model_id, meta in index.items():
        config = json.loads((folder / f"{model_id}.json").read_text())
        models[model_id] = from_hf_config(
            config,
            model_id=model_id,
            name=meta["name"],
            config_url=meta["config_url"],
            official_parameters=meta.get("official_parameters"),
            official_active_parameters=meta.get("official_active_parameters"),
        )
    return models


def get_model(model_id: str) -> ModelSpec:
    """The catalogue model ``model_id``.

    Raises:
        ValueError: unknown id; the message lists the accepted ids.
    """
    models = load_models()
    try:
        return models[model_id]
    except KeyError:
        raise ValueError(f"unknown model {model_id!r}; accepted: {', '.join(models)}") from None
