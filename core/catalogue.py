"""The session catalogue: the shipped models and accelerators plus what a session added.

The shipped entries come from ``core/model_configs/`` and ``core/hardware.json``
(parsed once per process).  A session adds its own — a model read from a pasted
``config.json``, an accelerator typed into a form or measured with ``python -m
core measure`` — to a :class:`Catalogue` value that the :class:`core.Scenario`
carries and hands to every copy of itself (:meth:`core.Scenario.clone`), so a pin,
a download or a sweep of a scenario that uses a session's own GPU resolves it.
Session-own entries are flagged as such (:meth:`Catalogue.is_own`); no id prefix
is parsed anywhere.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from types import MappingProxyType

from .hardware import Accelerator, load_catalogue
from .model_catalogue import load_models
from .models import ModelSpec

__all__ = ["Catalogue"]


@dataclass(frozen=True)
class Catalogue:
    """Models and accelerators by id: the shipped ones, then a session's own.

    Immutable: :meth:`with_model` and :meth:`with_gpu` return a new catalogue, so
    two scenarios sharing one never see each other's later additions.

    Attributes:
        own_models: a session's own models by id (read from a config.json).
        own_gpus: a session's own accelerators by id (a form, a measurement, a link).
    """

    own_models: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))
    own_gpus: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    # -- lookups ----------------------------------------------------------------------
    def model(self, model_id: str) -> ModelSpec:
        """The model ``model_id`` (a session's own first).

        Raises:
            ValueError: unknown id, listing the accepted ones.
        """
        found = self.own_models.get(model_id) or load_models().get(model_id)
        if found is None:
            raise ValueError(f"unknown model {model_id!r}; accepted: {', '.join(self.model_ids())}")
        return found

    def gpu(self, gpu_id: str) -> Accelerator:
        """The accelerator ``gpu_id`` (a session's own first).

        Raises:
            ValueError: unknown id, listing the accepted ones.
        """
        found = self.own_gpus.get(gpu_id) or load_catalogue().get(gpu_id)
        if found is None:
            raise ValueError(f"unknown GPU {gpu_id!r}; accepted: {', '.join(self.gpu_ids())}")
        return found

    def model_ids(self) -> list[str]:
        return [*load_models(), *(k for k in self.own_models if k not in load_models())]

    def gpu_ids(self) -> list[str]:
        return [*load_catalogue(), *(k for k in self.own_gpus if k not in load_catalogue())]

    def is_own(self, entry_id: str) -> bool:
        """True for a model or accelerator this session added (not shipped)."""
        return entry_id in self.own_models or entry_id in self.own_gpus

    # -- selector options ---------------------------------------------------------------
    def model_options(self) -> dict[str, str]:
        """Display name -> id, shipped first, a session's own marked "(your config)"."""
        options = {m.name: m.id for m in load_models().values()}
        options.update({f"{m.name} (your config)": m.id for m in self.own_models.values()})
        return options

    def gpu_options(self) -> dict[str, str]:
        """Display name -> id, shipped first, a session's own marked "(yours)"."""
        options = {g.name: g.id for g in load_catalogue().values() if g.id not in self.own_gpus}
        options.update({f"{g.name} (yours)": g.id for g in self.own_gpus.values()})
        return options

    # -- additions ------------------------------------------------------------------------
    def with_model(self, model: ModelSpec) -> tuple[Catalogue, ModelSpec]:
        """A catalogue that also holds ``model``, and the model as registered.

        A second model whose id is taken (a second paste of the same config name,
        or a shipped id) gets a numbered one (``config-x-2``), so selecting it is a
        change every view sees. The same model again (the same config pasted twice:
        equal in everything but its id and name) is the one registered before, not
        a copy named "(2)".
        """
        for own in self.own_models.values():  # this id, or a numbered copy of it ("config-x-2", not "config-x-l")
            if re.fullmatch(rf"{re.escape(model.id)}(-\d+)?", own.id):
                if dataclasses.replace(model, id=own.id, name=own.name) == own:
                    return self, own
        model_id, n = model.id, 2
        while model_id in self.own_models or model_id in load_models():
            model_id, n = f"{model.id}-{n}", n + 1
        if model_id != model.id:
            model = dataclasses.replace(model, id=model_id, name=f"{model.name} ({n - 1})")
        models = MappingProxyType({**self.own_models, model.id: model})
        return dataclasses.replace(self, own_models=models), model

    def with_gpu(self, gpu: Accelerator) -> Catalogue:
        """A catalogue that also holds ``gpu`` (replacing a session GPU of the same id)."""
        return dataclasses.replace(self, own_gpus=MappingProxyType({**self.own_gpus, gpu.id: gpu}))
